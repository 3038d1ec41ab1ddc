package engine_test

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/engine/vfs"
)

// benchmarkWalk walks issue 10's graph (pathGraphBench: 100,000 nodes, 8
// random out-edges each) three hops deep from random starts and reports
// how many nodes a walk reaches (about 580: 1 + 8 + 64 + 512 less the
// repeats).
func benchmarkWalk(b *testing.B, order engine.Order) {
	ns, _ := pathGraphBench(b)
	rng := rand.New(rand.NewPCG(3, 500))
	starts := make([][]int32, 256)
	for i := range starts {
		starts[i] = []int32{rng.Int32N(graphNodes)}
	}
	o := engine.WalkOptions{Order: order, MaxDepth: 3, Label: "e"}
	b.ReportAllocs()
	b.ResetTimer()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0 := threadCPU(b)
	nodes := 0
	for i := 0; b.Loop(); i++ {
		steps, err := ns.Walk(ctx, starts[i%len(starts)], o)
		if err != nil {
			b.Fatal(err)
		}
		nodes += len(steps)
	}
	b.ReportMetric(float64(threadCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(nodes)/float64(b.N), "nodes/op")
}

// BenchmarkWalk3Hops is issue 10's "3-hop walk (500 nodes)" (goal 16 µs),
// breadth first; BenchmarkWalk3HopsDFS the same walk depth first.
func BenchmarkWalk3Hops(b *testing.B)    { benchmarkWalk(b, engine.BFS) }
func BenchmarkWalk3HopsDFS(b *testing.B) { benchmarkWalk(b, engine.DFS) }

// BenchmarkLink1000 is the write side of the adjacency: transactions of
// 1,000 random links among 100,000 nodes (the cost is per link).
func BenchmarkLink1000(b *testing.B) {
	db, err := engine.Open("/links", engine.Options{FS: vfs.NewMem(), Sync: engine.SyncNone, CheckpointInterval: -1, CheckpointLogSize: 1 << 40})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ns, err := db.CreateNamespace(ctx, "g", engine.NamespaceOptions{Dims: 1})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	for b.Loop() {
		err := ns.Update(ctx, func(tx *engine.Tx) error {
			for range 1000 {
				if err := tx.Link([]int32{rng.Int32N(graphNodes)}, []int32{rng.Int32N(graphNodes)}, "e", rng.Float64(), nil); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
