package engine_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/engine/curve"
	"github.com/cubelinux/cube/engine/vfs"
)

// deg turns degrees into a geo namespace's units (test data only: the
// degrees here have at most 7 decimals).
func deg(lon, lat float64) []int32 {
	return []int32{int32(math.Round(lon * engine.GeoScale)), int32(math.Round(lat * engine.GeoScale))}
}

// chordDist is an independent distance on the same sphere: the straight
// chord between the two unit vectors, turned into an arc. It shares no
// formula with the haversine, so a mistake in GeoDistance (axes swapped,
// a wrong scale) shows as a disagreement.
func chordDist(a, b []int32) float64 {
	vec := func(c []int32) [3]float64 {
		lon, lat := float64(c[0])/1e7*math.Pi/180, float64(c[1])/1e7*math.Pi/180
		return [3]float64{math.Cos(lat) * math.Cos(lon), math.Cos(lat) * math.Sin(lon), math.Sin(lat)}
	}
	u, v := vec(a), vec(b)
	dx, dy, dz := u[0]-v[0], u[1]-v[1], u[2]-v[2]
	return 2 * engine.EarthRadius * math.Asin(min(1, math.Sqrt(dx*dx+dy*dy+dz*dz)/2))
}

// TestGeoDistance checks the haversine against known distances and the
// chord formula. Break caught: taking the coordinates as (latitude,
// longitude) puts Paris-London at 389 km instead of 343.9.
func TestGeoDistance(t *testing.T) {
	paris, london := deg(2.3522, 48.8566), deg(-0.1276, 51.5072)
	if d := engine.GeoDistance(paris, london); math.Abs(d-343_900) > 500 {
		t.Errorf("Paris-London = %.0f m, want about 343.9 km", d)
	}
	if d := engine.GeoDistance(deg(0, 90), deg(0, -90)); math.Abs(d-math.Pi*engine.EarthRadius) > 1e-6 {
		t.Errorf("pole to pole = %v m, want πR = %v", d, math.Pi*engine.EarthRadius)
	}
	if d := engine.GeoDistance(deg(179.99, 0), deg(-179.99, 0)); math.Abs(d-2224.0) > 1 {
		t.Errorf("across the antimeridian: %v m, want 2224 (0.02° of the equator)", d)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		a, b := randGeo(rng), randGeo(rng)
		d, c := engine.GeoDistance(a, b), chordDist(a, b)
		if math.Abs(d-c) > 1e-3+1e-9*d {
			t.Fatalf("GeoDistance(%v, %v) = %v, chord formula %v", a, b, d, c)
		}
	}
}

func randGeo(rng *rand.Rand) []int32 {
	return []int32{int32(rng.Int64N(2*1_800_000_000+1) - 1_800_000_000), rng.Int32N(2*900_000_000+1) - 900_000_000}
}

// wantGeoNearby is the brute force: every point of the model by
// GeoDistance from c, then curve key; at most maxDist (0 = any).
func wantGeoNearby(cv *curve.Curve, model map[string]regionPoint, c []int32, k int, maxDist float64) []geoPoint {
	if maxDist == 0 {
		maxDist = math.Inf(1)
	}
	all := geoPoints(cv, model, c, maxDist)
	slices.SortFunc(all, func(a, b geoPoint) int {
		if a.d != b.d {
			if a.d < b.d {
				return -1
			}
			return 1
		}
		return a.key.Compare(b.key)
	})
	return all[:min(k, len(all))]
}

type geoPoint struct {
	c   []int32
	val []byte
	key curve.Key
	d   float64
}

// geoPoints returns the points at most maxDist from c.
func geoPoints(cv *curve.Curve, model map[string]regionPoint, c []int32, maxDist float64) []geoPoint {
	var all []geoPoint
	for _, p := range model {
		d := engine.GeoDistance(c, p.c)
		if d > maxDist {
			continue
		}
		all = append(all, geoPoint{p.c, p.val, cv.Encode(p.c), d})
	}
	return all
}

func checkGeoNearby(t testing.TB, cv *curve.Curve, model map[string]regionPoint, ns *engine.Namespace, c []int32, k int, maxDist float64) {
	t.Helper()
	want := wantGeoNearby(cv, model, c, k, maxDist)
	got, err := ns.Nearby(ctx, c, k, engine.NearbyOptions{MaxDist: maxDist})
	if err != nil {
		t.Fatalf("Nearby(%v, %d, maxdist %v): %v", c, k, maxDist, err)
	}
	if len(got) != len(want) {
		t.Fatalf("Nearby(%v, %d, maxdist %v): %d points, want %d", c, k, maxDist, len(got), len(want))
	}
	for i := range want {
		if !slices.Equal(got[i].Coord, want[i].c) || !bytes.Equal(got[i].Value, want[i].val) || got[i].Dist != want[i].d {
			t.Fatalf("Nearby(%v, %d, maxdist %v): #%d is %v at %v m, want %v at %v m", c, k, maxDist, i, got[i].Coord, got[i].Dist, want[i].c, want[i].d)
		}
	}
}

