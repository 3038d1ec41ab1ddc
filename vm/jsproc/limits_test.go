package jsproc_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/jsproc"
	"github.com/cubelinux/cube/vm/vmtest"
)

// The bombs that escaped the in-process limits: each builds a huge value
// inside one native built-in, where neither Interrupt nor a heap watchdog
// reaches. In a worker they end with the run's limit, and the daemon's
// own heap does not grow.
var bombs = []struct{ name, code string }{
	{"stringify", `JSON.stringify(new Array(300).fill('x'.repeat(1<<20)))`},
	{"replaceAll", `'a'.repeat(1<<16).replaceAll('a', 'x'.repeat(4096))`},
	{"Array.from", `Array.from({length: 2e7})`},
	{"doubling", `let s = 'x'; for (;;) s += s`},
	{"spin", `for (;;) {}`},
}

// TestBombsStopAtLimits catches: no RLIMIT_DATA in the worker (the bombs
// grow to GiBs and finish or stop only at the time limit: seen with
// limitData made a no-op, stringify then ran ~4 s), and no kill after the
// grace (the native built-ins then overran by seconds: seen with the
// AfterFunc removed).
func TestBombsStopAtLimits(t *testing.T) {
	if !jsproc.HardMemory {
		t.Skip("no kernel memory limit on this system")
	}
	p := newPool(t, jsproc.Options{})
	const timeout = time.Second
	lim := vm.Limits{Timeout: timeout, MemoryBytes: 16 << 20}
	before := heapInUse()
	for _, b := range bombs {
		t.Run(b.name, func(t *testing.T) {
			prg := compile(t, p, "function run() { "+b.code+"; return 'finished' }", lim)
			start := time.Now()
			res, err := prg.Run(context.Background(), vmtest.NewHost(2), nil)
			took := time.Since(start)
			if err == nil {
				t.Fatalf("finished with %d bytes of output", len(res.Output))
			}
			k := vm.KindOf(err)
			if k == vm.KindTrap && raceBuild {
				t.Skipf("under the race detector: %v", err)
			}
			if k != vm.KindMemoryLimit && k != vm.KindTimeout {
				t.Fatalf("error %v (kind %v), want a memory or time limit", err, k)
			}
			// 100 ms is the promise; the rest is margin for a loaded
			// 2-core machine under -race (a worker's start is in it).
			if over := took - timeout; over > 400*time.Millisecond {
				t.Errorf("took %v: %v past the time limit", took, over)
			}
			t.Logf("%v after %v", err, took.Round(time.Millisecond))
		})
	}
	if grown := heapInUse() - before; grown > 64<<20 {
		t.Errorf("the pool's own heap grew by %d MiB", grown>>20)
	}
}

// TestGarbageDoesNotOpenTheLimit: a run that leaves a lot of garbage
// behind must not give the next run room past its own limit (the
// in-process watchdog measured growth from the process heap at the start
// of a run, so after 1 GB of garbage the same bomb succeeded).
func TestGarbageDoesNotOpenTheLimit(t *testing.T) {
	if !jsproc.HardMemory {
		t.Skip("no kernel memory limit on this system")
	}
	p := newPool(t, jsproc.Options{MaxWorkers: 1})
	big := compile(t, p, `function run() { let a = []; for (let i = 0; i < 100; i++) a.push('y'.repeat(1<<20)); return a.length }`, vm.Limits{MemoryBytes: 256 << 20, Timeout: time.Minute})
	if _, err := big.Run(context.Background(), vmtest.NewHost(2), nil); err != nil {
		t.Fatal(err)
	}
	bomb := compile(t, p, `function run() { let s = "x"; for (;;) s += s }`, vm.Limits{MemoryBytes: 16 << 20, Timeout: 10 * time.Second})
	res, err := bomb.Run(context.Background(), vmtest.NewHost(2), nil)
	if vm.KindOf(err) != vm.KindMemoryLimit {
		t.Fatalf("after garbage: %q, %v; want a memory limit error", res.Output, err)
	}
}

