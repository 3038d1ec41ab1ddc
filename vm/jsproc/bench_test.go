package jsproc_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/jsproc"
	"github.com/cubelinux/cube/vm/vmtest"
)

// BenchmarkRun is one run of a compiled program with one host call, the
// round trip cube stress's RUN makes.
func BenchmarkRun(b *testing.B) {
	p := newPool(b, jsproc.Options{MaxWorkers: 1, Env: benchEnv()})
	h := vmtest.NewHost(2)
	_ = h.Put(context.Background(), []int32{1, 0}, []byte("v"))
	prg := compile(b, p, `function run(a) { return cube.get([1, 0]) + ":" + a }`, vm.Limits{})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := prg.Run(context.Background(), h, []byte("x")); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompileRun is cube stress's pair: new code, compiled in a
// worker, then run once. With two workers the run may land on the worker
// that did not compile it.
func BenchmarkCompileRun(b *testing.B) {
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			p := newPool(b, jsproc.Options{MaxWorkers: workers})
			h := vmtest.NewHost(2)
			_ = h.Put(context.Background(), []int32{1, 0}, []byte("v"))
			b.ReportAllocs()
			var gen atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					n := gen.Add(1)
					code := fmt.Sprintf("const generation = %d\nfunction run(a) { return cube.get([1, 0]) + \":\" + a }", n)
					prg, err := p.Compile(context.Background(), []byte(code), vm.Limits{})
					if err != nil {
						b.Fatal(err)
					}
					if _, err := prg.Run(context.Background(), h, []byte("x")); err != nil {
						b.Fatal(err)
					}
					_ = prg.Close(context.Background())
				}
			})
		})
	}
}

func benchEnv() []string {
	if v := os.Getenv("BENCH_WORKER_ENV"); v != "" {
		return []string{v}
	}
	return nil
}
