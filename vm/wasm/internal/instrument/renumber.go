package instrument

import (
	"encoding/binary"
	"fmt"
)

// patcher copies a payload while a reader walks it, replacing the
// function indices it is shown.
type patcher struct {
	r        *reader
	imported uint32
	out      []byte
	last     int
}

// funcRef reads a function index; with a patcher, it also renumbers it.
func funcRef(r *reader, pt *patcher) uint32 {
	if pt == nil {
		return r.u32()
	}
	at := r.off
	f := r.u32()
	if r.err == nil && f >= pt.imported {
		pt.out = append(pt.out, r.b[pt.last:at]...)
		pt.out = binary.AppendUvarint(pt.out, uint64(f)+1)
		pt.last = r.off
	}
	return f
}

func (pt *patcher) done() []byte { return append(pt.out, pt.r.b[pt.last:]...) }

// renumber returns the sections with every function index outside the
// code section moved up by one past the module's imported functions:
// exports, the start function, element segments, the constant
// expressions of globals and tables, and the name section.
func (m *module) renumber(sections []section) ([]section, error) {
	out := sections[:0]
	for _, s := range sections {
		r := reader{b: s.payload}
		pt := &patcher{r: &r, imported: uint32(m.imported)}
		switch s.id {
		case secExport:
			for n := r.u32(); n > 0 && r.err == nil; n-- {
				r.name()
				if kind := r.byte(); kind == 0 {
					funcRef(&r, pt)
				} else {
					r.u32()
				}
			}
		case secStart:
			funcRef(&r, pt)
		case secElement:
			elements(&r, pt)
		case secGlobal:
			for n := r.u32(); n > 0 && r.err == nil; n-- {
				r.valType()
				r.byte()
				constExpr(&r, pt)
			}
		case secTable:
			for n := r.u32(); n > 0 && r.err == nil; n-- {
				tableType(&r, pt)
			}
		case secCustom:
			if r.name() == "name" && r.err == nil {
				p, ok := m.names(s.payload, r.off)
				if !ok {
					continue // names only help a stack trace: better none than wrong ones
				}
				s.payload = p
			}
			out = append(out, s)
			continue
		default:
			out = append(out, s)
			continue
		}
		if r.err != nil {
			return nil, fmt.Errorf("section %d: %w", s.id, r.err)
		}
		s.payload = pt.done()
		out = append(out, s)
	}
	return out, nil
}

// names renumbers the name section's function names (subsection 1),
// local names (2) and label names (3), which are keyed by function
// index. ok is false if the section does not decode.
func (m *module) names(payload []byte, off int) ([]byte, bool) {
	r := reader{b: payload, off: off}
	out := append([]byte(nil), payload[:off]...)
	for !r.eof() {
		id := r.byte()
		sub := r.bytes(int(r.u32()))
		if r.err != nil {
			return nil, false
		}
		if id == 1 || id == 2 || id == 3 {
			sr := reader{b: sub}
			pt := &patcher{r: &sr, imported: uint32(m.imported)}
			for n := sr.u32(); n > 0 && sr.err == nil; n-- {
				funcRef(&sr, pt)
				if id == 1 {
					sr.name()
					continue
				}
				for k := sr.u32(); k > 0 && sr.err == nil; k-- {
					sr.u32()
					sr.name()
				}
			}
			if sr.err != nil || sr.off != len(sub) {
				return nil, false
			}
			sub = pt.done()
		}
		out = append(out, id)
		out = binary.AppendUvarint(out, uint64(len(sub)))
		out = append(out, sub...)
	}
	return out, r.err == nil
}
