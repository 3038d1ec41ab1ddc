package instrument

// Stateless reports whether a run of mod can change nothing of its
// instance but its memory and the globals Rewrite adds: mod has no start
// function, no tables (defined or imported) and no element segments, no
// data count section (without which validation refuses memory.init and
// data.drop, so no run can drop a data segment), no exception tags, and
// no mutable global. Every instance of such a module also starts the
// same, from its declarations alone, if nothing else runs at
// instantiation (no _initialize, which the caller checks). An instance of
// it can be put back in its initial state by restoring its memory and the
// added globals: see vm/wasm's resetPlan.
//
// A module it cannot read is not stateless.
func Stateless(mod []byte) bool {
	if len(mod) < 8 || string(mod[:4]) != "\x00asm" {
		return false
	}
	r := reader{b: mod, off: 8}
	for !r.eof() {
		id := r.byte()
		payload := r.bytes(int(r.u32()))
		if r.err != nil {
			return false
		}
		p := reader{b: payload}
		switch id {
		case secStart, secTable, secElement, secDataCount, secTag:
			return false
		case secImport:
			for n := p.u32(); n > 0 && p.err == nil; n-- {
				p.name()
				p.name()
				if kind := p.byte(); kind != 0 { // anything but a function
					return false
				}
				p.u32()
			}
		case secGlobal:
			for n := p.u32(); n > 0 && p.err == nil; n-- {
				p.valType()
				if p.byte() != 0 { // mutable
					return false
				}
				constExpr(&p, nil)
			}
		}
		if p.err != nil {
			return false
		}
	}
	return r.err == nil
}
