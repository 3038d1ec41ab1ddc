package instrument

import (
	"encoding/binary"
	"fmt"
	"strconv"
)

// CounterExport is the name under which a rewritten module exports its
// stack counter, unless the module already exports something by that
// name (then a numbered variant: Result.Counter says which).
const CounterExport = "__cube_stack"

// StopExport is the name under which a rewritten module exports its stop
// flag (or a numbered variant: Result.Stop says which).
const StopExport = "__cube_stop"

// The function a rewritten module imports, of type [] -> [i32]. Its code
// calls it when its fuel runs out and when the stop flag is set; it must
// end the guest (panic, which wazero turns into a trap) if the run is to
// stop, and otherwise return the fuel to go on with, normally Fuel.
const (
	YieldModule = "cube_instrument"
	YieldName   = "yield"
)

// Fuel is what a yield gives: about that many bytes of the module's code
// run between two yields. At a loop header the code charges the bytes of
// the loop's body, at a function's entry those of the function.
const Fuel = 1 << 20

// checkFuel is added to every charge for the check's own code.
const checkFuel = 16

// heavyFuel is what a bulk instruction costs (memory.fill, memory.copy,
// memory.init and their table counterparts), whatever its size: so many
// run between two yields at most. A small memory.copy is common in
// compiled C and Rust; a large one is at most a memory's size.
const heavyFuel = 4 << 10

// growFuel is what memory.grow and table.grow cost: rare in real code,
// they may copy the whole memory.
const growFuel = Fuel / 16

func fuelCost(bytes int) uint32 { return uint32(min(bytes+checkFuel, Fuel)) }

// StopValue is what the host stores in the stop flag to stop the guest.
const StopValue = 0xffffffff

// FrameSlots is added to every function's frame cost, on top of its
// params, locals and operand stack, for what the engine keeps per call
// (return address, saved registers, spill area). Calibrated on wazero
// 1.12's compiler on amd64: see the package documentation.
const FrameSlots = 8

// MaxBudget is the largest budget Rewrite takes: frame costs are summed
// in an i32, and budget plus the largest cost must not overflow it.
const MaxBudget = 1 << 30

// Result is a rewritten module.
type Result struct {
	Module  []byte
	Counter string // export name of the i32 global holding the slots in use
	Stop    string // export name of the i32 stop flag
	Yield   uint32 // index among the imported functions of the yield import
}

// Rewrite returns mod with every function instrumented.
//
// On entry to every function and at every loop header, the code checks
// a stop flag (a new exported mutable i32 global, 0 at the start) and
// charges fuel (a new i32 global): if the flag is not 0 or the fuel is
// spent, it calls the imported function YieldModule.YieldName, which may
// end the guest and otherwise returns new fuel, and then traps with
// unreachable if the flag is set. A host sets the flag (to StopValue)
// from any goroutine to stop a run at its next check. The yields are
// where wazero's compiled code, which Go cannot preempt, comes back to Go
// so that the collector and the scheduler can stop it, and where the
// host can end a guest it cannot reach the flag of (a start function,
// which runs before the module is handed over).
//
// On entry every function also adds its frame cost (in 8-byte slots) to
// a new mutable i32 global and traps with unreachable if the total passes
// budget; it subtracts the cost again on every way out (its final end, a
// branch to its outermost label, return, return_call and
// return_call_indirect). After a trap, the global still holds more than
// budget exactly when the budget was the cause.
//
// The yield import comes after the module's own function imports, so the
// module's own functions move up by one: every reference to them (calls,
// ref.func, exports, the start function, element segments, constant
// expressions, the name section) is renumbered. The globals, a type (for
// the import, and for a block with several results, if the module has
// none that fits) and the exports are appended.
//
// # Errors
//
// Rewrite decodes every instruction and fails on bytes it cannot decode;
// it validates only what it needs to, leaving the rest to wazero. Any
// module wazero 1.12 accepts with its 2.0 core features (and tail calls)
// rewrites to one wazero accepts.
func Rewrite(mod []byte, budget uint32) (Result, error) {
	budget = min(budget, MaxBudget)
	m, err := parseModule(mod)
	if err != nil {
		return Result{}, err
	}
	counter, stop := exportName(m, CounterExport), exportName(m, StopExport)
	g := uint32(len(m.globals))
	rw := &rewriter{m: m, counter: g, stop: g + 1, fuel: g + 2, yield: uint32(m.imported),
		budget: budget, blockTypes: map[string]uint32{}}
	rw.yieldType = rw.typeIndex([]byte{0x01, 0x7f})
	sections := append([]section(nil), m.sections...)
	if m.code >= 0 {
		code, err := rw.code(m.sections[m.code].payload)
		if err != nil {
			return Result{}, fmt.Errorf("code section: %w", err)
		}
		sections[m.code].payload = code
	} else if n := len(m.funcs) - m.imported; n > 0 {
		return Result{}, fmt.Errorf("%d functions declared but no code section", n)
	}
	sections, err = m.renumber(sections)
	if err != nil {
		return Result{}, err
	}
	for _, t := range rw.newTypes {
		sections = withEntry(sections, secType, t)
	}
	imp := appendName(nil, YieldModule)
	imp = appendName(imp, YieldName)
	imp = append(imp, 0x00) // a function
	imp = binary.AppendUvarint(imp, uint64(rw.yieldType))
	sections = withEntry(sections, secImport, imp)
	sections = withEntry(sections, secGlobal, []byte{0x7f, 0x01, 0x41, 0x00, 0x0b})                     // counter: (mut i32) (i32.const 0)
	sections = withEntry(sections, secGlobal, []byte{0x7f, 0x01, 0x41, 0x00, 0x0b})                     // stop
	sections = withEntry(sections, secGlobal, append(appendSleb([]byte{0x7f, 0x01, 0x41}, Fuel), 0x0b)) // fuel
	sections = withEntry(sections, secExport, exportEntry(counter, rw.counter))
	sections = withEntry(sections, secExport, exportEntry(stop, rw.stop))
	return Result{Module: encode(sections), Counter: counter, Stop: stop, Yield: rw.yield}, nil
}