func checkGeoWithin(t testing.TB, cv *curve.Curve, model map[string]regionPoint, ns *engine.Namespace, c []int32, r float64, limit int) {
	t.Helper()
	want := geoPoints(cv, model, c, r)
	slices.SortFunc(want, func(a, b geoPoint) int { return a.key.Compare(b.key) })
	n, err := ns.CountWithin(ctx, c, r)
	if err != nil || n != len(want) {
		t.Fatalf("CountWithin(%v, %v m) = %d, %v; want %d", c, r, n, err, len(want))
	}
	if limit > 0 && len(want) > limit {
		want = want[:limit]
	}
	seq, err := ns.Within(ctx, c, r, engine.WithinOptions{Limit: limit})
	cs, vs, err := collect(seq, err)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != len(want) {
		t.Fatalf("Within(%v, %v m, limit %d): %d points, want %d", c, r, limit, len(cs), len(want))
	}
	for i := range want {
		if !slices.Equal(cs[i], want[i].c) || !bytes.Equal(vs[i], want[i].val) {
			t.Fatalf("Within(%v, %v m): #%d is %v, want %v (curve order)", c, r, i, cs[i], want[i].c)
		}
	}
}

// geoShapes draw the points of a data set: anywhere on the globe, or
// crowded where the boxes are hard (the antimeridian, the poles).
var geoShapes = []struct {
	name  string
	coord func(r *rand.Rand) []int32
	// centre draws a query's centre for the shape.
	centre func(r *rand.Rand) []int32
}{
	{"global", randGeo, randGeo},
	{"antimeridian", func(r *rand.Rand) []int32 {
		lon := 180 - r.Float64()*2
		if r.IntN(2) == 0 {
			lon = -lon
		}
		return deg(lon, r.Float64()*20-10)
	}, func(r *rand.Rand) []int32 {
		// On the antimeridian itself half the time, either spelling.
		lon := []float64{180, -180, 179.99, -179.99, 179.5}[r.IntN(5)]
		return deg(lon, r.Float64()*20-10)
	}},
	{"north-pole", func(r *rand.Rand) []int32 {
		return deg(r.Float64()*360-180, 90-r.Float64()*3)
	}, func(r *rand.Rand) []int32 {
		return deg(r.Float64()*360-180, 90-r.Float64()*2)
	}},
	{"south-pole", func(r *rand.Rand) []int32 {
		return deg(r.Float64()*360-180, -90+r.Float64()*3)
	}, func(r *rand.Rand) []int32 {
		return deg(r.Float64()*360-180, -90+r.Float64()*0.5)
	}},
	// Points on a coarse lattice, with the poles and ±180 themselves:
	// ties in distance, which curve order must break.
	{"lattice", func(r *rand.Rand) []int32 {
		return deg(float64(r.IntN(9)*45-180), float64(r.IntN(7)*30-90))
	}, func(r *rand.Rand) []int32 {
		return deg(float64(r.IntN(9)*45-180), float64(r.IntN(7)*30-90))
	}},
}