func TestSessionKeepsStateAndSaysWhenLost(t *testing.T) {
	p := newPool(t, jsproc.Options{})
	h := vmtest.NewHost(2)
	s := p.NewSession(vm.Limits{Timeout: 20 * time.Second, MemoryBytes: 16 << 20}) // the memory limit, not the clock, must end the bomb
	defer s.Close()
	ctx := context.Background()
	if _, err := s.EvalArgs(ctx, h, "var n = 41; function inc() { return ++n }", nil); err != nil {
		t.Fatal(err)
	}
	c, err := s.EvalArgs(ctx, h, "inc()", nil)
	if err != nil || string(c.Output) != "42" || c.Type != "number" {
		t.Fatalf("inc() = %q (%s), %v; want 42", c.Output, c.Type, err)
	}
	_, err = s.EvalArgs(ctx, h, "let s = 'x'; for (;;) s += s", nil)
	if !jsproc.HardMemory {
		return
	}
	if vm.KindOf(err) == vm.KindTrap && raceBuild {
		t.Skipf("under the race detector: %v", err)
	}
	if vm.KindOf(err) != vm.KindMemoryLimit {
		t.Fatalf("bomb: %v; want a memory limit error", err)
	}
	// Either the worker's own heap watchdog stopped the bomb in time (the
	// session lives on), or the kernel did (the worker died, and the error
	// must say the state went with it).
	want := "number"
	if strings.Contains(err.Error(), "variables were lost") {
		want = "undefined"
	}
	c, err = s.EvalArgs(ctx, h, "typeof n", nil)
	if err != nil || string(c.Output) != want {
		t.Fatalf("after %v: typeof n = %q, %v; want %s", err, c.Output, err, want)
	}
}

// TestCancelStopsARun: the caller's cancellation (a client that closed its
// connection) ends a run stuck in a built-in within the grace.
func TestCancelStopsARun(t *testing.T) {
	p := newPool(t, jsproc.Options{})
	prg := compile(t, p, `function run() { JSON.stringify(new Array(3000).fill('x'.repeat(1<<20))) }`, vm.Limits{Timeout: time.Minute, MemoryBytes: 8 << 30})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := prg.Run(ctx, vmtest.NewHost(2), nil)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("cancelled after 300 ms, returned after %v", took)
	}
	if vm.KindOf(err) != vm.KindAborted && vm.KindOf(err) != vm.KindMemoryLimit {
		t.Fatalf("err %v, want aborted", err)
	}
}

func TestErrorsKeepTheirIdentity(t *testing.T) {
	p := newPool(t, jsproc.Options{})
	if _, err := p.Compile(context.Background(), []byte("function run( {"), vm.Limits{}); vm.KindOf(err) != vm.KindBadModule {
		t.Fatalf("syntax error: %v, want bad module", err)
	}
	h := vmtest.NewHost(2)
	h.SetReadOnly(true)
	prg := compile(t, p, `function run() { cube.put([1, 1], "x") }`, vm.Limits{})
	if _, err := prg.Run(context.Background(), h, nil); !errors.Is(err, vm.ErrReadOnly) {
		t.Fatalf("write on a read-only host: %v, want vm.ErrReadOnly", err)
	}
	thrower := compile(t, p, `function run() { throw new Error("nope") }`, vm.Limits{})
	_, err := thrower.Run(context.Background(), h, nil)
	var ve *vm.Error
	if !errors.As(err, &ve) || ve.Kind != vm.KindGuest || !strings.Contains(ve.Msg, "nope") || ve.Line != 1 {
		t.Fatalf("throw: %#v, want a guest error with its line", err)
	}
}

func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

