package main

import (
	"context"
	"flag"
	"math/rand/v2"
	"testing"
)

var benchPoints = flag.Int("walk.points", 1_000_000, "BenchmarkCubeWalk: 3-D points (the first 100,000 are the graph)")

// BenchmarkCubeWalk is the bench's 3-hop walk on cube alone, loaded as
// the full run loads it, so that a profile of it holds nothing else:
//
//	go test -run XXX -bench CubeWalk -benchtime 2000x -cpuprofile /tmp/w.prof
func BenchmarkCubeWalk(b *testing.B) {
	ctx := context.Background()
	d := makeDataset(1, 1024, *benchPoints, 0, 100_000)
	s := newCube(b.TempDir())
	if err := s.load(ctx, d); err != nil {
		b.Fatal(err)
	}
	defer s.close()
	rng := rand.New(rand.NewPCG(7, 7))
	nodes := 0
	for b.Loop() {
		a, err := s.walk(ctx, d.pts[rng.IntN(d.nodes)], 3)
		if err != nil {
			b.Fatal(err)
		}
		nodes += a.n
	}
	b.ReportMetric(float64(nodes)/float64(b.N), "nodes/op")
}