// TestGeoNearbyRandom compares Nearby, Within and CountWithin on a geo
// namespace with brute force by GeoDistance over every point, on points
// spread over the globe and crowded at the antimeridian and the poles.
// Breaks caught: a cover that does not wrap at ±180 (one box from
// lon-Δ to lon+Δ, clamped) fails "antimeridian" at once (and "global",
// "north-pole", "lattice"); a cover that, when the cap holds a pole,
// spans only ±90° of longitude instead of all of them (asin clamped at 1)
// fails "north-pole", "south-pole", "global" and "lattice". The margin
// geoCover adds is not caught here: rounding outwards to whole units
// already covers all but caps that nearly touch a pole.
func TestGeoNearbyRandom(t *testing.T) {
	seed := uint64(rand.Int64())
	t.Logf("seed %d", seed)
	for _, sh := range geoShapes {
		t.Run(sh.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			db := openMem(t, vfs.NewMem(), engine.Options{Sync: engine.SyncNone})
			ns, err := db.CreateNamespace(ctx, "g", engine.NamespaceOptions{Geo: true})
			if err != nil {
				t.Fatal(err)
			}
			cv, _ := curve.New(curve.Hilbert, 2)
			model := map[string]regionPoint{}
			for i := range 3000 {
				c := sh.coord(rng)
				v := []byte(fmt.Sprint(i))
				if err := ns.Put(ctx, c, v); err != nil {
					t.Fatal(err)
				}
				model[coordKey(c)] = regionPoint{cv.Encode(c), c, v}
			}
			radii := []float64{0, 1, 1000, 50_000, 300_000, 2_000_000, 12_000_000, 25_000_000, math.Inf(1)}
			// A first query makes the columnar run; the deletes and puts
			// after it stay in its delta (fewer than 1/16 of the run), so
			// the queries below read both.
			checkGeoWithin(t, cv, model, ns, sh.centre(rng), 1000, 0)
			for key, p := range model {
				if rng.IntN(40) == 0 {
					if _, err := ns.Delete(ctx, p.c); err != nil {
						t.Fatal(err)
					}
					delete(model, key)
				}
			}
			for i := range 50 {
				c := sh.coord(rng)
				v := []byte(fmt.Sprint("new", i))
				if err := ns.Put(ctx, c, v); err != nil {
					t.Fatal(err)
				}
				model[coordKey(c)] = regionPoint{cv.Encode(c), c, v}
			}
			for range 60 {
				c := sh.centre(rng)
				k := []int{1, 3, 10, 100}[rng.IntN(4)]
				checkGeoNearby(t, cv, model, ns, c, k, 0)
				r := radii[rng.IntN(len(radii))]
				if r > 0 {
					checkGeoNearby(t, cv, model, ns, c, k, r)
				}
				checkGeoWithin(t, cv, model, ns, c, r, 0)
				checkGeoWithin(t, cv, model, ns, c, r, 1+rng.IntN(20))
			}
			// And in a read-only transaction (its snapshot's view) and a
			// writable one (the B-tree with its own writes).
			rd := func(tx *engine.Tx) {
				c := sh.centre(rng)
				got, err := tx.Nearby(ctx, c, 10, engine.NearbyOptions{})
				want := wantGeoNearby(cv, model, c, 10, 0)
				if err != nil || len(got) != len(want) {
					t.Fatalf("tx.Nearby: %d, %v; want %d", len(got), err, len(want))
				}
				for i := range want {
					if !slices.Equal(got[i].Coord, want[i].c) {
						t.Fatalf("tx.Nearby(%v) #%d = %v, want %v", c, i, got[i].Coord, want[i].c)
					}
				}
			}
			ns.View(ctx, func(tx *engine.Tx) error { rd(tx); return nil })
			ns.Update(ctx, func(tx *engine.Tx) error { rd(tx); return nil })
		})
	}
}