func exportName(m *module, base string) string {
	name := base
	for i := 1; m.exports[name]; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	m.exports[name] = true
	return name
}

func appendName(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func exportEntry(name string, global uint32) []byte {
	e := appendName(nil, name)
	e = append(e, 0x03) // a global
	return binary.AppendUvarint(e, uint64(global))
}

type rewriter struct {
	m                   *module
	counter, stop, fuel uint32 // the new globals
	yield, yieldType    uint32
	budget              uint32
	blockTypes          map[string]uint32 // results encoding -> index of a type [] -> results
	newTypes            [][]byte
	w                   walker
	buf                 []byte
}

func (rw *rewriter) code(p []byte) ([]byte, error) {
	r := reader{b: p}
	n := r.u32()
	if r.err != nil {
		return nil, r.err
	}
	if want := len(rw.m.funcs) - rw.m.imported; int64(n) != int64(want) {
		return nil, fmt.Errorf("%d bodies for %d functions", n, want)
	}
	rw.w.m = rw.m
	out := binary.AppendUvarint(make([]byte, 0, len(p)+int(n)*80), uint64(n))
	for i := 0; i < int(n); i++ {
		size := r.u32()
		body := r.bytes(int(size))
		if r.err != nil {
			return nil, fmt.Errorf("function %d: %w", rw.m.imported+i, r.err)
		}
		tt := rw.m.funcs[rw.m.imported+i]
		if int(tt) >= len(rw.m.types) {
			return nil, fmt.Errorf("function %d: type %d out of range", rw.m.imported+i, tt)
		}
		b, err := rw.body(body, rw.m.types[tt])
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", rw.m.imported+i, err)
		}
		out = binary.AppendUvarint(out, uint64(len(b)))
		out = append(out, b...)
	}
	if r.off != len(p) {
		return nil, fmt.Errorf("%d bytes after the last body", len(p)-r.off)
	}
	return out, nil
}

