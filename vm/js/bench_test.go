package js_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/js"
	"github.com/cubelinux/cube/vm/vmtest"
)

// BenchmarkTrivialRun: read args, one get, return output; reports p50.
func BenchmarkTrivialRun(b *testing.B) {
	sb := newSB(b)
	h := vmtest.NewHost(3)
	h.Put(context.Background(), []int32{1, 2, 3}, []byte("v"))
	p := compile(b, sb, `function run(a) { return a + cube.get([1, 2, 3]) }`, vm.Limits{})
	ctx := context.Background()
	args := []byte("x")
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := time.Now()
		res, err := p.Run(ctx, h, args)
		lat = append(lat, time.Since(t))
		if err != nil || string(res.Output) != "xv" {
			b.Fatalf("%q %v", res.Output, err)
		}
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}

// BenchmarkRuntimeBuild is the cost of a pool miss: a locked-down runtime.
func BenchmarkRuntimeBuild(b *testing.B) {
	sb := newSB(b)
	h := vmtest.NewHost(1)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		// Eval builds an unfrozen runtime; compile builds a frozen one.
		if _, err := sb.Eval(context.Background(), h, "1", nil, vm.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompile(b *testing.B) {
	sb := newSB(b)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		p, err := sb.Compile(context.Background(), []byte(fmt.Sprintf("function run(a) { return %d }", i)), vm.Limits{})
		if err != nil {
			b.Fatal(err)
		}
		p.Close(context.Background())
	}
}

const side = 256 // 256 x 256 = 65,536 points

func regionHost(b *testing.B) *vmtest.Host {
	h := vmtest.NewHost(2)
	ctx := context.Background()
	for x := int32(0); x < side; x++ {
		for y := int32(0); y < side; y++ {
			h.Put(ctx, []int32{x, y}, []byte(strconv.Itoa(int(x+y)%10)))
		}
	}
	return h
}

const wantSum = 294_920 // sum of (x+y)%10 over the 256 x 256 box

// BenchmarkRegionSum compares a 65,536-point region sum in JavaScript (an
// object per point, and region.columns) with the same loop in Go over the
// same host.
func BenchmarkRegionSum(b *testing.B) {
	h := regionHost(b)
	b.Run("js", func(b *testing.B) {
		sb := newSB(b)
		p := compile(b, sb, `function run() {
			let s = 0;
			for (const p of cube.region([0, 0], [255, 255])) s += +p.v;
			return s;
		}`, vm.Limits{Timeout: time.Minute})
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			res, err := p.Run(context.Background(), h, nil)
			if err != nil || string(res.Output) != strconv.Itoa(wantSum) {
				b.Fatalf("%q %v", res.Output, err)
			}
		}
	})
	for _, tc := range []struct{ name, src string }{
		// The batch API: strings, summed in JavaScript.
		{"js-columns", `function run() {
			const {n, v} = cube.region([0, 0], [255, 255]).columns();
			let s = 0;
			for (let i = 0; i < n; i++) s += +v[i];
			return s;
		}`},
		// The batch API with the host reading the numbers.
		{"js-columns-number", `function run() {
			const {n, v} = cube.region([0, 0], [255, 255]).columns({values: "number"});
			let s = 0;
			for (let i = 0; i < n; i++) s += v[i];
			return s;
		}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			sb := newSB(b)
			p := compile(b, sb, tc.src, vm.Limits{Timeout: time.Minute})
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				res, err := p.Run(context.Background(), h, nil)
				if err != nil || string(res.Output) != strconv.Itoa(wantSum) {
					b.Fatalf("%q %v", res.Output, err)
				}
			}
		})
	}
	b.Run("go", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			cur := h.Region(context.Background(), []int32{0, 0}, []int32{255, 255})
			s := 0
			for p, ok := cur.Next(); ok; p, ok = cur.Next() {
				n, _ := strconv.Atoi(string(p.Value))
				s += n
			}
			cur.Close()
			if s != wantSum {
				b.Fatal(s)
			}
		}
	})
}

var _ = js.Options{}
