package js

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/cubelinux/cube/vm"
)

// watchdog bounds memory growth that no size check can see: a program
// that doubles a string or pushes to arrays allocates in many small,
// interruptible steps. While runs are active it samples the Go heap every
// tick; when the heap has grown by more than a run's MemoryBytes since the
// run started, it forces a collection (garbage is not growth) and, if the
// growth remains, fails the run with KindMemoryLimit.
//
// # Notes
//
// Go cannot attribute allocations to a goroutine, so the watchdog blames
// every run whose budget the process-wide growth exceeds: with concurrent
// runs, an innocent run that started just before a memory bomb can fail
// with it. A single allocation larger than the machine's memory is out of
// its reach; the size-checked built-ins (guards.go) cover the known ways
// JavaScript makes one.
type watchdog struct {
	mu      sync.Mutex
	runs    map[*wdRun]struct{}
	running bool
	last    uint64 // latest heap sample
	sample  []metrics.Sample
}

type wdRun struct {
	base  uint64
	limit uint64
	fail  func(*vm.Error)
}

const (
	wdTick = 2 * time.Millisecond
	wdIdle = 500 // ticks without runs before the goroutine exits
)

func newWatchdog() *watchdog {
	return &watchdog{
		runs:   map[*wdRun]struct{}{},
		sample: []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}},
	}
}

// heap reads the bytes of live and not yet swept heap objects. w.mu held.
func (w *watchdog) heap() uint64 {
	metrics.Read(w.sample)
	if w.sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return w.sample[0].Value.Uint64()
}

// watch registers a run with its memory budget; stop unregisters it.
func (w *watchdog) watch(limit int64, fail func(*vm.Error)) (stop func()) {
	w.mu.Lock()
	if !w.running {
		w.last = w.heap()
		w.running = true
		go w.loop()
	}
	r := &wdRun{base: w.last, limit: uint64(limit), fail: fail}
	w.runs[r] = struct{}{}
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		delete(w.runs, r)
		w.mu.Unlock()
	}
}

func (w *watchdog) loop() {
	t := time.NewTicker(wdTick)
	defer t.Stop()
	idle := 0
	for range t.C {
		w.mu.Lock()
		if len(w.runs) == 0 {
			idle++
			if idle >= wdIdle {
				w.running = false
				w.mu.Unlock()
				return
			}
			w.mu.Unlock()
			continue
		}
		idle = 0
		h := w.heap()
		w.last = h
		over := w.over(h)
		w.mu.Unlock()
		if len(over) == 0 {
			continue
		}
		runtime.GC()
		w.mu.Lock()
		h = w.heap()
		w.last = h
		for _, r := range w.over(h) {
			r.fail(&vm.Error{Kind: vm.KindMemoryLimit, Msg: fmt.Sprintf("the heap grew by %d MiB during the run, over its limit of %d MiB", (h-r.base)>>20, r.limit>>20)})
			delete(w.runs, r)
		}
		w.mu.Unlock()
	}
}

// over lists the runs whose budget the heap h exceeds. w.mu held.
func (w *watchdog) over(h uint64) []*wdRun {
	var out []*wdRun
	for r := range w.runs {
		if h > r.base && h-r.base > r.limit {
			out = append(out, r)
		}
	}
	return out
}
