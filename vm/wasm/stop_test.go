package wasm_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/vmtest"
)

// TestLoopLetsGCRun: a guest spinning in a loop with no host call does not
// hold up the collector. wazero's compiled code cannot be preempted, so a
// stop-the-world waits for the guest to come back to Go: the rewritten
// code does so at every yield. The collection must end while the run is
// still going.
// Break: charge no fuel in the check (i32.const 0 in rewriter.check), so
// the loop never yields -> the test binary hangs, killed by go test's
// own timeout: runtime.GC's stop-the-world waits for the guest, and the
// timer that would set its stop flag cannot run either (seen: "Test
// killed with quit: ran too long (11m0s)").
func TestLoopLetsGCRun(t *testing.T) {
	s := newSandbox(t)
	p := compile(t, s, "loop", vm.Limits{Timeout: 3 * time.Second})
	ran := make(chan error, 1)
	go func() {
		_, err := p.Run(ctx, vmtest.NewHost(1), nil)
		ran <- err
	}()
	time.Sleep(100 * time.Millisecond) // the guest is in its loop
	gc := make(chan struct{})
	go func() {
		runtime.GC()
		close(gc)
	}()
	select {
	case <-gc:
	case err := <-ran:
		t.Fatalf("the collection waited for the run, which ended with %v", err)
	}
	wantKind(t, <-ran, vm.KindTimeout)
}

// TestStopLatency: a run past its time limit ends soon after it, in a
// loop (stop flag at the loop header), in calls with no loop (at function
// entry) and in a start function (which only the yield can end). The
// overrun is logged, not asserted: the machine is shared.
func TestStopLatency(t *testing.T) {
	s := newSandbox(t)
	lim := vm.Limits{Timeout: 100 * time.Millisecond}
	for _, name := range []string{"loop", "recurse"} {
		p := compile(t, s, name, lim)
		for range 3 {
			start := time.Now()
			_, err := p.Run(ctx, vmtest.NewHost(1), nil)
			wantKind(t, err, vm.KindTimeout)
			t.Logf("%s: ended %v after its limit", name, time.Since(start)-lim.Timeout)
		}
	}
	for range 3 {
		start := time.Now()
		_, err := s.Compile(ctx, load(t, "startloop"), lim)
		wantKind(t, err, vm.KindTimeout)
		t.Logf("startloop: compile ended %v after the limit (compilation included)", time.Since(start)-lim.Timeout)
	}
}
