package wasm

import (
	"context"
	"errors"

	"github.com/tetratelabs/wazero/api"

	"github.com/cubelinux/cube/vm/wasm/internal/instrument"
)

// errStopped is yield's panic value: the run's context is done or its
// program closed. classify reports it as a timeout or an abort.
var errStopped = errors.New("wasm: the run was stopped")

// yieldFuncs is the module the rewritten code imports (see
// instrument.Rewrite). Its code calls yield about every instrument.Fuel
// bytes it runs, and at once when the stop flag is set. The call returns
// to Go, where the collector and the scheduler can stop the goroutine
// (wazero's compiled code has no preemption point of its own), and where
// the host ends a guest whose context is done, even one whose stop flag
// it could not set (a start function).
var yieldFuncs = []hostFunc{{name: instrument.YieldName, results: i32s(1), fn: yield}}

func yield(ctx context.Context, m api.Module, stack []uint64) {
	if ctx.Err() != nil || m.IsClosed() {
		panic(errStopped)
	}
	stack[0] = instrument.Fuel
}
