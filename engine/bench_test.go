package engine_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/engine/vfs"
)

const benchN = 1 << 20 // points stored for the read benchmarks

var (
	loadedOnce sync.Once
	loadedDB   *engine.DB
	loadedNS   *engine.Namespace
	loadedPts  [][3]int32
)

// loaded is a 3-D store holding benchN random points in [0,1024)^3 with
// 100-byte values, plus a full 256x256x1 slab at z = 2000 for the region
// benchmark, on the in-memory FS with sync none.
func loaded(b *testing.B) (*engine.Namespace, [][3]int32) {
	loadedOnce.Do(func() {
		db, err := engine.Open("/bench", engine.Options{FS: vfs.NewMem(), Sync: engine.SyncNone, CheckpointInterval: -1, CheckpointLogSize: 1 << 40})
		if err != nil {
			b.Fatal(err)
		}
		ns, err := db.CreateNamespace(ctx, "b", engine.NamespaceOptions{Dims: 3})
		if err != nil {
			b.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 1))
		val := make([]byte, 100)
		pts := make([][3]int32, 0, benchN) // flat: reading a key is not a cache miss of its own
		for len(pts) < benchN {
			p := [3]int32{rng.Int32N(1024), rng.Int32N(1024), rng.Int32N(1024)}
			if err := ns.Put(ctx, p[:], val); err != nil {
				b.Fatal(err)
			}
			pts = append(pts, p)
		}
		for x := int32(0); x < 256; x++ {
			for y := int32(0); y < 256; y++ {
				ns.Put(ctx, []int32{x, y, 2000}, val[:8])
			}
		}
		// Order the index now, so that the first timed scan does not pay
		// for the whole load.
		ns.Count(ctx, []int32{0, 0, 0}, []int32{0, 0, 0})
		loadedDB, loadedNS, loadedPts = db, ns, pts
	})
	return loadedNS, loadedPts
}

func BenchmarkGet(b *testing.B) {
	ns, pts := loaded(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := ns.Get(ctx, pts[i&(benchN-1)][:]); err != nil {
			b.Fatal(err)
		}
		i += 7919 // a prime stride: random-looking, no generator cost
	}
}