// TestGrownWorkerIsRetired: a worker whose data segment grew far past
// its idle size (the Go runtime keeps what it mapped) is replaced after
// the run, so that the next run's memory limit, counted from the idle
// size, is not eaten by what an earlier run left mapped.
//
// Break seen caught: the worker's meter of its growth reading a field of
// /proc/self/statm that does not grow (resident text, f[3]): the pool
// kept the grown worker, one start in all.
func TestGrownWorkerIsRetired(t *testing.T) {
	if !jsproc.HardMemory {
		t.Skip("no kernel memory limit on this system")
	}
	p := newPool(t, jsproc.Options{MaxWorkers: 1})
	h := vmtest.NewHost(2)
	small := compile(t, p, `function run() { return "ok" }`, vm.Limits{})
	if _, err := small.Run(context.Background(), h, nil); err != nil {
		t.Fatal(err)
	}
	big := compile(t, p, `function run() { let a = []; for (let i = 0; i < 160; i++) a.push('y'.repeat(1<<20)); return a.length }`, vm.Limits{MemoryBytes: 512 << 20, Timeout: time.Minute})
	if _, err := big.Run(context.Background(), h, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := small.Run(context.Background(), h, nil); err != nil {
		t.Fatal(err)
	}
	if st := p.Stats(); st.Started < 2 {
		t.Fatalf("workers started %d: the worker that grew by 160 MiB was kept", st.Started)
	}
}

// TestLowerLimitAfterHigher: a worker applies each request's limits, so a
// run under a small memory limit after one under a large limit, in the
// same worker, gets its own small limit.
//
// Break seen caught: the worker setting its limits only at its first
// request (a cache of the limits in force that never compared): the
// 200 MiB stringify under a 16 MiB limit ran into its time limit.
func TestLowerLimitAfterHigher(t *testing.T) {
	if !jsproc.HardMemory {
		t.Skip("no kernel memory limit on this system")
	}
	p := newPool(t, jsproc.Options{MaxWorkers: 1})
	h := vmtest.NewHost(2)
	roomy := compile(t, p, `function run() { return "ok" }`, vm.Limits{MemoryBytes: 1 << 30, Timeout: time.Minute})
	if _, err := roomy.Run(context.Background(), h, nil); err != nil {
		t.Fatal(err)
	}
	// Inside one built-in, where only the kernel's limit stops it at
	// once (the heap watchdog's samples take seconds, past the 3 s).
	tight := compile(t, p, `function run() { return JSON.stringify(new Array(200).fill('x'.repeat(1<<20))).length }`, vm.Limits{MemoryBytes: 16 << 20, Timeout: 3 * time.Second})
	res, err := tight.Run(context.Background(), h, nil)
	if vm.KindOf(err) != vm.KindMemoryLimit {
		t.Fatalf("200 MiB under a 16 MiB limit after a 1 GiB one: %q, %v; want a memory limit error", res.Output, err)
	}
}

// TestCancelInterruptsAComputingRun: a caller's cancellation reaches a
// run that is computing in JavaScript (no host call, no built-in) as an
// interrupt, and its worker, stopped cleanly, is kept.
//
// Break seen caught: the worker not reading its interrupt pipe (Serve
// without readInterrupts): the run ended only when the pool killed its
// worker after the grace, one kill counted.
func TestCancelInterruptsAComputingRun(t *testing.T) {
	p := newPool(t, jsproc.Options{MaxWorkers: 1, KillGrace: 5 * time.Second})
	h := vmtest.NewHost(2)
	spin := compile(t, p, `function run() { for (;;) {} }`, vm.Limits{Timeout: time.Minute})
	ok := compile(t, p, `function run() { return "ok" }`, vm.Limits{})
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		_, err := spin.Run(ctx, h, nil)
		cancel()
		if vm.KindOf(err) != vm.KindAborted {
			t.Fatalf("cancelled spin: %v, want aborted", err)
		}
		if res, err := ok.Run(context.Background(), h, nil); err != nil || string(res.Output) != "ok" {
			t.Fatalf("the run after: %q, %v", res.Output, err)
		}
	}
	if st := p.Stats(); st.Killed != 0 || st.Started != 1 {
		t.Fatalf("workers started %d, killed %d: want the one worker, interrupted, never killed", st.Started, st.Killed)
	}
}
