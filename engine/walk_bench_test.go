package engine_test

import (
	"math/rand/v2"
	"testing"

	"github.com/cubelinux/cube/engine"
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
	nodes := 0
	for i := 0; b.Loop(); i++ {
		steps, err := ns.Walk(ctx, starts[i%len(starts)], o)
		if err != nil {
			b.Fatal(err)
		}
		nodes += len(steps)
	}
	b.ReportMetric(float64(nodes)/float64(b.N), "nodes/op")
}

// BenchmarkWalk3Hops is issue 10's "3-hop walk (500 nodes)" (goal 16 µs),
// breadth first; BenchmarkWalk3HopsDFS the same walk depth first.
func BenchmarkWalk3Hops(b *testing.B)    { benchmarkWalk(b, engine.BFS) }
func BenchmarkWalk3HopsDFS(b *testing.B) { benchmarkWalk(b, engine.DFS) }
