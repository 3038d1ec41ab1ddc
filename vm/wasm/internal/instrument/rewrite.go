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
}

// Rewrite returns mod with every function instrumented: on entry it
// checks the run's deadline (an empty loop, where wazero looks for a done
// context), adds the function's frame cost (in 8-byte slots) to a new
// mutable i32 global and traps with unreachable if the total passes
// budget; it subtracts the cost again on every way out (its final end, a
// branch to its outermost label, return, return_call and
// return_call_indirect). After a trap, the global still holds more than
// budget exactly when the budget was the cause.
//
// Nothing in the module is renumbered: the global, a type (for a block
// with several results, if the module has none that fits) and the export
// are appended.
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
	name := CounterExport
	for i := 1; m.exports[name]; i++ {
		name = CounterExport + "_" + strconv.Itoa(i)
	}
	rw := &rewriter{m: m, global: uint32(len(m.globals)), budget: budget, blockTypes: map[string]uint32{}}
	sections := m.sections
	if m.code >= 0 {
		code, err := rw.code(m.sections[m.code].payload)
		if err != nil {
			return Result{}, fmt.Errorf("code section: %w", err)
		}
		sections = append([]section(nil), sections...)
		sections[m.code].payload = code
	} else if n := len(m.funcs) - m.imported; n > 0 {
		return Result{}, fmt.Errorf("%d functions declared but no code section", n)
	}
	for _, t := range rw.newTypes {
		sections = withEntry(sections, secType, t)
	}
	sections = withEntry(sections, secGlobal, []byte{0x7f, 0x01, 0x41, 0x00, 0x0b}) // (mut i32) (i32.const 0)
	exp := binary.AppendUvarint(nil, uint64(len(name)))
	exp = append(exp, name...)
	exp = append(exp, 0x03) // a global
	exp = binary.AppendUvarint(exp, uint64(rw.global))
	sections = withEntry(sections, secExport, exp)
	return Result{Module: encode(sections), Counter: name}, nil
}

type rewriter struct {
	m          *module
	global     uint32
	budget     uint32
	blockTypes map[string]uint32 // results encoding -> index of a type [] -> results
	newTypes   [][]byte
	w          walker
	buf        []byte
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
	out := binary.AppendUvarint(make([]byte, 0, len(p)+int(n)*48), uint64(n))
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
	w.stack, w.height, w.max, w.exits = w.stack[:0], 0, 0, w.exits[:0]
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
	o = append(o, 0x03, 0x40, 0x0b) // loop end: wazero checks the deadline at a loop header
	o = rw.adjust(o, cost, 0x6a)    // i32.add
	o = append(o, 0x23)             // global.get; i32.const budget; i32.gt_u; if unreachable end
	o = binary.AppendUvarint(o, uint64(rw.global))
	o = append(o, 0x41)
	o = appendSleb(o, int64(rw.budget))
	o = append(o, 0x4b, 0x04, 0x40, 0x00, 0x0b)
	o = append(o, 0x02) // block with the function's results: a branch to the function's label lands here
	o = rw.blockType(o, t)
	last := start
	for _, x := range w.exits {
		o = append(o, b[last:x]...)
		o = rw.adjust(o, cost, 0x6b) // i32.sub
		last = x
	}
	o = append(o, b[last:end]...)
	o = append(o, 0x0b)
	o = rw.adjust(o, cost, 0x6b)
	o = append(o, 0x0b)
	rw.buf = o
	return o, nil
}

// adjust appends global.get; i32.const cost; op; global.set.
func (rw *rewriter) adjust(o []byte, cost uint64, op byte) []byte {
	o = append(o, 0x23)
	o = binary.AppendUvarint(o, uint64(rw.global))
	o = append(o, 0x41)
	o = appendSleb(o, int64(cost))
	o = append(o, op, 0x24)
	return binary.AppendUvarint(o, uint64(rw.global))
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
	key := string(t.rawResults)
	idx, ok := rw.blockTypes[key]
	if !ok {
		idx = uint32(len(rw.m.types) + len(rw.newTypes))
		for i, u := range rw.m.types {
			if len(u.params) == 0 && string(u.rawResults) == key {
				idx = uint32(i)
				break
			}
		}
		if idx == uint32(len(rw.m.types)+len(rw.newTypes)) {
			rw.newTypes = append(rw.newTypes, append([]byte{0x60, 0x00}, t.rawResults...))
		}
		rw.blockTypes[key] = idx
	}
	return appendSleb(o, int64(idx))
}
