package main

import (
	"context"
	"flag"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"github.com/cubelinux/cube"
)

var benchPoints = flag.Int("walk.points", 1_000_000, "BenchmarkCubeWalk: 3-D points (the first 100,000 are the graph)")

type walkStoreT struct {
	once sync.Once
	d    *dataset
	s    *cubeStore
	err  error
}

var walkStore walkStoreT

// loadWalkStore loads the bench's cube store once per process.
func loadWalkStore(b *testing.B) *walkStoreT {
	ctx := context.Background()
	w := &walkStore
	w.once.Do(func() {
		w.d = makeDataset(1, 1024, *benchPoints, 0, 100_000)
		w.s = newCube(b.TempDir())
		if w.err = w.s.load(ctx, w.d); w.err != nil {
			return
		}
		// As the bench does: the first read after the reopen orders what
		// the open left pending (once, ~0.5 s), and the load's garbage is
		// collected before anything is measured.
		_, w.err = w.s.walk(ctx, w.d.pts[0], 3)
		runtime.GC()
	})
	if w.err != nil {
		b.Fatal(w.err)
	}
	return w
}

// BenchmarkCubeWalk is the bench's 3-hop walk on cube alone, loaded (once
// per process) as the full run loads it, so that a profile of it holds
// nothing else: "seq" is the bench's walk (WalkSeq), "slice" the same
// through Walk, which copies the steps out.
//
//	go test -run XXX -bench CubeWalk -benchtime 3000x -count 6 -cpuprofile /tmp/w.prof
func BenchmarkCubeWalk(b *testing.B) {
	ctx := context.Background()
	w := loadWalkStore(b)
	for _, v := range []struct {
		name string
		walk func(context.Context, point, int) (walkAnswer, error)
	}{{"seq", w.s.walk}, {"slice", w.s.walkSlice}} {
		b.Run(v.name, func(b *testing.B) {
			runtime.LockOSThread() // the thread's own CPU time, below
			defer runtime.UnlockOSThread()
			var ru0, ru1, th0, th1 syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
			syscall.Getrusage(rusageThread, &th0)
			rng := rand.New(rand.NewPCG(7, 7))
			nodes := 0
			for b.Loop() {
				a, err := v.walk(ctx, w.d.pts[rng.IntN(w.d.nodes)], 3)
				if err != nil {
					b.Fatal(err)
				}
				nodes += a.n
			}
			syscall.Getrusage(rusageThread, &th1)
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
			b.ReportMetric(float64(cpuNs(&th1)-cpuNs(&th0))/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(ru1.Minflt-ru0.Minflt)/float64(b.N), "faults/op")
			b.ReportMetric(float64(nodes)/float64(b.N), "nodes/op")
		})
	}
}

// rusageThread is Linux's RUSAGE_THREAD: on a machine shared with other
// work, a walk's CPU time is steadier than its wall time.
const rusageThread = 1

func cpuNs(r *syscall.Rusage) int64 { return r.Utime.Nano() + r.Stime.Nano() }

// walkSlice is cubeStore.walk through Walk, which copies the steps out.
func (s *cubeStore) walkSlice(ctx context.Context, start point, hops int) (walkAnswer, error) {
	copy(s.from, start[:])
	steps, err := s.pts.Walk(ctx, s.from, cube.WalkOptions{Order: cube.BFS, MaxDepth: hops, Direction: cube.Out})
	var a walkAnswer
	for _, st := range steps {
		a.add(st)
	}
	return a, err
}

// BenchmarkCubeBox is the bench's box queries on cube alone, on the store
// BenchmarkCubeWalk loads:
//
//	go test -run XXX -bench CubeBox -benchtime 2000x -count 6
func BenchmarkCubeBox(b *testing.B) {
	ctx := context.Background()
	w := loadWalkStore(b)
	for _, side := range []int32{16, 64, 128} {
		b.Run(strconv.Itoa(int(side)), func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var th0, th1 syscall.Rusage
			syscall.Getrusage(rusageThread, &th0)
			rng := rand.New(rand.NewPCG(7, 7))
			hits := 0
			for b.Loop() {
				var lo, hi point
				for i := range lo {
					lo[i] = rng.Int32N(1024 - side + 1)
					hi[i] = lo[i] + side - 1
				}
				var a answer
				if err := w.s.box(ctx, lo, hi, &a); err != nil {
					b.Fatal(err)
				}
				hits += a.n
			}
			syscall.Getrusage(rusageThread, &th1)
			b.ReportMetric(float64(cpuNs(&th1)-cpuNs(&th0))/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(hits)/float64(b.N), "hits/op")
		})
	}
}