// TestGeoAntimeridianAndPoles: the cases a person checks by hand.
func TestGeoAntimeridianAndPoles(t *testing.T) {
	db := openMem(t, vfs.NewMem(), engine.Options{Sync: engine.SyncNone})
	ns, err := db.CreateNamespace(ctx, "g", engine.NamespaceOptions{Geo: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range [][]int32{deg(-179.99, 0), deg(170, 0), deg(0, 89.9), deg(180, 89.95), deg(-90, -89.99)} {
		if err := ns.Put(ctx, p, []byte(fmt.Sprint(p))); err != nil {
			t.Fatal(err)
		}
	}
	near, err := ns.Nearby(ctx, deg(179.99, 0), 1, engine.NearbyOptions{})
	if err != nil || len(near) != 1 || !slices.Equal(near[0].Coord, deg(-179.99, 0)) || math.Abs(near[0].Dist-2224) > 1 {
		t.Errorf("nearest to (179.99, 0): %+v, %v; want (-179.99, 0) at 2.2 km", near, err)
	}
	if n, _ := ns.CountWithin(ctx, deg(180, 0), 5000); n != 1 {
		t.Errorf("within 5 km of (180, 0): %d points, want 1 (-179.99)", n)
	}
	// From the north pole, 20 km holds both points near it (0.1° and
	// 0.05° away), on opposite meridians.
	if n, _ := ns.CountWithin(ctx, deg(45, 90), 20_000); n != 2 {
		t.Errorf("within 20 km of the north pole: %d points, want 2", n)
	}
	if near, _ := ns.Nearby(ctx, deg(90, -90), 1, engine.NearbyOptions{}); len(near) != 1 || !slices.Equal(near[0].Coord, deg(-90, -89.99)) {
		t.Errorf("nearest to the south pole: %+v", near)
	}
}

// TestGeoOptionsAndRange: a geo namespace is 2-D, keeps its kind across
// the log and checkpoints, and refuses writes outside the globe with an
// error that says what was wrong. Break caught: dropping the geo bit
// from the checkpoint's create record makes the namespace plain after
// the checkpointed reopen (Info().Geo false, the write at lon 200
// accepted).
func TestGeoOptionsAndRange(t *testing.T) {
	if _, err := engine.ParseDegrees("x"); err == nil {
		t.Fatal("ParseDegrees(x) accepted")
	}
	mem := vfs.NewMem()
	o := engine.Options{Sync: engine.SyncNone, FS: mem, SegmentSize: 256 << 10}
	db, err := engine.Open("/data", o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateNamespace(ctx, "bad", engine.NamespaceOptions{Geo: true, Dims: 3}); !errors.Is(err, engine.ErrBadOptions) {
		t.Errorf("geo with 3 dims: %v, want ErrBadOptions", err)
	}
	g, err := db.CreateNamespace(ctx, "g", engine.NamespaceOptions{Geo: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateNamespace(ctx, "plain", engine.NamespaceOptions{Dims: 2}); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][]int32{deg(180, 90), deg(-180, -90), deg(0, 0)} {
		if err := g.Put(ctx, c, nil); err != nil {
			t.Errorf("Put(%v): %v", c, err)
		}
	}
	for _, c := range [][]int32{{1_800_000_001, 0}, {0, -900_000_001}, {math.MaxInt32, math.MinInt32}} {
		err := g.Put(ctx, c, nil)
		if !errors.Is(err, engine.ErrGeoRange) || !strings.Contains(err.Error(), "longitude first") {
			t.Errorf("Put(%v) = %v, want ErrGeoRange saying the order and units", c, err)
		}
		if err := g.Link(ctx, []int32{0, 0}, c, "x", 1, nil); !errors.Is(err, engine.ErrGeoRange) {
			t.Errorf("Link to %v = %v, want ErrGeoRange", c, err)
		}
		if _, err := g.Nearby(ctx, c, 1, engine.NearbyOptions{}); !errors.Is(err, engine.ErrGeoRange) {
			t.Errorf("Nearby(%v) = %v, want ErrGeoRange", c, err)
		}
	}
	err = g.Put(ctx, []int32{2_000_000_000, 0}, nil)
	if want := "got longitude 200, latitude 0"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Put(lon 200) = %v, want it to say %q", err, want)
	}
	check := func(db *engine.DB, when string) {
		t.Helper()
		g, err := db.Namespace("g")
		if err != nil {
			t.Fatal(err)
		}
		p, _ := db.Namespace("plain")
		if in := g.Info(); !in.Geo || in.Dims != 2 || in.Values != 3 || p.Info().Geo {
			t.Errorf("%s: g %+v, plain geo %v", when, in, p.Info().Geo)
		}
		if err := g.Put(ctx, []int32{2_000_000_000, 0}, nil); !errors.Is(err, engine.ErrGeoRange) {
			t.Errorf("%s: Put(lon 200) = %v", when, err)
		}
		if err := p.Put(ctx, []int32{2_000_000_000, 0}, nil); err != nil {
			t.Errorf("%s: a plain namespace refused %v", when, err)
		}
		if _, err := p.Delete(ctx, []int32{2_000_000_000, 0}); err != nil {
			t.Fatal(err)
		}
	}
	check(db, "before reopening")
	if err := db.Close(); err != nil { // Close writes a checkpoint
		t.Fatal(err)
	}
	db = openMem(t, mem, engine.Options{Sync: engine.SyncNone})
	check(db, "after a checkpoint")
}

// TestGeoFromLog: the create record alone (no checkpoint: the store
// crashes) brings a geo namespace back as geo. Break caught: decoding
// the curve byte without taking curveGeo off fails the reopen (curve
// 128 is unknown).
func TestGeoFromLog(t *testing.T) {
	mem := vfs.NewMem()
	db, crash := openMortal(t, mem, engine.Options{Sync: engine.SyncAlways})
	g, err := db.CreateNamespace(ctx, "g", engine.NamespaceOptions{Geo: true, Curve: curve.Morton})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Put(ctx, deg(2.3522, 48.8566), []byte("paris")); err != nil {
		t.Fatal(err)
	}
	crash()
	db = openMem(t, mem, engine.Options{Sync: engine.SyncAlways})
	g, err = db.Namespace("g")
	if err != nil {
		t.Fatal(err)
	}
	if in := g.Info(); !in.Geo || in.Curve != "morton" || in.Values != 1 {
		t.Errorf("after the log replay: %+v", in)
	}
}

func TestDegrees(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int32
		out  string
	}{
		{"2.3522", 23522000, "2.3522"},
		{"-0.1278", -1278000, "-0.1278"},
		{"48", 480000000, "48"},
		{"+180", 1800000000, "180"},
		{"-180.0000000", -1800000000, "-180"},
		{".5", 5000000, "0.5"},
		{"1.", 10000000, "1"},
		{"0.00000004", 0, "0"},
		{"0.00000005", 1, "0.0000001"},
		{"-0.12345675", -1234568, "-0.1234568"},
		{"214.7483647", math.MaxInt32, "214.7483647"},
		{"-214.7483648", math.MinInt32, "-214.7483648"},
	} {
		got, err := engine.ParseDegrees(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseDegrees(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
		if s := engine.FormatDegrees(got); s != tt.out {
			t.Errorf("FormatDegrees(%d) = %q, want %q", got, s, tt.out)
		}
	}
	for _, in := range []string{"", "-", ".", "1e5", "1.2.3", " 1", "0x10", "214.7483648", "99999", "1,5", "NaN", "inf"} {
		if v, err := engine.ParseDegrees(in); err == nil {
			t.Errorf("ParseDegrees(%q) = %d, want an error", in, v)
		}
	}
}

// FuzzDegrees: ParseDegrees never panics, and what it accepts formats
// and parses back to the same units.
func FuzzDegrees(f *testing.F) {
	for _, s := range []string{"2.3522", "-180", "0.00000005", "214.7483647", "1e5", ".", "-.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := engine.ParseDegrees(s)
		if err != nil {
			return
		}
		out := engine.FormatDegrees(v)
		if w, err := engine.ParseDegrees(out); err != nil || w != v {
			t.Fatalf("%q -> %d -> %q -> %d, %v", s, v, out, w, err)
		}
	})
}

// FuzzGeoNearby: points and a query from the bytes, near the
// antimeridian, a pole or anywhere; Nearby and Within must equal brute
// force by GeoDistance. Each coordinate is 2 bytes of offset from a base
// chosen by the first byte, so the points crowd where the boxes wrap.
func FuzzGeoNearby(f *testing.F) {
	f.Add([]byte{0, 3, 10, 1, 2, 3, 4, 5, 6, 7, 8, 250, 250, 9, 9})
	f.Add([]byte{1, 1, 200, 0, 0, 0xff, 0xff, 0x80, 0x80, 1, 1, 2, 2})
	f.Add([]byte{2, 20, 5, 7, 7, 0, 0, 0xff, 0, 0, 0xff})
	f.Add([]byte{3, 7, 90, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 3 {
			return
		}
		bases := [][2]int64{{1_800_000_000, 0}, {0, 900_000_000}, {0, -900_000_000}, {0, 0}}
		base := bases[int(data[0])%len(bases)]
		k := 1 + int(data[1])%16
		r := float64(data[2]) * float64(data[2]) * 100 // up to 6,500 km
		data = data[3:]
		// An offset of 2 bytes spans ±3.3° around the base, wrapped
		// into range (across ±180, reflected at the poles).
		coord := func() []int32 {
			if len(data) < 4 {
				return nil
			}
			dl := int64(int16(uint16(data[0])<<8|uint16(data[1]))) * 1000
			dp := int64(int16(uint16(data[2])<<8|uint16(data[3]))) * 1000
			data = data[4:]
			lon, lat := base[0]+dl, base[1]+dp
			for lon > 1_800_000_000 {
				lon -= 3_600_000_000
			}
			for lon < -1_800_000_000 {
				lon += 3_600_000_000
			}
			lat = max(min(lat, 900_000_000), -900_000_000)
			return []int32{int32(lon), int32(lat)}
		}
		centre := coord()
		if centre == nil {
			return
		}
		db := openMem(t, vfs.NewMem(), engine.Options{Sync: engine.SyncNone})
		ns, err := db.CreateNamespace(ctx, "f", engine.NamespaceOptions{Geo: true})
		if err != nil {
			t.Fatal(err)
		}
		cv, _ := curve.New(curve.Hilbert, 2)
		model := map[string]regionPoint{}
		for i := 0; i < 200; i++ {
			c := coord()
			if c == nil {
				break
			}
			v := []byte{byte(i)}
			if err := ns.Put(ctx, c, v); err != nil {
				t.Fatal(err)
			}
			model[coordKey(c)] = regionPoint{cv.Encode(c), c, v}
		}
		checkGeoNearby(t, cv, model, ns, centre, k, 0)
		checkGeoNearby(t, cv, model, ns, centre, k, r+1)
		checkGeoWithin(t, cv, model, ns, centre, r, 0)
	})
}
