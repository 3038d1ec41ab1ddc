package curve_test

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/cubelinux/cube/engine/curve"
)

func benchPoints(dims int) [][]int32 {
	r := rand.New(rand.NewPCG(1, 2))
	pts := make([][]int32, 1024)
	for i := range pts {
		pts[i] = make([]int32, dims)
		for j := range pts[i] {
			pts[i][j] = int32(r.Uint32())
		}
	}
	return pts
}

var sink curve.Key

func BenchmarkEncode(b *testing.B) {
	for _, k := range kinds {
		for _, d := range []int{1, 2, 3, 4, 8} {
			b.Run(fmt.Sprintf("%v-%dd", k, d), func(b *testing.B) {
				c := mustNew(b, k, d)
				pts := benchPoints(d)
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					sink = c.Encode(pts[i&1023])
					i++
				}
			})
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, k := range kinds {
		for _, d := range []int{1, 2, 3, 4, 8} {
			b.Run(fmt.Sprintf("%v-%dd", k, d), func(b *testing.B) {
				c := mustNew(b, k, d)
				pts := benchPoints(d)
				keys := make([]curve.Key, len(pts))
				for i, p := range pts {
					keys[i] = c.Encode(p)
				}
				out := make([]int32, d)
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					c.Decode(keys[i&1023], out)
					i++
				}
			})
		}
	}
}

// BenchmarkRanges decomposes boxes at random places with budget 64 and
// reports the over-scan (keys covered per point in the box) and ranges.
func BenchmarkRanges(b *testing.B) {
	cases := []struct {
		dims, side int
	}{{2, 256}, {3, 16}, {3, 64}, {3, 128}, {4, 16}}
	for _, k := range kinds {
		for _, tc := range cases {
			b.Run(fmt.Sprintf("%v-%dd-%d", k, tc.dims, tc.side), func(b *testing.B) {
				c := mustNew(b, k, tc.dims)
				r := rand.New(rand.NewPCG(3, 4))
				boxes := make([][2][]int32, 64)
				for i := range boxes {
					lo, hi := make([]int32, tc.dims), make([]int32, tc.dims)
					for j := range lo {
						lo[j] = int32(r.IntN(1<<24)) - 1<<23
						hi[j] = lo[j] + int32(tc.side) - 1
					}
					boxes[i] = [2][]int32{lo, hi}
				}
				var keys, points float64
				var nr int
				for _, bx := range boxes {
					rs := c.Ranges(bx[0], bx[1], 64)
					f, _ := new(big.Float).SetInt(rangeKeys(rs, tc.dims)).Float64()
					keys += f
					points += boxPoints(bx[0], bx[1])
					nr += len(rs)
				}
				dst := make([]curve.Range, 0, 64)
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					bx := boxes[i&63]
					dst = c.AppendRanges(dst[:0], bx[0], bx[1], 64)
					i++
				}
				b.ReportMetric(keys/points, "overscan")
				b.ReportMetric(float64(nr)/float64(len(boxes)), "ranges")
			})
		}
	}
}

func BenchmarkNextInBox(b *testing.B) {
	for _, k := range kinds {
		b.Run(fmt.Sprintf("%v-3d-64", k), func(b *testing.B) {
			c := mustNew(b, k, 3)
			lo, hi := []int32{-20, 1000, 77}, []int32{43, 1063, 140}
			pts := benchPoints(3)
			keys := make([]curve.Key, 0, len(pts))
			for _, p := range pts {
				for j := range p {
					p[j] = lo[j] - 10 + p[j]&127
				}
				keys = append(keys, c.Encode(p))
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				sink, _ = c.NextInBox(keys[i&1023], lo, hi)
				i++
			}
		})
	}
}
