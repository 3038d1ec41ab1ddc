package engine_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/cubelinux/cube/engine"
)

// The nearby benchmarks use the region benchmarks' store of 1,000,000
// random 3-D points in [0,1024)^3 (store1M): k nearest to random centres
// in the same cube, and the points within a radius. Every answer of the
// first round is checked against brute force over the store's points.
//
//	go test -run XXX -bench 'Nearby|Within' -count 6 ./engine/ | tee new.txt

func BenchmarkNearby(b *testing.B) {
	for _, k := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("3d-1M-k%d", k), func(b *testing.B) {
			ns := store1M.get(b, engine.NamespaceOptions{Dims: 3}, randomCube(1_000_000))
			centres := benchCentres(64)
			for _, c := range centres[:4] {
				checkNearbyBrute(b, ns, store1M.pts, c, k)
			}
			b.ReportAllocs()
			defer reportCPU(b)()
			i := 0
			for b.Loop() {
				got, err := ns.Nearby(ctx, centres[i%len(centres)], k, engine.NearbyOptions{})
				if err != nil || len(got) != k {
					b.Fatalf("Nearby: %d points, %v", len(got), err)
				}
				i++
			}
		})
	}
}

func BenchmarkWithin(b *testing.B) {
	for _, r := range []float64{10, 40} {
		b.Run(fmt.Sprintf("3d-1M-r%v", r), func(b *testing.B) {
			ns := store1M.get(b, engine.NamespaceOptions{Dims: 3}, randomCube(1_000_000))
			centres := benchCentres(64)
			hits := 0
			b.ReportAllocs()
			defer reportCPU(b)()
			i := 0
			for b.Loop() {
				seq, err := ns.Within(ctx, centres[i%len(centres)], r, engine.WithinOptions{})
				if err != nil {
					b.Fatal(err)
				}
				for range seq {
					hits++
				}
				i++
			}
			b.ReportMetric(float64(hits)/float64(i), "hits/op")
		})
	}
}

// reportCPU reports, when the returned function runs, the CPU time per
// operation of the benchmark's thread (locked to it meanwhile), as the
// region benchmarks do: on a shared machine it swings far less than the
// wall time.
func reportCPU(b *testing.B) func() {
	runtime.LockOSThread()
	cpu0 := threadCPU(b)
	return func() {
		if cpu := threadCPU(b); cpu0 != 0 || cpu != 0 {
			b.ReportMetric(float64(cpu-cpu0)/float64(b.N), "cpu-ns/op")
		}
		runtime.UnlockOSThread()
	}
}

func benchCentres(n int) [][]int32 {
	rng := rand.New(rand.NewPCG(30, uint64(n)))
	cs := make([][]int32, n)
	for i := range cs {
		cs[i] = []int32{rng.Int32N(1024), rng.Int32N(1024), rng.Int32N(1024)}
	}
	return cs
}

// checkNearbyBrute compares one Nearby with the k smallest distances over
// all points (as distances only: ties among the store's points are
// TestNearbyRandom's business).
func checkNearbyBrute(b *testing.B, ns *engine.Namespace, pts [][]int32, c []int32, k int) {
	d := make([]int64, len(pts))
	for i, p := range pts {
		for j := range p {
			x := int64(p[j]) - int64(c[j])
			d[i] += x * x
		}
	}
	slices.Sort(d)
	got, err := ns.Nearby(ctx, c, k, engine.NearbyOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range k {
		if int64(got[i].Dist*got[i].Dist+0.5) != d[i] {
			b.Fatalf("Nearby(%v): #%d at %v, want at √%d", c, i, got[i].Dist, d[i])
		}
	}
}
