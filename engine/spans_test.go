package engine_test

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/engine/curve"
	"github.com/cubelinux/cube/engine/vfs"
)

// TestRegionSpansOverDelta reads a dense 64x64 grid through RegionSpans
// while the delta of recent writes holds overwrites, deletes and new
// points inside the stretches the run would hand over whole, in both
// curves, and compares every box with brute force. It also checks that
// some stretch holds more than one point, so the bulk path is what ran.
//
// Breaks it caught: a stretch not cut at the delta's next key (an
// overwritten point came back beside its new value, a deleted one came
// back, and a new point came after the stretch, out of curve order); a
// stretch running one key past the end of the cursor's run (a point
// outside the box came back).
func TestRegionSpansOverDelta(t *testing.T) {
	for _, kind := range []curve.Kind{curve.Hilbert, curve.Morton} {
		t.Run(kind.String(), func(t *testing.T) {
			db := openMem(t, vfs.NewMem(), engine.Options{Sync: engine.SyncNone})
			defer db.Close()
			ns, err := db.CreateNamespace(ctx, "s", engine.NamespaceOptions{Dims: 2, Curve: kind})
			if err != nil {
				t.Fatal(err)
			}
			cv, err := curve.New(kind, 2)
			if err != nil {
				t.Fatal(err)
			}
			model := map[string]regionPoint{}
			put := func(tx *engine.Tx, x, y int32, v uint64) error {
				c := []int32{x, y}
				val := binary.LittleEndian.AppendUint64(nil, v)
				model[coordKey(c)] = regionPoint{cv.Encode(c), c, val}
				return tx.Put(c, val)
			}
			err = ns.Update(ctx, func(tx *engine.Tx) error {
				for x := range int32(64) {
					for y := range int32(64) {
						if (x+y)%7 != 3 { // holes, for new points to fill
							if err := put(tx, x, y, uint64(x*64+y)); err != nil {
								return err
							}
						}
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			// A snapshot seals the grid into the run; then a few writes,
			// too few to merge, which the next seal puts in the delta.
			first, err := ns.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			first.Release()
			err = ns.Update(ctx, func(tx *engine.Tx) error {
				for i := int32(0); i < 60; i++ {
					x, y := (i*13)%64, (i*29)%64
					switch i % 3 {
					case 0:
						if err := put(tx, x, y, 1_000_000+uint64(i)); err != nil {
							return err
						}
					case 1:
						if _, err := tx.Delete([]int32{x, y}); err != nil {
							return err
						}
						delete(model, coordKey([]int32{x, y}))
					default:
						if err := put(tx, x, 3-x+7*(i%9), 2_000_000+uint64(i)); err != nil {
							return err
						}
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			tx, err := ns.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Release()
			longest := 0
			for _, box := range [][4]int32{{0, 0, 63, 63}, {0, 0, 31, 31}, {5, 9, 40, 22}, {17, 0, 17, 63}, {32, 32, 100, 100}, {-5, -5, 3, 70}} {
				lo, hi := []int32{box[0], box[1]}, []int32{box[2], box[3]}
				t.Run(fmt.Sprint(box), func(t *testing.T) {
					checkRegion(t, cv, model, lo, hi, 0, spanRegion(t, tx), snapCount(t, tx))
				})
				seq, err := tx.RegionSpans(lo, hi)
				if err != nil {
					t.Fatal(err)
				}
				for _, vs := range seq {
					longest = max(longest, len(vs))
				}
			}
			if longest < 16 {
				t.Errorf("the longest stretch held %d points: the bulk path did not run", longest)
			}
		})
	}
}