// body rewrites one function body; the result is valid until the next call.
func (rw *rewriter) body(b []byte, t funcType) ([]byte, error) {
	w := &rw.w
	w.r = reader{b: b}
	w.params = t.params
	w.stack, w.height, w.max, w.edits, w.heavy = w.stack[:0], 0, 0, w.edits[:0], 0
	locals := w.localsHeader()
	if w.r.err != nil {
		return nil, fmt.Errorf("locals: %w", w.r.err)
	}
	start := w.r.off
	end, err := w.walk(t.results)
	if err != nil {
		return nil, err
	}
	if end != len(b)-1 {
		return nil, fmt.Errorf("%d bytes after the final end", len(b)-1-end)
	}
	cost := uint64(FrameSlots) + 2 + locals + uint64(w.max) // 2: the values the checks push
	for _, s := range t.params {
		cost += uint64(s)
	}
	cost = min(cost, MaxBudget)

	o := append(rw.buf[:0], b[:start]...)
	o = rw.check(o, fuelCost(len(b)+w.heavy))
	o = rw.adjust(o, cost, 0x6a) // i32.add
	o = append(o, 0x23)          // global.get; i32.const budget; i32.gt_u; if unreachable end
	o = binary.AppendUvarint(o, uint64(rw.counter))
	o = append(o, 0x41)
	o = appendSleb(o, int64(rw.budget))
	o = append(o, 0x4b, 0x04, 0x40, 0x00, 0x0b)
	o = append(o, 0x02) // block with the function's results: a branch to the function's label lands here
	o = rw.blockType(o, t)
	last := start
	for _, e := range w.edits {
		o = append(o, b[last:e.at]...)
		last = e.at
		switch e.kind {
		case editExit:
			o = rw.adjust(o, cost, 0x6b) // i32.sub
		case editCheck:
			o = rw.check(o, e.val)
		case editFunc:
			o = binary.AppendUvarint(o, uint64(e.val))
			last = e.end
		}
	}
	o = append(o, b[last:end]...)
	o = append(o, 0x0b)
	o = rw.adjust(o, cost, 0x6b)
	o = append(o, 0x0b)
	rw.buf = o
	return o, nil
}

// check appends the stop check, charging fuel:
//
//	global.get fuel; i32.const fuel; i32.sub; global.set fuel
//	global.get fuel; global.get stop; i32.or; i32.const 0; i32.lt_s
//	if call yield; global.set fuel; global.get stop; if unreachable end end
//
// It leaves the operand stack as it found it, and pushes two values at
// most on it.
func (rw *rewriter) check(o []byte, fuel uint32) []byte {
	o = append(o, 0x23)
	o = binary.AppendUvarint(o, uint64(rw.fuel))
	o = append(o, 0x41)
	o = appendSleb(o, int64(fuel))
	o = append(o, 0x6b, 0x24)
	o = binary.AppendUvarint(o, uint64(rw.fuel))
	o = append(o, 0x23)
	o = binary.AppendUvarint(o, uint64(rw.fuel))
	o = append(o, 0x23)
	o = binary.AppendUvarint(o, uint64(rw.stop))
	o = append(o, 0x72, 0x41, 0x00, 0x48, 0x04, 0x40, 0x10)
	o = binary.AppendUvarint(o, uint64(rw.yield))
	o = append(o, 0x24)
	o = binary.AppendUvarint(o, uint64(rw.fuel))
	o = append(o, 0x23)
	o = binary.AppendUvarint(o, uint64(rw.stop))
	return append(o, 0x04, 0x40, 0x00, 0x0b, 0x0b)
}

// adjust appends global.get; i32.const cost; op; global.set.
func (rw *rewriter) adjust(o []byte, cost uint64, op byte) []byte {
	o = append(o, 0x23)
	o = binary.AppendUvarint(o, uint64(rw.counter))
	o = append(o, 0x41)
	o = appendSleb(o, int64(cost))
	o = append(o, op, 0x24)
	return binary.AppendUvarint(o, uint64(rw.counter))
}

// blockType appends the block type [] -> t.results.
func (rw *rewriter) blockType(o []byte, t funcType) []byte {
	switch len(t.results) {
	case 0:
		return append(o, 0x40)
	case 1:
		r := reader{b: t.rawResults}
		r.u32() // the count, possibly padded
		return append(o, t.rawResults[r.off:]...)
	}
	return appendSleb(o, int64(rw.typeIndex(t.rawResults)))
}

// typeIndex returns the index of a type [] -> results (encoded as in the
// type section), adding one if the module has none.
func (rw *rewriter) typeIndex(results []byte) uint32 {
	key := string(results)
	idx, ok := rw.blockTypes[key]
	if ok {
		return idx
	}
	idx = uint32(len(rw.m.types) + len(rw.newTypes))
	for i, u := range rw.m.types {
		if len(u.params) == 0 && string(u.rawResults) == key {
			idx = uint32(i)
			break
		}
	}
	if idx == uint32(len(rw.m.types)+len(rw.newTypes)) {
		rw.newTypes = append(rw.newTypes, append([]byte{0x60, 0x00}, results...))
	}
	rw.blockTypes[key] = idx
	return idx
}
