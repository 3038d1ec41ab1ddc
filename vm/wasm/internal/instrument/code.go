package instrument

import (
	"fmt"
	"sort"
)

// frame is an open block (or the function's own) while walking a body.
type frame struct {
	base        int // operand stack depth (values) at entry, params popped
	unreachable bool
	loop        bool
	params      []uint8
	results     []uint8
	start       int // offset of the block's opcode
	check       int // index in edits of a loop's check, -1 for other blocks
	heavy       int // fuel charged for the bulk instructions in a loop's body
}

// Kinds of edit.
const (
	editExit  = iota // subtract the frame cost before a return or tail call
	editCheck        // the stop check, at a loop header
	editFunc         // a function index, renumbered
)

// edit is a change to a body at an offset, in the order of offsets.
type edit struct {
	kind int
	at   int    // where it applies
	end  int    // editFunc: the end of the index replaced
	val  uint32 // editCheck: the fuel the loop's body costs; editFunc: the new index
}

// walker decodes one function body and bounds its operand stack: it
// tracks the slots of every value an instruction pushes, the way a
// validator tracks types, and keeps the highest total.
type walker struct {
	m      *module
	r      reader
	params []uint8
	groups []localGroup
	stack  []uint8 // slots of each value on the operand stack
	height int     // sum of stack
	max    int
	frames []frame
	edits  []edit
	heavy  int // fuel charged for the bulk instructions outside any loop
}

type localGroup struct {
	end   uint64 // index of the first local after the group, params included
	slots uint8
}

func (w *walker) push(s uint8) {
	w.stack = append(w.stack, s)
	w.height += int(s)
	w.max = max(w.max, w.height)
}

func (w *walker) pushAll(ss []uint8) {
	for _, s := range ss {
		w.push(s)
	}
}

// pop removes the top value and returns its slots, or 0 if the current
// block has none (unreachable code, or a body wazero will refuse).
func (w *walker) pop() uint8 {
	f := &w.frames[len(w.frames)-1]
	n := len(w.stack)
	if n <= f.base {
		return 0
	}
	s := w.stack[n-1]
	w.stack = w.stack[:n-1]
	w.height -= int(s)
	return s
}

func (w *walker) popN(n int) {
	for ; n > 0; n-- {
		w.pop()
	}
}

// truncate drops the values of the current block.
func (w *walker) truncate() {
	f := &w.frames[len(w.frames)-1]
	for len(w.stack) > f.base {
		w.pop()
	}
}

func (w *walker) unreachable() {
	w.truncate()
	w.frames[len(w.frames)-1].unreachable = true
}

func (w *walker) local(i uint32) uint8 {
	if int(i) < len(w.params) {
		return w.params[i]
	}
	k := sort.Search(len(w.groups), func(k int) bool { return w.groups[k].end > uint64(i) })
	if k == len(w.groups) {
		w.r.fail("local %d out of range", i)
		return 1
	}
	return w.groups[k].slots
}

func (w *walker) global(i uint32) uint8 {
	if int(i) >= len(w.m.globals) {
		w.r.fail("global %d out of range", i)
		return 1
	}
	return w.m.globals[i]
}

func (w *walker) typ(i uint32) funcType {
	if int(i) >= len(w.m.types) {
		w.r.fail("type %d out of range", i)
		return funcType{}
	}
	return w.m.types[i]
}

func (w *walker) funcType(f uint32) funcType {
	if int(f) >= len(w.m.funcs) {
		w.r.fail("function %d out of range", f)
		return funcType{}
	}
	return w.typ(w.m.funcs[f])
}

var (
	oneSlot  = []uint8{1}
	twoSlots = []uint8{2}
)

// blockType reads a block type and returns its params and results.
func (w *walker) blockType() (params, results []uint8) {
	switch v := w.r.sleb(5); {
	case v == -64: // 0x40: no values
		return nil, nil
	case v == -5: // v128
		return nil, twoSlots
	case v == -1 || v == -2 || v == -3 || v == -4 || v == -16 || v == -17 || v == -23:
		return nil, oneSlot // i32, i64, f32, f64, funcref, externref, exnref
	case v == -29 || v == -28: // (ref null ht), (ref ht)
		w.r.sleb(5)
		return nil, oneSlot
	case v >= 0 && v < 1<<32:
		t := w.typ(uint32(v))
		return t.params, t.results
	default:
		w.r.fail("invalid block type %d", v)
		return nil, nil
	}
}

