package engine_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/cubelinux/cube/engine"
)

// The region benchmarks measure the shapes of issue 10: boxes of side 16,
// 64 and 128 over 1,000,000 random 3-D points in [0,1024)^3 with 100-byte
// values, an empty side-16 box over 20,000 such points, and a 256x256 box
// holding all 65,536 points of a 2-D grid. Each store is built once per
// process in a temporary directory (sync none), checkpointed, and then only
// read.
//
// Compare runs with benchstat:
//
//	go test -run XXX -bench Region -count 6 ./engine/ | tee new.txt

// regionStore is a store built once per process for the region benchmarks.
type regionStore struct {
	once sync.Once
	ns   *engine.Namespace
	pts  [][]int32
}

var (
	store1M    regionStore // 1,000,000 3-D points in [0,1024)^3
	store20k   regionStore // 20,000 3-D points in [0,1024)^3
	storeGrid2 regionStore // the 2-D grid [0,256)^2, every cell set
)

// get builds the store on first use. The directory is removed as soon as
// the checkpoint is written: a region read never touches the files (the
// index and the values are in memory), and a benchmark has no hook that
// runs at process exit to remove it later. The store is never closed.
func (s *regionStore) get(b *testing.B, o engine.NamespaceOptions, pts func() [][]int32) *engine.Namespace {
	s.once.Do(func() {
		dir, err := os.MkdirTemp("", "cube-region-bench-")
		if err != nil {
			b.Fatal(err)
		}
		defer os.RemoveAll(dir)
		db, err := engine.Open(dir, engine.Options{Sync: engine.SyncNone, CheckpointInterval: -1, CheckpointLogSize: 1 << 40})
		if err != nil {
			b.Fatal(err)
		}
		ns, err := db.CreateNamespace(ctx, "r", o)
		if err != nil {
			b.Fatal(err)
		}
		val := make([]byte, 100)
		s.pts = pts()
		for _, p := range s.pts {
			if err := ns.Put(ctx, p, val); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := db.Checkpoint(ctx); err != nil {
			b.Fatal(err)
		}
		s.ns = ns
	})
	if s.ns == nil {
		b.Fatal("region store failed to build")
	}
	return s.ns
}

// randomCube returns n distinct random points in [0,1024)^3.
func randomCube(n int) func() [][]int32 {
	return func() [][]int32 {
		rng := rand.New(rand.NewPCG(10, uint64(n)))
		seen := make(map[[3]int32]bool, n)
		pts := make([][]int32, 0, n)
		for len(pts) < n {
			p := [3]int32{rng.Int32N(1024), rng.Int32N(1024), rng.Int32N(1024)}
			if seen[p] {
				continue
			}
			seen[p] = true
			pts = append(pts, []int32{p[0], p[1], p[2]})
		}
		return pts
	}
}

func grid256() [][]int32 {
	pts := make([][]int32, 0, 256*256)
	for x := int32(0); x < 256; x++ {
		for y := int32(0); y < 256; y++ {
			pts = append(pts, []int32{x, y})
		}
	}
	return pts
}

type benchBox struct {
	min, max []int32
	want     int // points inside, by brute force
}

// cubeBoxes returns n boxes of the given side at random places in
// [0,1024)^3 with their brute-force counts; empty keeps only boxes that
// hold no point.
func cubeBoxes(pts [][]int32, side int32, n int, empty bool) []benchBox {
	rng := rand.New(rand.NewPCG(20, uint64(side)))
	var boxes []benchBox
	for len(boxes) < n {
		min, max := make([]int32, 3), make([]int32, 3)
		for j := range min {
			min[j] = rng.Int32N(1024 - side + 1)
			max[j] = min[j] + side - 1
		}
		want := 0
		for _, p := range pts {
			if p[0] >= min[0] && p[0] <= max[0] && p[1] >= min[1] && p[1] <= max[1] && p[2] >= min[2] && p[2] <= max[2] {
				want++
			}
		}
		if empty && want > 0 {
			continue
		}
		boxes = append(boxes, benchBox{min, max, want})
	}
	return boxes
}

// runRegion times full Region iterations over boxes in turn, checking each
// count, and reports the mean hits per query.
func runRegion(b *testing.B, ns *engine.Namespace, boxes []benchBox) {
	hits := 0
	for _, bx := range boxes {
		hits += bx.want
	}
	b.ReportAllocs()
	// The machine is shared, so wall time per query swings with the load;
	// the CPU time of the benchmark's thread does much less. Both are
	// reported.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0 := threadCPU(b)
	i := 0
	for b.Loop() {
		bx := &boxes[i%len(boxes)]
		seq, err := ns.Region(ctx, bx.min, bx.max, 0)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for range seq {
			n++
		}
		if n != bx.want {
			b.Fatalf("box %v..%v: %d points, want %d", bx.min, bx.max, n, bx.want)
		}
		i++
	}
	b.ReportMetric(float64(threadCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(hits)/float64(len(boxes)), "hits/op")
}

func BenchmarkRegion(b *testing.B) {
	for _, side := range []int32{16, 64, 128} {
		b.Run(fmt.Sprintf("3d-1M-side%d", side), func(b *testing.B) {
			ns := store1M.get(b, engine.NamespaceOptions{Dims: 3}, randomCube(1_000_000))
			runRegion(b, ns, cubeBoxes(store1M.pts, side, 64, false))
		})
	}
	b.Run("3d-20k-side16-empty", func(b *testing.B) {
		ns := store20k.get(b, engine.NamespaceOptions{Dims: 3}, randomCube(20_000))
		runRegion(b, ns, cubeBoxes(store20k.pts, 16, 64, true))
	})
	b.Run("2d-grid-256x256", func(b *testing.B) {
		ns := storeGrid2.get(b, engine.NamespaceOptions{Dims: 2}, grid256)
		runRegion(b, ns, []benchBox{{[]int32{0, 0}, []int32{255, 255}, 256 * 256}})
	})
}

// BenchmarkRegionAfterPut overwrites one point of the 1,000,000-point
// store (same value, so the other benchmarks' counts hold) before each
// side-16 box: the read seals the write, so this times what a write costs
// the reads that follow it (the delta beside the run, and the merges of
// the two), not a store at rest.
func BenchmarkRegionAfterPut(b *testing.B) {
	ns := store1M.get(b, engine.NamespaceOptions{Dims: 3}, randomCube(1_000_000))
	boxes := cubeBoxes(store1M.pts, 16, 64, false)
	val := make([]byte, 100)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := ns.Put(ctx, store1M.pts[(i*7919)%len(store1M.pts)], val); err != nil {
			b.Fatal(err)
		}
		bx := &boxes[i%len(boxes)]
		seq, err := ns.Region(ctx, bx.min, bx.max, 0)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for range seq {
			n++
		}
		if n != bx.want {
			b.Fatalf("box %v..%v: %d points, want %d", bx.min, bx.max, n, bx.want)
		}
		i++
	}
}
