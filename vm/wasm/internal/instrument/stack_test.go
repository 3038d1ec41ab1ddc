package instrument_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/cubelinux/cube/vm/wasm/internal/instrument"
)

const budget = 1 << 16 // slots: 512 KiB

// instance is testdata/recursion.wasm, rewritten under budget and
// instantiated on wazero's compiler, as cube runs it.
type instance struct {
	m              api.Module
	depth, counter api.Global
}

func newInstance(t *testing.T) instance {
	t.Helper()
	ctx := context.Background()
	b, err := os.ReadFile("testdata/recursion.wasm")
	if err != nil {
		t.Fatal(err)
	}
	res, err := instrument.Rewrite(b, budget)
	if err != nil {
		t.Fatal(err)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	t.Cleanup(func() { _ = rt.Close(ctx) })
	addYield(t, ctx, rt, 0, nil)
	m, err := rt.InstantiateWithConfig(ctx, res.Module, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		t.Fatal(err)
	}
	return instance{m: m, depth: m.ExportedGlobal("depth"), counter: m.ExportedGlobal(res.Counter)}
}

// TestBudgetStopsRecursion: each shape of unbounded recursion traps at
// the budget, with the counter over it, and a frame's cost is what the
// function holds. Removing the check from the prologue (the i32.gt_u and
// its if/unreachable in rewriter.body) makes every case fail: the
// recursion runs on to wazero's own ceiling (~84 MB of stack) and traps
// with "stack overflow" and the counter far past the budget.
func TestBudgetStopsRecursion(t *testing.T) {
	perFrame := map[string]float64{}
	for _, fn := range []string{"runaway", "mutual", "indirect", "fat"} {
		t.Run(fn, func(t *testing.T) {
			in := newInstance(t)
			_, err := in.m.ExportedFunction(fn).Call(context.Background())
			if err == nil || !strings.Contains(err.Error(), "unreachable") {
				t.Fatalf("error %v, want the budget's unreachable trap", err)
			}
			used, depth := uint32(in.counter.Get()), uint32(in.depth.Get())
			if used <= budget {
				t.Fatalf("counter %d after the trap, want over the budget %d", used, budget)
			}
			cost := float64(used) / float64(depth)
			if over := used - budget; float64(over) > cost+1 {
				t.Errorf("counter %d is %d over the budget: the trap came late (a frame costs ~%.0f)", used, over, cost)
			}
			perFrame[fn] = cost
			t.Logf("depth %d, %d slots, %.1f slots per frame", depth, used, cost)
		})
	}
	// fat holds 64 i64 locals live across its call: its frames cost
	// several times runaway's, so it hits the budget that much sooner.
	if perFrame["fat"] < 4*perFrame["runaway"] {
		t.Errorf("a frame of fat costs %.1f slots, of runaway %.1f: locals are not counted", perFrame["fat"], perFrame["runaway"])
	}
}

// TestBudgetAllowsDeepRecursion: a recursion that fits the budget returns
// its result through return, br to the function label and the final end,
// and leaves the counter at zero. Deliberate breaks it caught: no
// subtraction before return (counter 13 after deep(0)); no wrapping block,
// so that br to the function's label skips the epilogue (counter 13 after
// deep(1)).
func TestBudgetAllowsDeepRecursion(t *testing.T) {
	ctx := context.Background()
	in := newInstance(t)
	deep := in.m.ExportedFunction("deep")
	// Find a frame's cost from a failing depth, then stay under it.
	if _, err := deep.Call(ctx, budget); err == nil {
		t.Fatalf("deep(%d) returned: a frame costs at least a slot, so it cannot fit", budget)
	}
	in = newInstance(t)
	deep = in.m.ExportedFunction("deep")
	for _, n := range []uint64{0, 1, 2, 1000, budget / 20} {
		res, err := deep.Call(ctx, n)
		if err != nil || res[0] != n {
			t.Fatalf("deep(%d) = %v, %v", n, res, err)
		}
		if c := in.counter.Get(); c != 0 {
			t.Fatalf("counter %d after deep(%d) returned, want 0: an exit does not subtract its cost", c, n)
		}
	}
}