func (w *walker) memarg() {
	w.r.u32()
	w.r.u32()
}

// walk decodes the body from the reader's offset to the function's final
// end and returns that end's offset.
func (w *walker) walk(results []uint8) (int, error) {
	w.frames = append(w.frames[:0], frame{results: results})
	r := &w.r
	for r.err == nil {
		at := r.off
		op := r.byte()
		if r.err != nil {
			break
		}
		if e := plain[op]; e.ok {
			if e.imm == immMemarg {
				w.memarg()
			}
			w.popN(int(e.pops))
			if e.push != pushNone {
				w.push(e.push)
			}
			continue
		}
		switch op {
		case 0x00: // unreachable
			w.unreachable()
		case 0x01: // nop
		case 0x02, 0x03, 0x04: // block, loop, if
			params, results := w.blockType()
			if op == 0x04 {
				w.pop()
			}
			w.popN(len(params))
			check := -1
			if op == 0x03 {
				check = len(w.edits)
				w.edits = append(w.edits, edit{kind: editCheck, at: r.off})
			}
			w.frames = append(w.frames, frame{base: len(w.stack), loop: op == 0x03, params: params, results: results, start: at, check: check})
			w.pushAll(params)
		case 0x05: // else
			w.truncate()
			f := &w.frames[len(w.frames)-1]
			f.unreachable = false
			w.pushAll(f.params)
		case 0x0b: // end
			w.truncate()
			f := w.frames[len(w.frames)-1]
			w.frames = w.frames[:len(w.frames)-1]
			if len(w.frames) == 0 {
				return at, nil
			}
			if f.check >= 0 {
				w.edits[f.check].val = fuelCost(at - f.start + f.heavy)
			}
			w.pushAll(f.results)
		case 0x0c: // br
			r.u32()
			w.unreachable()
		case 0x0d: // br_if
			r.u32()
			w.pop()
		case 0x0e: // br_table
			for n := r.u32(); n > 0 && r.err == nil; n-- {
				r.u32()
			}
			r.u32()
			w.unreachable()
		case 0x0f: // return
			w.exit(at)
			w.unreachable()
		case 0x10: // call
			t := w.funcType(w.funcIndex())
			w.popN(len(t.params))
			w.pushAll(t.results)
		case 0x11: // call_indirect
			t := w.typ(r.u32())
			r.u32() // table
			w.pop()
			w.popN(len(t.params))
			w.pushAll(t.results)
		case 0x12: // return_call
			w.exit(at)
			w.funcIndex()
			w.unreachable()
		case 0x13: // return_call_indirect
			w.exit(at)
			r.u32()
			r.u32()
			w.unreachable()
		case 0x1a: // drop
			w.pop()
		case 0x1b: // select
			w.pop()
			w.pop()
			w.push(max(w.pop(), 1))
		case 0x1c: // select t
			if n := r.byte(); n != 1 && r.err == nil {
				r.fail("select with %d types", n)
			}
			_, s := r.valType()
			w.popN(3)
			w.push(s)
		case 0x20: // local.get
			w.push(w.local(r.u32()))
		case 0x21: // local.set
			r.u32()
			w.pop()
		case 0x22: // local.tee
			s := w.local(r.u32())
			w.pop()
			w.push(s)
		case 0x23: // global.get
			w.push(w.global(r.u32()))
		case 0x24: // global.set
			r.u32()
			w.pop()
		case 0x25: // table.get
			r.u32()
			w.pop()
			w.push(1)
		case 0x26: // table.set
			r.u32()
			w.popN(2)
		case 0x3f: // memory.size
			r.u32()
			w.push(1)
		case 0x40: // memory.grow
			r.u32()
			w.charge(growFuel)
			w.pop()
			w.push(1)
		case 0x41: // i32.const
			r.sleb(5)
			w.push(1)
		case 0x42: // i64.const
			r.sleb(10)
			w.push(1)
		case 0x43: // f32.const
			r.bytes(4)
			w.push(1)
		case 0x44: // f64.const
			r.bytes(8)
			w.push(1)
		case 0xd0: // ref.null
			refNullType(r)
			w.push(1)
		case 0xd2: // ref.func
			w.funcIndex()
			w.push(1)
		case 0xfc:
			w.misc(r.u32())
		case 0xfd:
			sub := r.byte()
			e := vector[sub]
			if !e.ok {
				r.fail("unknown vector opcode 0xfd 0x%x at offset %d", sub, at)
				break
			}
			switch e.imm {
			case immMemarg:
				w.memarg()
			case immLane:
				r.byte()
			case immMemLane:
				w.memarg()
				r.byte()
			case imm16:
				r.bytes(16)
			}
			w.popN(int(e.pops))
			if e.push != pushNone {
				w.push(e.push)
			}
		default:
			r.fail("unsupported opcode 0x%x at offset %d", op, at)
		}
	}
	if r.err == errEOF {
		return 0, fmt.Errorf("the body ends before its final end")
	}
	return 0, r.err
}

