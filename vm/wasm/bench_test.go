package wasm_test

import (
	"context"
	"encoding/binary"
	"sort"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/vmtest"
)

// reportP50 times each iteration and reports the median as p50-ns.
func reportP50(b *testing.B, op func()) {
	b.Helper()
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		t := time.Now()
		op()
		lat = append(lat, time.Since(t))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
		b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
	}
}

// BenchmarkRun_Trivial: read args, one get, write output, in a fresh
// instance per run.
func BenchmarkRun_Trivial(b *testing.B) {
	for _, iso := range []vm.Isolation{vm.Fresh, vm.Reuse} {
		b.Run(iso.String(), func(b *testing.B) {
			s := newSandbox(b)
			p := compile(b, s, "trivial", vm.Limits{Isolation: iso})
			h := vmtest.NewHost(3)
			_ = h.Put(ctx, []int32{1, 2, 3}, []byte("value"))
			args := coords(1, 2, 3)
			reportP50(b, func() {
				if res, err := p.Run(ctx, h, args); err != nil || len(res.Output) != 5 {
					b.Fatal(res, err)
				}
			})
		})
	}
}

// BenchmarkHostCall: the cost of one guest-to-host call (dims()), from a
// run making 1,000,000 of them: "cube" through the sandbox (the rewritten
// module, the ABI's checks and counting), "wazero" the same module
// unrewritten on a bare wazero runtime whose dims() is an empty Go
// function, the floor of any host call (issue 11: cube within 15% of it).
// "ratio" runs the two in turn in each iteration and reports cube's time
// over wazero's, a figure that the load of a shared machine moves far
// less than either time alone.
func BenchmarkHostCall(b *testing.B) {
	const n = 1_000_000
	args := coords(n)
	b.Run("cube", func(b *testing.B) {
		run := hostCallsCube(b, args)
		b.ReportAllocs()
		for b.Loop() {
			run()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/call")
	})
	b.Run("wazero", func(b *testing.B) {
		run := hostCallsWazero(b, args)
		b.ReportAllocs()
		for b.Loop() {
			run()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/call")
	})
	b.Run("ratio", func(b *testing.B) {
		cube, bare := hostCallsCube(b, args), hostCallsWazero(b, args)
		var tc, tw time.Duration
		for b.Loop() {
			t0 := time.Now()
			cube()
			t1 := time.Now()
			bare()
			tc, tw = tc+t1.Sub(t0), tw+time.Since(t1)
		}
		b.ReportMetric(float64(tc)/float64(tw), "cube/wazero")
	})
}

// hostCallsCube returns a function running testdata/hostcalls through
// the sandbox.
func hostCallsCube(b *testing.B, args []byte) func() {
	s := newSandbox(b)
	p := compile(b, s, "hostcalls", vm.Limits{})
	h := vmtest.NewHost(1)
	return func() {
		if _, err := p.Run(ctx, h, args); err != nil {
			b.Fatal(err)
		}
	}
}

// hostCallsWazero returns a function running testdata/hostcalls as it is
// on a bare wazero runtime with empty host functions.
func hostCallsWazero(b *testing.B, args []byte) func() {
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	b.Cleanup(func() { _ = rt.Close(ctx) })
	i32 := []api.ValueType{api.ValueTypeI32}
	_, err := rt.NewHostModuleBuilder("cube_v1").
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, m api.Module, s []uint64) {
		m.Memory().Write(uint32(s[0]), args)
		s[0] = 0
	}), []api.ValueType{api.ValueTypeI32, api.ValueTypeI32}, i32).Export("args_read").
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(context.Context, api.Module, []uint64) {}), nil, i32).Export("dims").
		Instantiate(ctx)
	if err != nil {
		b.Fatal(err)
	}
	m, err := rt.Instantiate(ctx, load(b, "hostcalls"))
	if err != nil {
		b.Fatal(err)
	}
	run := m.ExportedFunction("run")
	var stack [1]uint64
	return func() {
		if err := run.CallWithStack(ctx, stack[:]); err != nil {
			b.Fatal(err)
		}
	}
}

func aggregateHost() (*vmtest.Host, []byte) {
	h := vmtest.NewHost(2)
	v := make([]byte, 8)
	for x := range int32(256) {
		for y := range int32(256) {
			binary.LittleEndian.PutUint64(v, uint64(x*y))
			_ = h.Put(ctx, []int32{x, y}, v)
		}
	}
	return h, append(coords(0, 0), coords(255, 255)...)
}

// BenchmarkAggregate_WASM sums 65,536 values through region_next.
func BenchmarkAggregate_WASM(b *testing.B) { benchAggregate(b, "aggregate") }

// BenchmarkAggregate_Columns sums 65,536 values through region_columns
// (aggregate_columns.wat). The reference host has no bulk path, so this
// times the sandbox's one-point-at-a-time filling of the columns; the
// root package's BenchmarkAggregate/wasm-columns times the engine's.
func BenchmarkAggregate_Columns(b *testing.B) { benchAggregate(b, "aggregate_columns") }

// benchAggregate runs the aggregate module of testdata named module over
// aggregateHost's 65,536 points.
func benchAggregate(b *testing.B, module string) {
	s := newSandbox(b)
	p := compile(b, s, module, vm.Limits{})
	h, args := aggregateHost()
	b.ReportAllocs()
	for b.Loop() {
		res, err := p.Run(ctx, h, args)
		if err != nil || binary.LittleEndian.Uint64(res.Output[8:]) != 65536 {
			b.Fatal(err)
		}
	}
}

// BenchmarkAggregate_Go is the same sum written in Go against the host.
func BenchmarkAggregate_Go(b *testing.B) {
	h, _ := aggregateHost()
	b.ReportAllocs()
	for b.Loop() {
		var sum, n int64
		cur := h.Region(ctx, []int32{0, 0}, []int32{255, 255})
		for p, ok := cur.Next(); ok; p, ok = cur.Next() {
			if len(p.Value) >= 8 {
				sum += int64(binary.LittleEndian.Uint64(p.Value))
			}
			n++
		}
		cur.Close()
		if n != 65536 {
			b.Fatal(n)
		}
	}
}

// fixedNear answers every Nearby with the same ten neighbours (100-byte
// values), so BenchmarkNearby_ABI times the ABI alone: the call, the
// checks and the packing, with no search.
type fixedNear struct {
	vm.Host
	near []vm.Neighbor
}

func (h *fixedNear) Nearby(context.Context, []int32, int, float64) ([]vm.Neighbor, error) {
	return h.near, nil
}

// BenchmarkNearby_ABI: one nearby (k = 10) from a guest, per call in a run
// of 100, against a host that does not search (plugins' BenchmarkNearby
// times the real search).
func BenchmarkNearby_ABI(b *testing.B) {
	s := newSandbox(b)
	p := compile(b, s, "nearloop", vm.Limits{Isolation: vm.Reuse})
	h := &fixedNear{Host: vmtest.NewHost(3)}
	for i := range int32(10) {
		h.near = append(h.near, vm.Neighbor{Coord: []int32{i, i, i}, Value: make([]byte, 100), Dist: float64(i)})
	}
	centres := make([][]int32, 100)
	for i := range centres {
		centres[i] = []int32{int32(i), 0, 0}
	}
	args := nearArgs(centres...)
	b.ReportAllocs()
	for b.Loop() {
		if res, err := p.Run(ctx, h, args); err != nil || binary.LittleEndian.Uint32(res.Output) != 1000 {
			b.Fatal(res, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100, "ns/call")
}