func BenchmarkRegion256x256(b *testing.B) {
	ns, _ := loaded(b)
	min, max := []int32{0, 0, 2000}, []int32{255, 255, 2000}
	b.ReportAllocs()
	runtime.LockOSThread() // threadCPU reads this thread's clock
	defer runtime.UnlockOSThread()
	cpu0 := threadCPU(b)
	for b.Loop() {
		seq, err := ns.Region(ctx, min, max, 0)
		if err != nil {
			b.Fatal(err)
		}
		n, bytes := 0, 0
		for _, v := range seq {
			n++
			bytes += len(v)
		}
		if n != 65536 {
			b.Fatalf("region returned %d", n)
		}
	}
	b.ReportMetric(float64(threadCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

func BenchmarkRegionCount256x256(b *testing.B) {
	ns, _ := loaded(b)
	min, max := []int32{0, 0, 2000}, []int32{255, 255, 2000}
	b.ReportAllocs()
	for b.Loop() {
		if n, _ := ns.Count(ctx, min, max); n != 65536 {
			b.Fatalf("count %d", n)
		}
	}
}

// BenchmarkPut: in-memory puts (sync none) of random coordinates into a
// store that already holds benchN points.
func BenchmarkPut(b *testing.B) {
	ns, _ := loaded(b)
	rng := rand.New(rand.NewPCG(2, 2))
	val := make([]byte, 100)
	pts := make([][3]int32, 1<<16)
	for i := range pts {
		pts[i] = [3]int32{rng.Int32N(1 << 20), rng.Int32N(1 << 20), rng.Int32N(1 << 20)}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := ns.Put(ctx, pts[i&(1<<16-1)][:], val); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkPutSameKey: in-memory puts (sync none) of one coordinate,
// over and over, as a counter or redis-benchmark's one key is written.
func BenchmarkPutSameKey(b *testing.B) {
	ns, _ := loaded(b)
	val := make([]byte, 3)
	b.ReportAllocs()
	for b.Loop() {
		if err := ns.Put(ctx, []int32{1, 2, 3}, val); err != nil {
			b.Fatal(err)
		}
	}
}

// bulkPoints are the million random points of PEERS.md's bulk load.
func bulkPoints() ([][3]int32, []byte) {
	rng := rand.New(rand.NewPCG(3, 3))
	pts := make([][3]int32, 1_000_000)
	for i := range pts {
		pts[i] = [3]int32{rng.Int32N(1024), rng.Int32N(1024), rng.Int32N(1024)}
	}
	return pts, make([]byte, 100)
}

// bulkStore opens an empty in-memory store (sync none) outside the timer.
func bulkStore(b *testing.B) (*engine.DB, *engine.Namespace) {
	b.StopTimer()
	defer b.StartTimer()
	db, err := engine.Open("/bulk", engine.Options{FS: vfs.NewMem(), Sync: engine.SyncNone, CheckpointInterval: -1, CheckpointLogSize: 1 << 40})
	if err != nil {
		b.Fatal(err)
	}
	ns, err := db.CreateNamespace(ctx, "b", engine.NamespaceOptions{Dims: 3})
	if err != nil {
		b.Fatal(err)
	}
	return db, ns
}

// BenchmarkBulkLoad loads 1,000,000 distinct random points into an empty
// store (sync none), as PEERS.md's bulk-load row; reports points/s.
func BenchmarkBulkLoad(b *testing.B) {
	pts, val := bulkPoints()
	b.ReportAllocs()
	for b.Loop() {
		db, ns := bulkStore(b)
		for i := range pts {
			if err := ns.Put(ctx, pts[i][:], val); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		db.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(len(pts))*float64(b.N)/b.Elapsed().Seconds(), "points/s")
}

// BenchmarkBulkLoadBatch loads the same million points in transactions of
// 100,000 puts, as the peers' bulk-load rows do (PEERS.md section 2).
func BenchmarkBulkLoadBatch(b *testing.B) {
	pts, val := bulkPoints()
	b.ReportAllocs()
	for b.Loop() {
		db, ns := bulkStore(b)
		for lo := 0; lo < len(pts); lo += 100_000 {
			err := ns.Update(ctx, func(tx *engine.Tx) error {
				for i := lo; i < lo+100_000; i++ {
					if err := tx.Put(pts[i][:], val); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		db.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(len(pts))*float64(b.N)/b.Elapsed().Seconds(), "points/s")
}

// BenchmarkDurablePut measures acknowledged puts in SyncAlways mode on the
// real disk (in the test's temp dir), beside a raw fdatasync loop measured
// in the same run, so their ratio does not depend on the machine's mood.
func BenchmarkDurablePut(b *testing.B) {
	b.Run("raw-fdatasync-overwrite", func(b *testing.B) {
		f, err := os.Create(filepath.Join(b.TempDir(), "raw"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		const size = 64 << 20
		if err := f.Truncate(size); err != nil {
			b.Fatal(err)
		}
		zero := make([]byte, 1<<20)
		for off := int64(0); off < size; off += int64(len(zero)) {
			f.WriteAt(zero, off)
		}
		f.Sync()
		rec := make([]byte, 128)
		off := int64(0)
		for b.Loop() {
			if _, err := f.WriteAt(rec, off); err != nil {
				b.Fatal(err)
			}
			if err := fdatasync(f); err != nil {
				b.Fatal(err)
			}
			off = (off + 128) % size
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	})
	for _, writers := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			db, err := engine.Open(b.TempDir(), engine.Options{CheckpointInterval: -1})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			ns, _ := db.CreateNamespace(ctx, "d", engine.NamespaceOptions{Dims: 3})
			val := make([]byte, 100)
			var next atomic.Int64
			b.ResetTimer()
			var wg sync.WaitGroup
			for w := 0; w < writers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(w), 5))
					for next.Add(1) <= int64(b.N) {
						if err := ns.Put(ctx, []int32{rng.Int32N(1024), rng.Int32N(1024), rng.Int32N(1024)}, val); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
		})
	}
}
