package plugins

import (
	"context"
	"encoding/binary"
	"iter"
	"testing"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/vm"
)

// BenchmarkRegionCursor: the host's region cursor alone, summing 65,536
// values, against ranging over the engine's iterator (BenchmarkRegionDirect).
func BenchmarkRegionCursor(b *testing.B) {
	ns := aggNS(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		var sum uint64
		ns.View(ctx, func(tx *engine.Tx) error {
			h := newHost(tx)
			c := h.Region(ctx, []int32{0, 0}, []int32{255, 255})
			for {
				p, ok := c.Next()
				if !ok {
					break
				}
				sum += binary.LittleEndian.Uint64(p.Value)
			}
			h.close()
			return nil
		})
	}
}

func BenchmarkRegionDirect(b *testing.B) {
	ns := aggNS(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		var sum uint64
		ns.View(ctx, func(tx *engine.Tx) error {
			seq, _ := tx.Region([]int32{0, 0}, []int32{255, 255}, 0)
			for _, v := range seq {
				sum += binary.LittleEndian.Uint64(v)
			}
			return nil
		})
	}
}

func aggNS(b *testing.B) *engine.Namespace {
	ctx := context.Background()
	db, err := engine.Open(b.TempDir(), engine.Options{Sync: engine.SyncNone})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	ns, err := db.CreateNamespace(ctx, "agg", engine.NamespaceOptions{Dims: 2})
	if err != nil {
		b.Fatal(err)
	}
	ns.Update(ctx, func(tx *engine.Tx) error {
		for x := int32(0); x < 256; x++ {
			for y := int32(0); y < 256; y++ {
				tx.Put([]int32{x, y}, binary.LittleEndian.AppendUint64(nil, uint64(x+y)))
			}
		}
		return nil
	})
	return ns
}

func BenchmarkRegionEager(b *testing.B) {
	ns := aggNS(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		var sum uint64
		ns.View(ctx, func(tx *engine.Tx) error {
			seq, _ := tx.Region([]int32{0, 0}, []int32{255, 255}, 0)
			var vals [][]byte
			for _, v := range seq {
				vals = append(vals, v)
			}
			for _, v := range vals {
				sum += binary.LittleEndian.Uint64(v)
			}
			return nil
		})
	}
}

func BenchmarkRegionPull2(b *testing.B) {
	ns := aggNS(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		var sum uint64
		ns.View(ctx, func(tx *engine.Tx) error {
			seq, _ := tx.Region([]int32{0, 0}, []int32{255, 255}, 0)
			next, stop := iter.Pull2(seq)
			defer stop()
			for {
				_, v, ok := next()
				if !ok {
					break
				}
				sum += binary.LittleEndian.Uint64(v)
			}
			return nil
		})
	}
}

func BenchmarkRegionFill(b *testing.B) {
	ns := aggNS(b)
	ctx := context.Background()
	pts := make([]vm.Point, 0, 65536)
	arena := make([]int32, 2*65536)
	b.ReportAllocs()
	for b.Loop() {
		var sum uint64
		ns.View(ctx, func(tx *engine.Tx) error {
			seq, _ := tx.Region([]int32{0, 0}, []int32{255, 255}, 0)
			pts = pts[:0]
			for c, v := range seq {
				i := len(pts)
				cc := arena[i*2 : i*2+2 : i*2+2]
				copy(cc, c)
				pts = append(pts, vm.Point{Coord: cc, Value: v})
			}
			for _, p := range pts {
				sum += binary.LittleEndian.Uint64(p.Value)
			}
			return nil
		})
	}
}
