package js

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/vmtest"
)

// gateHost is a test host whose Get blocks until the gate opens, so that
// a run can be held with its runtime taken.
type gateHost struct {
	*vmtest.Host
	entered chan struct{} // a Get has begun
	gate    chan struct{} // closed: every Get goes on
}

func (h *gateHost) Get(ctx context.Context, c []int32) ([]byte, bool, error) {
	h.entered <- struct{}{}
	<-h.gate
	return h.Host.Get(ctx, c)
}

// holdAll starts n runs of p that each stop in a Get, and returns once
// all of them hold a runtime, with a func that lets them finish and
// waits for them.
func holdAll(t *testing.T, p vm.Program, n int) func() {
	t.Helper()
	h := &gateHost{Host: vmtest.NewHost(1), entered: make(chan struct{}), gate: make(chan struct{})}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if _, err := p.Run(context.Background(), h, []byte("block")); err != nil {
				t.Errorf("held run: %v", err)
			}
		})
	}
	for i := range n {
		select {
		case <-h.entered:
		case <-time.After(30 * time.Second):
			t.Fatalf("only %d of %d runs got a runtime in 30s: runs that find the pool empty must build one once the wait is over", i, n)
		}
	}
	return func() { close(h.gate); wg.Wait() }
}

// busySandbox returns a sandbox and a program of it, with as many runs
// of it holding a runtime as the pool keeps idle; release lets them end.
func busySandbox(t *testing.T) (sb *Sandbox, p vm.Program, release func()) {
	t.Helper()
	sb = New(Options{})
	t.Cleanup(func() { sb.Close(context.Background()) })
	p, err := sb.Compile(context.Background(), []byte(`function run(a) { if (a === "block") cube.get([0]); return "ok" }`), vm.Limits{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return sb, p, holdAll(t, p, poolSize())
}

// TestTakeWaitsForAnIdleRuntime: a run that finds every runtime busy
// waits for one to come back instead of building its own (milliseconds of
// CPU, then dropped once the pool is full). Break it catches: take
// building at once when the pool is empty (one runtime more is built).
func TestTakeWaitsForAnIdleRuntime(t *testing.T) {
	sb, p, release := busySandbox(t)
	// The wait is as long as the last build took; make it longer than the
	// slowest machine needs to hand back a runtime.
	sb.buildTime.Store(int64(time.Minute))
	before := sb.built.Load()
	done := make(chan error)
	go func() {
		res, err := p.Run(context.Background(), vmtest.NewHost(1), nil)
		if err == nil && string(res.Output) != "ok" {
			t.Errorf("output %q", res.Output)
		}
		done <- err
	}()
	time.Sleep(50 * time.Millisecond) // let the run find the pool empty
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := sb.built.Load() - before; got != 0 {
		t.Fatalf("the run built %d runtimes while every runtime was busy, want 0: it should wait for one", got)
	}
}

// TestTakeBuildsWhenNoneComesBack: runs that hold every runtime for long
// do not keep another waiting past the time a build takes; it builds its
// own and finishes while they still hold theirs. Break it catches: take
// waiting on the pool without a bound (the run never finishes).
func TestTakeBuildsWhenNoneComesBack(t *testing.T) {
	sb, p, release := busySandbox(t)
	defer release()
	sb.buildTime.Store(int64(20 * time.Millisecond))
	before := sb.built.Load()
	done := make(chan error, 1)
	go func() {
		_, err := p.Run(context.Background(), vmtest.NewHost(1), nil)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a run waited 30s for a runtime while every runtime was held: it should build one after about 20ms")
	}
	if got := sb.built.Load() - before; got != 1 {
		t.Fatalf("built %d runtimes, want 1", got)
	}
}

// TestTakeWaitEndsWithTheContext: a run whose context ends while it waits
// for a runtime ends at once with the matching kind, not after the wait.
// Break it catches: take ignoring ctx while it waits (the run ends only
// when the minute-long wait does).
func TestTakeWaitEndsWithTheContext(t *testing.T) {
	sb, p, release := busySandbox(t)
	defer release()
	sb.buildTime.Store(int64(time.Minute))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := p.Run(ctx, vmtest.NewHost(1), nil)
	if vm.KindOf(err) != vm.KindTimeout {
		t.Fatalf("err %v, want a timeout", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("the run ended %v after its context, not at once", d)
	}
}
