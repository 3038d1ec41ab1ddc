package engine_test

import (
	"compress/gzip"
	"encoding/csv"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/cubelinux/cube/engine"
)

// The geo benchmarks: NEARBY k=10 and WITHIN 50 km on the bundled cities
// (examples/cities/cities.csv.gz, 171,075 places, centred on places drawn
// from them, where people ask) and on 1,000,000 points uniform on the
// sphere (centred anywhere). The first answers of each are checked
// against brute force by GeoDistance.
//
//	go test -run XXX -bench 'Geo' -count 6 ./engine/ | tee geo.txt

// The geo stores are built like the region benchmarks' (regionStore).
var (
	geoCities regionStore
	geo1M     regionStore
)

// cityPoints reads the bundled cities' (lng, lat), distinct.
func cityPoints(b *testing.B) [][]int32 {
	f, err := os.Open("../examples/cities/cities.csv.gz")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	r := csv.NewReader(z)
	seen := map[[2]int32]bool{}
	var pts [][]int32
	for i := 0; ; i++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			continue // name,country,lat,lng
		}
		lat, err1 := engine.ParseDegrees(rec[2])
		lng, err2 := engine.ParseDegrees(rec[3])
		if err1 != nil || err2 != nil {
			b.Fatalf("line %d: %v", i+1, rec)
		}
		if p := [2]int32{lng, lat}; !seen[p] {
			seen[p] = true
			pts = append(pts, []int32{lng, lat})
		}
	}
	return pts
}

// sphere1M is 1,000,000 points uniform on the sphere.
func sphere1M(*testing.B) [][]int32 {
	rng := rand.New(rand.NewPCG(40, 1))
	pts := make([][]int32, 0, 1_000_000)
	for range 1_000_000 {
		pts = append(pts, sphereRand(rng))
	}
	return pts
}

func sphereRand(rng *rand.Rand) []int32 {
	lon := rng.Float64()*360 - 180
	lat := math.Asin(2*rng.Float64()-1) * 180 / math.Pi
	return []int32{int32(math.Round(lon * 1e7)), int32(math.Round(lat * 1e7))}
}

type geoBench struct {
	name    string
	store   *regionStore
	pts     func(*testing.B) [][]int32
	centres func(pts [][]int32) [][]int32
}

var geoBenches = []geoBench{
	{"cities", &geoCities, cityPoints, func(pts [][]int32) [][]int32 {
		rng := rand.New(rand.NewPCG(41, 1))
		cs := make([][]int32, 64)
		for i := range cs {
			cs[i] = pts[rng.IntN(len(pts))]
		}
		return cs
	}},
	{"sphere-1M", &geo1M, sphere1M, func([][]int32) [][]int32 {
		rng := rand.New(rand.NewPCG(42, 1))
		cs := make([][]int32, 64)
		for i := range cs {
			cs[i] = sphereRand(rng)
		}
		return cs
	}},
}

func BenchmarkGeoNearby(b *testing.B) {
	for _, gb := range geoBenches {
		b.Run(gb.name+"-k10", func(b *testing.B) {
			ns := gb.store.get(b, engine.NamespaceOptions{Geo: true}, func() [][]int32 { return gb.pts(b) })
			centres := gb.centres(gb.store.pts)
			for _, c := range centres[:2] {
				checkGeoBrute(b, ns, gb.store.pts, c, 10)
			}
			b.ReportAllocs()
			defer reportCPU(b)()
			i := 0
			for b.Loop() {
				got, err := ns.Nearby(ctx, centres[i%len(centres)], 10, engine.NearbyOptions{})
				if err != nil || len(got) != 10 {
					b.Fatalf("Nearby: %d points, %v", len(got), err)
				}
				i++
			}
		})
	}
}

func BenchmarkGeoWithin(b *testing.B) {
	for _, gb := range geoBenches {
		b.Run(gb.name+"-50km", func(b *testing.B) {
			ns := gb.store.get(b, engine.NamespaceOptions{Geo: true}, func() [][]int32 { return gb.pts(b) })
			centres := gb.centres(gb.store.pts)
			hits := 0
			b.ReportAllocs()
			defer reportCPU(b)()
			i := 0
			for b.Loop() {
				seq, err := ns.Within(ctx, centres[i%len(centres)], 50_000, engine.WithinOptions{})
				if err != nil {
					b.Fatal(err)
				}
				for range seq {
					hits++
				}
				i++
			}
			b.ReportMetric(float64(hits)/float64(i), "hits/op")
		})
	}
}

// checkGeoBrute compares one Nearby's distances with the k smallest by
// GeoDistance over all points.
func checkGeoBrute(b *testing.B, ns *engine.Namespace, pts [][]int32, c []int32, k int) {
	d := make([]float64, len(pts))
	for i, p := range pts {
		d[i] = engine.GeoDistance(c, p)
	}
	slices.Sort(d)
	got, err := ns.Nearby(ctx, c, k, engine.NearbyOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range k {
		if got[i].Dist != d[i] {
			b.Fatalf("Nearby(%v): #%d at %v m, want %v", c, i, got[i].Dist, d[i])
		}
	}
	n, err := ns.CountWithin(ctx, c, 50_000)
	want := 0
	for _, x := range d {
		if x <= 50_000 {
			want++
		}
	}
	if err != nil || n != want {
		b.Fatalf("CountWithin(%v, 50 km) = %d, %v; want %d", c, n, err, want)
	}
}
