package instrument

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrImpossibleCount marks a module with a vector longer than the bytes
// that hold it, or a function with more than MaxLocals locals. wazero
// allocates a vector's entries before it reads them, so such a count in a
// module of a few bytes can make it allocate gigabytes: the rewriter
// refuses the module first.
var ErrImpossibleCount = errors.New("a count larger than the bytes that hold it")

// MaxLocals is the most locals (params excluded) a function may declare.
// wazero allocates a byte per local when it decodes a body.
const MaxLocals = 1 << 20

// Section ids of the binary format.
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secTable     = 4
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secElement   = 9
	secCode      = 10
	secData      = 11
	secDataCount = 12
	secTag       = 13
)

// rank is a section's place in the order the binary format requires.
func rank(id byte) int {
	switch id {
	case secTag:
		return 55 // after memory, before global
	case secDataCount:
		return 95 // after element, before code
	}
	return int(id) * 10
}

type section struct {
	id      byte
	payload []byte
}

// funcType is a type section entry, reduced to what the rewriter needs.
type funcType struct {
	params, results []uint8 // slots per value
	rawResults      []byte  // the results vector as encoded (count and types)
}

// module is what the rewriter knows of a module: its sections, and the
// index spaces that the code section refers to.
type module struct {
	sections []section
	types    []funcType
	funcs    []uint32 // type index of every function, imported ones first
	imported int      // imported functions
	globals  []uint8  // slots of every global, imported ones first
	exports  map[string]bool
	code     int // index in sections of the code section, -1 if none
}

func parseModule(b []byte) (*module, error) {
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		return nil, fmt.Errorf("not a WebAssembly binary (bad magic number)")
	}
	if v := binary.LittleEndian.Uint32(b[4:8]); v != 1 {
		return nil, fmt.Errorf("unsupported WebAssembly binary version %d", v)
	}
	m := &module{exports: map[string]bool{}, code: -1}
	r := reader{b: b, off: 8}
	for !r.eof() {
		start := r.off
		id := r.byte()
		size := r.u32()
		payload := r.bytes(int(size))
		if r.err != nil {
			return nil, fmt.Errorf("section at offset %d: %w", start, r.err)
		}
		if id > secTag {
			return nil, fmt.Errorf("section at offset %d: unknown section id %d", start, id)
		}
		if id != secCustom && len(m.sections) > 0 {
			for _, s := range m.sections {
				if s.id != secCustom && rank(s.id) >= rank(id) {
					return nil, fmt.Errorf("section %d at offset %d: out of order", id, start)
				}
			}
		}
		if id == secCode {
			m.code = len(m.sections)
		}
		m.sections = append(m.sections, section{id: id, payload: payload})
		p := reader{b: payload}
		if id != secCustom && id != secStart && id != secDataCount {
			if err := vectorFits(payload, id == secData); err != nil {
				return nil, fmt.Errorf("section %d at offset %d: %w", id, start, err)
			}
		}
		switch id {
		case secType:
			m.parseTypes(&p)
		case secImport:
			m.parseImports(&p)
		case secFunction:
			for n := p.u32(); n > 0 && p.err == nil; n-- {
				m.funcs = append(m.funcs, p.u32())
			}
		case secGlobal:
			for n := p.u32(); n > 0 && p.err == nil; n-- {
				_, slots := p.valType()
				p.byte() // mutability
				constExpr(&p, nil)
				m.globals = append(m.globals, slots)
			}
		case secElement:
			elements(&p, nil)
		case secExport:
			for n := p.u32(); n > 0 && p.err == nil; n-- {
				m.exports[p.name()] = true
				p.byte() // kind
				p.u32()  // index
			}
		default:
			continue // read only by wazero
		}
		if p.err == nil && p.off != len(p.b) {
			p.fail("%d bytes left over", len(p.b)-p.off)
		}
		if p.err != nil {
			return nil, fmt.Errorf("section %d at offset %d: %w", id, start, p.err)
		}
	}
	return m, nil
}

func (m *module) parseTypes(p *reader) {
	for n := p.u32(); n > 0 && p.err == nil; n-- {
		if form := p.byte(); form != 0x60 && p.err == nil {
			p.fail("type form 0x%x, want 0x60 (a function type)", form)
			return
		}
		var t funcType
		for k := p.count(); k > 0 && p.err == nil; k-- {
			_, s := p.valType()
			t.params = append(t.params, s)
		}
		start := p.off
		for k := p.count(); k > 0 && p.err == nil; k-- {
			_, s := p.valType()
			t.results = append(t.results, s)
		}
		if p.err == nil {
			t.rawResults = p.b[start:p.off]
		}
		m.types = append(m.types, t)
	}
}

func (m *module) parseImports(p *reader) {
	for n := p.u32(); n > 0 && p.err == nil; n-- {
		p.name()
		p.name()
		switch kind := p.byte(); kind {
		case 0: // function
			m.funcs = append(m.funcs, p.u32())
			m.imported++
		case 1: // table
			tableType(p, nil)
		case 2: // memory
			limits(p)
		case 3: // global
			_, slots := p.valType()
			p.byte()
			m.globals = append(m.globals, slots)
		case 4: // tag
			p.byte()
			p.u32()
		default:
			p.fail("import kind 0x%x", kind)
		}
	}
}

func limits(p *reader) {
	switch flag := p.byte(); flag {
	case 0, 2:
		p.u32()
	case 1, 3:
		p.u32()
		p.u32()
	default:
		p.fail("limits flag 0x%x", flag)
	}
}

