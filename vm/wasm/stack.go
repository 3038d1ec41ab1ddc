package wasm

import (
	"fmt"

	"github.com/tetratelabs/wazero/api"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/wasm/internal/instrument"
)

// MinStackBytes is the smallest call stack budget a program gets, however
// small its memory limit: about 10,000 calls of a small function.
const MinStackBytes = 1 << 20

// StackBytes returns the call stack budget of a program run under lim: a
// quarter of its memory limit, at least MinStackBytes. A program with no
// memory limit is bounded only by wazero's own stack ceiling.
//
// The budget counts 8 bytes per param, local and operand stack value of
// every active call (16 for a v128) plus a fixed amount per call, which
// bounds what wazero's compiled code takes on its stack (3 to 7 bytes per
// counted 8 measured). wazero keeps that stack in a Go slice that it grows
// by doubling, and the old one lives until the copy is done and the
// collector runs: the host memory a run's stack can take is under four
// times its budget, so within the run's memory limit.
func StackBytes(lim vm.Limits) int64 {
	lim = lim.WithDefaults()
	if lim.MemoryBytes < 0 {
		return instrument.MaxBudget * 8
	}
	return min(max(lim.MemoryBytes/4, MinStackBytes), instrument.MaxBudget*8)
}

// stackErr returns the typed error for a trap of m caused by the stack
// budget, or err itself for any other failure. The rewritten code adds a
// call's cost to the counter before comparing, and traps at once when it
// is over: the counter is over the budget after a trap only if the budget
// caused it.
func (p *Program) stackErr(m api.Module, err error) error {
	g := m.ExportedGlobal(p.counter)
	if g == nil || uint32(g.Get()) <= p.stackSlots {
		return err
	}
	return &vm.Error{
		Kind: vm.KindStackLimit,
		Msg:  fmt.Sprintf("the call stack exceeded its budget of %d KiB (a quarter of the memory limit): runaway recursion?", int64(p.stackSlots)*8>>10),
		Err:  err,
	}
}
