package engine_test

import (
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/cubelinux/cube/engine"
)

// BenchmarkOpen measures opening a store at rest after a checkpoint: the
// shape of issue 10's bench (random 3-D points in [0,1024)^3 with 100-byte
// values, and a graph over the first tenth of them with 8 out-edges each),
// at -open.points points (200,000 by default; the bench's 1,000,000 takes
// about a minute to build). The store is built once in -open.dir (a fresh
// temporary directory, removed at the end, when empty); an existing store
// there is reused, so that runs of an old and a new build open the same
// files:
//
//	go test -run XXX -bench Open -count 6 -open.points 1000000 -open.dir /tmp/open1m ./engine/
var (
	openPoints = flag.Int("open.points", 200_000, "BenchmarkOpen: points in the store (the graph has a tenth of them as nodes)")
	openDir    = flag.String("open.dir", "", "BenchmarkOpen: the store's directory, built there if it holds none (default: a temporary one)")
)

func BenchmarkOpen(b *testing.B) {
	dir := *openDir
	if dir == "" {
		dir = filepath.Join(b.TempDir(), "store")
	}
	if _, err := os.Stat(filepath.Join(dir, "checkpoint", "MANIFEST")); err != nil {
		buildOpenStore(b, dir, *openPoints)
	}
	o := engine.Options{Sync: engine.SyncNone, CheckpointInterval: -1, CheckpointLogSize: 1 << 40}
	b.ReportAllocs()
	cpu0 := processCPU(b)
	for b.Loop() {
		db, err := engine.Open(dir, o)
		if err != nil {
			b.Fatal(err)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// buildOpenStore writes BenchmarkOpen's store: n points in transactions of
// 10,000, then the graph's edges, then a checkpoint, and closes it.
func buildOpenStore(b *testing.B, dir string, n int) {
	b.Helper()
	db, err := engine.Open(dir, engine.Options{Sync: engine.SyncNone, CheckpointInterval: -1, CheckpointLogSize: 1 << 40})
	if err != nil {
		b.Fatal(err)
	}
	ns, err := db.CreateNamespace(ctx, "pts", engine.NamespaceOptions{Dims: 3})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(10, 10))
	seen := make(map[[3]int32]bool, n)
	pts := make([][3]int32, 0, n)
	for len(pts) < n {
		p := [3]int32{rng.Int32N(1024), rng.Int32N(1024), rng.Int32N(1024)}
		if !seen[p] {
			seen[p] = true
			pts = append(pts, p)
		}
	}
	val := make([]byte, 100)
	const batch = 10_000
	for i := 0; i < len(pts); i += batch {
		err := ns.Update(ctx, func(tx *engine.Tx) error {
			for _, p := range pts[i:min(i+batch, len(pts))] {
				val[0], val[1] = byte(p[0]), byte(p[1])
				if err := tx.Put(p[:], val); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	nodes := n / 10
	for i := 0; i < nodes; i += batch / 8 {
		err := ns.Update(ctx, func(tx *engine.Tx) error {
			for u := i; u < min(i+batch/8, nodes); u++ {
				for range 8 {
					v := rng.IntN(nodes)
					if err := tx.Link(pts[u][:], pts[v][:], "to", float64(v%100), nil); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if _, err := db.Checkpoint(ctx); err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
}
