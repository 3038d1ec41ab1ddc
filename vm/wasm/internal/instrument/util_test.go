package instrument_test

import (
	"context"
	"errors"
	"math"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/cubelinux/cube/vm/wasm/internal/instrument"
)

// canonical formats a result, with every NaN alike: NaN payloads may
// differ between two compilations of the same code.
func canonical(t api.ValueType, v uint64) string {
	switch t {
	case api.ValueTypeF32:
		if f := math.Float32frombits(uint32(v)); f != f {
			return "nan"
		}
	case api.ValueTypeF64:
		if f := math.Float64frombits(v); f != f {
			return "nan"
		}
	}
	return strconv.FormatUint(v, 16)
}

// errStopped is what testYield panics with when the call's context is
// done: wazero turns it into the call's error.
var errStopped = errors.New("stopped by yield")

// addYield instantiates the module rewritten code imports, with a yield
// that ends the guest once the call's context is done and otherwise
// gives fuel (instrument.Fuel if fuel is 0), counting its calls in n.
func addYield(tb testing.TB, ctx context.Context, rt wazero.Runtime, fuel uint32, n *atomic.Int64) {
	tb.Helper()
	if fuel == 0 {
		fuel = instrument.Fuel
	}
	_, err := rt.NewHostModuleBuilder(instrument.YieldModule).NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, _ api.Module, stack []uint64) {
			if n != nil {
				n.Add(1)
			}
			if ctx.Err() != nil {
				panic(errStopped)
			}
			stack[0] = uint64(fuel)
		}), nil, []api.ValueType{api.ValueTypeI32}).
		Export(instrument.YieldName).Instantiate(ctx)
	if err != nil {
		tb.Fatal(err)
	}
}