func tableType(p *reader, pt *patcher) {
	init := false
	if len(p.b) > p.off && p.b[p.off] == 0x40 {
		p.byte()
		p.byte() // reserved 0x00
		init = true
	}
	p.valType()
	limits(p)
	if init {
		constExpr(p, pt)
	}
}

// constExpr skips a constant expression: the instructions wazero allows
// in one, up to its end. With a patcher, it renumbers ref.func.
func constExpr(p *reader, pt *patcher) {
	for p.err == nil {
		switch op := p.byte(); op {
		case 0x0b: // end
			return
		case 0x41: // i32.const
			p.sleb(5)
		case 0x42: // i64.const
			p.sleb(10)
		case 0x43:
			p.bytes(4)
		case 0x44:
			p.bytes(8)
		case 0x23: // global.get
			p.u32()
		case 0xd2: // ref.func
			funcRef(p, pt)
		case 0xd0: // ref.null
			refNullType(p)
		case 0x6a, 0x6b, 0x6c, 0x7c, 0x7d, 0x7e: // extended-const arithmetic
		case 0xfd:
			if sub := p.byte(); sub != 0x0c {
				p.fail("vector opcode 0x%x in a constant expression", sub)
			}
			p.bytes(16)
		default:
			p.fail("opcode 0x%x in a constant expression", op)
		}
	}
}

// refNullType skips ref.null's heap type: one byte for an abstract type,
// else a type index.
func refNullType(p *reader) {
	if p.off < len(p.b) {
		switch p.b[p.off] {
		case 0x70, 0x6f, 0x69:
			p.off++
			return
		}
	}
	p.u32()
}

// encode assembles a module from its sections.
func encode(sections []section) []byte {
	n := 8
	for _, s := range sections {
		n += 1 + binary.MaxVarintLen32 + len(s.payload)
	}
	out := make([]byte, 0, n)
	out = append(out, "\x00asm\x01\x00\x00\x00"...)
	for _, s := range sections {
		out = append(out, s.id)
		out = binary.AppendUvarint(out, uint64(len(s.payload)))
		out = append(out, s.payload...)
	}
	return out
}

// appendEntry returns the payload of a vector section (count, entries)
// with one more entry.
func appendEntry(payload, entry []byte) []byte {
	r := reader{b: payload}
	n := uint32(0)
	if len(payload) > 0 {
		n = r.u32()
	}
	out := binary.AppendUvarint(make([]byte, 0, len(payload)+len(entry)+5), uint64(n)+1)
	out = append(out, payload[r.off:]...)
	return append(out, entry...)
}

// withEntry adds entry to the section with id, creating the section in
// its place if the module has none.
func withEntry(sections []section, id byte, entry []byte) []section {
	for i, s := range sections {
		if s.id == id {
			sections[i].payload = appendEntry(s.payload, entry)
			return sections
		}
	}
	at := len(sections)
	for i, s := range sections {
		if s.id != secCustom && rank(s.id) > rank(id) {
			at = i
			break
		}
	}
	// Place it after any custom sections that follow the section before
	// it, where a producer would have put it.
	out := make([]section, 0, len(sections)+1)
	out = append(out, sections[:at]...)
	out = append(out, section{id: id, payload: appendEntry(nil, entry)})
	return append(out, sections[at:]...)
}

// count reads a vector's length, which must fit in the bytes left.
func (r *reader) count() uint32 {
	n := r.u32()
	if r.err == nil && int64(n) > int64(len(r.b)-r.off) {
		r.err = fmt.Errorf("%w: %d entries in %d bytes", ErrImpossibleCount, n, len(r.b)-r.off)
		return 0
	}
	return n
}

// elements checks the vectors inside element segments. With a patcher,
// it renumbers their functions.
func elements(r *reader, pt *patcher) {
	for n := r.count(); n > 0 && r.err == nil; n-- {
		flag := r.u32()
		if flag > 7 {
			r.fail("element segment flag %d", flag)
			return
		}
		if flag&2 != 0 && flag&1 == 0 { // 2, 6: a table index
			r.u32()
		}
		if flag&1 == 0 { // 0, 2, 4, 6: an offset
			constExpr(r, pt)
		}
		if flag&3 != 0 { // 1, 2, 3, 5, 6, 7: an element kind or type
			if flag&4 == 0 {
				r.byte()
			} else {
				r.valType()
			}
		}
		for k := r.count(); k > 0 && r.err == nil; k-- {
			if flag&4 == 0 {
				funcRef(r, pt)
			} else {
				constExpr(r, pt)
			}
		}
	}
}

// vectorFits checks that the section's entry count is not more than its
// bytes (every entry takes at least one), and, in the data section, that
// every segment's length fits in what is left.
func vectorFits(payload []byte, data bool) error {
	r := reader{b: payload}
	n := r.u32()
	if r.err != nil {
		return r.err
	}
	if int64(n) > int64(len(payload)-r.off) {
		return fmt.Errorf("%w: %d entries in %d bytes", ErrImpossibleCount, n, len(payload)-r.off)
	}
	for ; data && n > 0 && r.err == nil; n-- {
		switch flag := r.u32(); flag {
		case 0:
			constExpr(&r, nil)
		case 1:
		case 2:
			r.u32()
			constExpr(&r, nil)
		default:
			return fmt.Errorf("data segment flag %d", flag)
		}
		size := r.u32()
		if r.err == nil && int64(size) > int64(len(payload)-r.off) {
			return fmt.Errorf("%w: a data segment of %d bytes in %d", ErrImpossibleCount, size, len(payload)-r.off)
		}
		r.bytes(int(size))
	}
	return r.err
}
