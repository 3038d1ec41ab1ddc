package cube_test

import (
	"context"
	"encoding/binary"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/vm"
)

// reportP50 times each iteration and reports the median and the 99th
// percentile as p50-ns and p99-ns.
func reportP50(b *testing.B, op func()) {
	b.Helper()
	lat := make([]time.Duration, 0, 1<<16)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		t := time.Now()
		op()
		lat = append(lat, time.Since(t))
	}
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
		b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
	}
}

func benchDB(b *testing.B) *cube.DB {
	b.Helper()
	db, err := cube.Open(b.TempDir(), cube.Options{Engine: engine.Options{Sync: engine.SyncNone}, TelemetryInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// BenchmarkRun_Trivial: read args, one get, write output, through DB.Run
// (snapshot, version check, sandbox, telemetry) for a WAT guest and for
// JavaScript, both read-only.
func BenchmarkRun_Trivial(b *testing.B) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		kind vm.Kind
		code func() []byte
		args []byte
	}{
		{"wat", vm.WASM, func() []byte { return mustRead(b, "testdata/get.wasm") }, coordArgs(1, 2, 3)},
		{"js", vm.JS, func() []byte { return []byte(`function run(a) { return cube.get([1, 2, a.length]) }`) }, []byte("abc")},
	} {
		b.Run(tc.name, func(b *testing.B) {
			db := benchDB(b)
			ns, err := db.CreateNamespace(ctx, "b", cube.NamespaceOptions{Dims: 3})
			if err != nil {
				b.Fatal(err)
			}
			ns.Put(ctx, []int32{1, 2, 3}, []byte("value"))
			if _, err := db.Prog(ctx, "b", "t", tc.kind, tc.code(), cube.ProgOptions{ReadOnly: true}); err != nil {
				b.Fatal(err)
			}
			reportP50(b, func() {
				res, err := db.Run(ctx, "b", "t", tc.args)
				if err != nil || string(res.Output) != "value" {
					b.Fatalf("%q %v", res.Output, err)
				}
			})
		})
	}
}

// aggSide is the side of the square aggregated: 256 x 256 = 65,536 points.
const aggSide = 256

func aggDB(b *testing.B) (*cube.DB, *cube.Namespace) {
	ctx := context.Background()
	db := benchDB(b)
	ns, err := db.CreateNamespace(ctx, "agg", cube.NamespaceOptions{Dims: 2})
	if err != nil {
		b.Fatal(err)
	}
	err = ns.Update(ctx, func(tx *cube.Tx) error {
		for x := int32(0); x < aggSide; x++ {
			for y := int32(0); y < aggSide; y++ {
				if err := tx.Put([]int32{x, y}, binary.LittleEndian.AppendUint64(nil, uint64(x+y))); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return db, ns
}

const aggWant = aggSide * aggSide * (aggSide - 1) // sum of x+y over the square

// BenchmarkAggregate: the sum of 65,536 values, by a WASM program through
// DB.Run and by Go against the engine directly. The WASM program reads the
// region as packed records with region_next (wasm,
// vm/wasm/testdata/aggregate.wat, the ABI example the sandbox tests run
// too) or as columns with region_columns (wasm-columns,
// aggregate_columns.wat). Issue 11's goal: wasm-columns within 1.3x of go.
func BenchmarkAggregate(b *testing.B) {
	ctx := context.Background()
	for _, tc := range []struct{ name, file string }{
		{"wasm", "vm/wasm/testdata/aggregate.wasm"},
		{"wasm-columns", "vm/wasm/testdata/aggregate_columns.wasm"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			db, _ := aggDB(b)
			if _, err := db.Prog(ctx, "agg", "sum", vm.WASM, mustRead(b, tc.file), cube.ProgOptions{ReadOnly: true}); err != nil {
				b.Fatal(err)
			}
			args := coordArgs(0, 0, aggSide-1, aggSide-1)
			b.ReportAllocs()
			for b.Loop() {
				res, err := db.Run(ctx, "agg", "sum", args)
				if err != nil || len(res.Output) != 16 {
					b.Fatal(res, err)
				}
				if s, n := binary.LittleEndian.Uint64(res.Output), binary.LittleEndian.Uint64(res.Output[8:]); s != aggWant || n != aggSide*aggSide {
					b.Fatalf("sum %d count %d", s, n)
				}
			}
		})
	}
	b.Run("go", func(b *testing.B) {
		_, ns := aggDB(b)
		b.ReportAllocs()
		for b.Loop() {
			var sum, n uint64
			err := ns.View(ctx, func(tx *cube.Tx) error {
				seq, err := tx.Region([]int32{0, 0}, []int32{aggSide - 1, aggSide - 1}, 0)
				if err != nil {
					return err
				}
				for _, v := range seq {
					if len(v) >= 8 {
						sum += binary.LittleEndian.Uint64(v)
					}
					n++
				}
				return nil
			})
			if err != nil || sum != aggWant || n != aggSide*aggSide {
				b.Fatal(sum, n, err)
			}
		}
	})
}

// BenchmarkGoGuest_FirstRun: Prog of a Go (GOOS=wasip1) guest, the
// aggregate example's, then its first Run, on a store opened anew for each
// iteration beside a compilation cache that already holds the module (as
// after a restart of the daemon). The time of each step is reported too
// (prog-ns, run-ns). Issue 11's goal: the pair within 50 ms.
func BenchmarkGoGuest_FirstRun(b *testing.B) {
	ctx := context.Background()
	code := mustRead(b, "examples/aggregate/go/aggregate.wasm")
	cacheDir := b.TempDir()
	fill := func(db *cube.DB) {
		ns, err := db.CreateNamespace(ctx, "g", cube.NamespaceOptions{Dims: 2})
		if err != nil {
			b.Fatal(err)
		}
		for i := range int32(4) {
			if err := ns.Put(ctx, []int32{i, i}, []byte("21")); err != nil {
				b.Fatal(err)
			}
		}
	}
	open := func() *cube.DB {
		db, err := cube.Open(b.TempDir(), cube.Options{Engine: engine.Options{Sync: engine.SyncNone}, TelemetryInterval: -1, CacheDir: cacheDir})
		if err != nil {
			b.Fatal(err)
		}
		fill(db)
		return db
	}
	args := coordArgs(0, 0, 3, 3)
	warm := open()
	if _, err := warm.Prog(ctx, "g", "agg", vm.WASM, code, cube.ProgOptions{ReadOnly: true}); err != nil {
		b.Fatal(err)
	}
	warm.Close()
	var progT, runT time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		db := open()
		b.StartTimer()
		t0 := time.Now()
		if _, err := db.Prog(ctx, "g", "agg", vm.WASM, code, cube.ProgOptions{ReadOnly: true}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		res, err := db.Run(ctx, "g", "agg", args)
		if err != nil || string(res.Output) != "sum=84 count=4" {
			b.Fatalf("%q %v", res.Output, err)
		}
		progT += t1.Sub(t0)
		runT += time.Since(t1)
		b.StopTimer()
		db.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(progT.Nanoseconds())/float64(b.N), "prog-ns")
	b.ReportMetric(float64(runT.Nanoseconds())/float64(b.N), "run-ns")
}

func mustRead(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// coordArgs packs int32s little-endian, the way WASM guests read
// coordinates.
func coordArgs(v ...int32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	return b
}
