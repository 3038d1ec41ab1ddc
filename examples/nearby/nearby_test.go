package nearby

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/cubelinux/cube"
)

// TestNearby runs nearby.js on a real store against a brute-force filter
// of the same places: JSON places (as import --latlng stores them), plain
// values (as README.md's "cube put" stores), and boxes at random centres
// and radii. Breaks it caught: a box half as wide (lng ± r/2: places at
// the edge missing), and JSON.parse without the fallback (the plain value
// "Paris" failed the run, as the demo's first version did).
func TestNearby(t *testing.T) {
	ctx := context.Background()
	db, err := cube.Open(t.TempDir(), cube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ns, err := db.CreateNamespace(ctx, "world", cube.NamespaceOptions{Dims: 2})
	if err != nil {
		t.Fatal(err)
	}
	type place struct {
		x, y  int32
		label string
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var places []place
	seen := map[[2]int32]bool{}
	for i := range 2000 {
		x, y := int32(rng.IntN(20000))-10000, int32(rng.IntN(20000))-10000
		if seen[[2]int32{x, y}] {
			continue
		}
		seen[[2]int32{x, y}] = true
		var v, label string
		switch i % 3 {
		case 0:
			v, label = fmt.Sprintf("plain %d", i), fmt.Sprintf("plain %d", i)
		case 1:
			b, _ := json.Marshal(map[string]string{"name": fmt.Sprint("town ", i), "country": "FR"})
			v, label = string(b), fmt.Sprintf("town %d (FR)", i)
		default:
			b, _ := json.Marshal(map[string]string{"name": fmt.Sprint("village ", i)})
			v, label = string(b), fmt.Sprintf("village %d", i)
		}
		if err := ns.Put(ctx, []int32{x, y}, []byte(v)); err != nil {
			t.Fatal(err)
		}
		places = append(places, place{x, y, label})
	}
	if err := ns.Put(ctx, []int32{23522, 488566}, []byte("Paris")); err != nil {
		t.Fatal(err)
	}
	places = append(places, place{23522, 488566, "Paris"})
	if _, err := db.Prog(ctx, "world", "nearby", cube.JS, JS, cube.ProgOptions{ReadOnly: true}); err != nil {
		t.Fatal(err)
	}
	type query struct{ lng, lat, r float64 }
	queries := []query{{2.35, 48.85, 0.1}, {0, 0, 0}, {0, 0, 2}}
	for range 30 {
		queries = append(queries, query{rng.Float64()*2 - 1, rng.Float64()*2 - 1, rng.Float64() * 0.5})
	}
	for _, q := range queries {
		arg := fmt.Sprintf("%g,%g,%g", q.lng, q.lat, q.r)
		res, err := db.Run(ctx, "world", "nearby", []byte(arg))
		if err != nil {
			t.Fatalf("run nearby %s: %v", arg, err)
		}
		at := func(d float64) int32 { return int32(math.Round(d * 1e4)) }
		var want []string
		for _, p := range places {
			if p.x >= at(q.lng-q.r) && p.x <= at(q.lng+q.r) && p.y >= at(q.lat-q.r) && p.y <= at(q.lat+q.r) {
				want = append(want, p.label)
			}
		}
		sort.Strings(want)
		if got := string(res.Output); got != strings.Join(want, "\n") {
			t.Errorf("nearby %s: got %d places\n%.300s\nwant %d\n%.300s", arg, strings.Count(got, "\n")+1, got, len(want), strings.Join(want, "\n"))
		}
	}
	for _, bad := range []string{"", "1,2", "a,b,c", "1,2,-1"} {
		_, err := db.Run(ctx, "world", "nearby", []byte(bad))
		if err == nil || !strings.Contains(err.Error(), `"lng,lat,r"`) {
			t.Errorf("nearby %q: %v, want an error naming the argument's form", bad, err)
		}
	}
}
