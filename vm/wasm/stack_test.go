package wasm_test

import (
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/vmtest"
	"github.com/cubelinux/cube/vm/wasm"
)

// TestStackLimit: unbounded recursion ends with KindStackLimit, and the
// Go heap allocated for the guest stack stays within the memory limit.
// Deliberate break: without the budget check in the rewriter the run goes
// on to wazero's own ceiling and allocates ~170 MB (seen: 169,636,744
// bytes, and the test fails on it).
func TestStackLimit(t *testing.T) {
	s := newSandbox(t)
	for _, iso := range []vm.Isolation{vm.Fresh, vm.Reuse} {
		t.Run(iso.String(), func(t *testing.T) {
			const limit = 16 << 20
			p := compile(t, s, "stack", vm.Limits{Timeout: 10 * time.Second, MemoryBytes: limit, Isolation: iso})
			defer p.Close(ctx)
			h := vmtest.NewHost(1)
			for range 2 { // the same again: a failed instance is not reused
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				start := time.Now()
				_, err := p.Run(ctx, h, nil)
				d := time.Since(start)
				runtime.ReadMemStats(&after)
				e := wantKind(t, err, vm.KindStackLimit)
				if !errors.Is(err, vm.ErrStackLimit) {
					t.Errorf("errors.Is(%v, vm.ErrStackLimit) = false", err)
				}
				if got := after.TotalAlloc - before.TotalAlloc; got > limit {
					t.Errorf("the run allocated %d bytes, over its memory limit of %d", got, limit)
				} else {
					t.Logf("%v in %v, %d KiB allocated", e, d, got>>10)
				}
			}
		})
	}
}

// TestStackBudget: a legitimate deep recursion runs at the smallest
// budget, and the budget follows the memory limit.
func TestStackBudget(t *testing.T) {
	s := newSandbox(t)
	for _, mem := range []int64{65536, 0, -1} {
		p := compile(t, s, "deeprec", vm.Limits{MemoryBytes: mem})
		if _, err := p.Run(ctx, vmtest.NewHost(1), nil); err != nil {
			t.Errorf("memory limit %d: %v", mem, err)
		}
		_ = p.Close(ctx)
	}
	for _, tc := range []struct{ mem, want int64 }{
		{0, vm.DefaultMemoryBytes / 4},
		{65536, wasm.MinStackBytes},
		{1 << 30, 1 << 28},
	} {
		if got := wasm.StackBytes(vm.Limits{MemoryBytes: tc.mem}); got != tc.want {
			t.Errorf("StackBytes(memory %d) = %d, want %d", tc.mem, got, tc.want)
		}
	}
}