// charge counts an instruction whose time grows with its operands or the
// memory's size as fuel bytes of code in the innermost loop around it.
func (w *walker) charge(fuel int) {
	for i := len(w.frames) - 1; i > 0; i-- {
		if w.frames[i].loop {
			w.frames[i].heavy += fuel
			return
		}
	}
	w.heavy += fuel
}

func (w *walker) exit(at int) {
	w.edits = append(w.edits, edit{kind: editExit, at: at})
}

// funcIndex reads a function index and, if the inserted import moves it,
// records its new value.
func (w *walker) funcIndex() uint32 {
	at := w.r.off
	f := w.r.u32()
	if w.r.err == nil && f >= uint32(w.m.imported) {
		w.edits = append(w.edits, edit{kind: editFunc, at: at, end: w.r.off, val: f + 1})
	}
	return f
}

// misc decodes the rest of a 0xfc-prefixed instruction.
func (w *walker) misc(sub uint32) {
	r := &w.r
	if sub == 0x08 || sub >= 0x0a && sub <= 0x0c || sub == 0x0e || sub == 0x11 {
		w.charge(heavyFuel)
	}
	switch {
	case sub <= 0x07: // saturating truncations
		w.pop()
		w.push(1)
	case sub == 0x08: // memory.init data mem
		r.u32()
		r.u32()
		w.popN(3)
	case sub == 0x09, sub == 0x0d: // data.drop, elem.drop
		r.u32()
	case sub == 0x0a, sub == 0x0c, sub == 0x0e: // memory.copy, table.init, table.copy: two indices
		r.u32()
		r.u32()
		w.popN(3)
	case sub == 0x0b, sub == 0x11: // memory.fill, table.fill
		r.u32()
		w.popN(3)
	case sub == 0x0f: // table.grow
		w.charge(growFuel)
		r.u32()
		w.popN(2)
		w.push(1)
	case sub == 0x10: // table.size
		r.u32()
		w.push(1)
	default:
		r.fail("unknown opcode 0xfc %d", sub)
	}
}

// localsHeader reads a body's local declarations into w.groups and
// returns the total slots of the locals.
func (w *walker) localsHeader() uint64 {
	r := &w.r
	w.groups = w.groups[:0]
	idx := uint64(len(w.params))
	var slots uint64
	for n := r.u32(); n > 0 && r.err == nil; n-- {
		count := r.u32()
		_, s := r.valType()
		if count == 0 {
			continue
		}
		idx += uint64(count)
		if idx-uint64(len(w.params)) > MaxLocals {
			r.err = fmt.Errorf("%w: more than %d locals", ErrImpossibleCount, MaxLocals)
			return 0
		}
		slots += uint64(count) * uint64(s)
		w.groups = append(w.groups, localGroup{end: idx, slots: s})
	}
	return slots
}

// appendSleb appends v as a signed LEB128.
func appendSleb(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
