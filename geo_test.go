package cube_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cubelinux/cube"
)

// TestGeoJS: a JavaScript program in a GEO namespace, in this process
// and in a worker process, writes and reads degrees exactly, and its
// nearby and within give what the engine gives to Go (coordinates in
// units of 1e-7 degree, distances in metres), on random places
// anywhere, near the antimeridian and near a pole. Break caught: the
// jsproc request not carrying Geo (the worker's host says false): the
// worker's cube.put([2.3522, 48.8566]) fails, "coordinate element 0 must
// be an integer within int32, got 2.3522".
func TestGeoJS(t *testing.T) {
	for _, mode := range []string{"in-process", "worker"} {
		t.Run(mode, func(t *testing.T) {
			// The script's 600 puts are host calls (across processes, for
			// the worker): room for a busy machine under -race, as this
			// tests degrees and distances, not speed.
			o := cube.Options{Limits: cube.Limits{Timeout: 20 * time.Second}}
			if mode == "worker" {
				t.Setenv("CUBE_TEST_JS_WORKER", filepath.Join(t.TempDir(), "worker-ran"))
				o.JSWorker = []string{os.Args[0], "-test.run=^TestJSWorkerChild$"}
			}
			db := open(t, t.TempDir(), o)
			ns, err := db.CreateNamespace(ctx, "world", cube.NamespaceOptions{Geo: true})
			if err != nil {
				t.Fatal(err)
			}
			if !ns.Geo() || !ns.Info().Geo {
				t.Fatal("the namespace is not GEO")
			}
			c, err := db.Eval(ctx, "world", `cube.put([2.3522, 48.8566], "Paris"); cube.get([2.3522, 48.8566]) + " " + JSON.stringify(cube.nearby([2.3522, 48.8566], 1)[0].c)`, nil)
			if err != nil {
				t.Fatal(err)
			}
			if string(c.Output) != `Paris [2.3522,48.8566]` {
				t.Errorf("Paris from JS: %s", c.Output)
			}
			if v, err := ns.Get(ctx, []int32{23522000, 488566000}); err != nil || string(v) != "Paris" {
				t.Errorf("Paris from Go at (23522000, 488566000): %q %v", v, err)
			}
			rng := rand.New(rand.NewPCG(5, 6))
			deg := func(u int32) string { return cube.FormatDegrees(u) }
			var pts [][]int32
			for i := range 600 {
				var p []int32
				switch i % 3 {
				case 0:
					p = []int32{int32(rng.Int64N(3_600_000_001) - 1_800_000_000), rng.Int32N(1_800_000_001) - 900_000_000}
				case 1: // near the antimeridian
					p = []int32{1_800_000_000 - rng.Int32N(20_000_000), rng.Int32N(100_000_000)}
					if rng.IntN(2) == 0 {
						p[0] = -p[0]
					}
				case 2: // near the north pole
					p = []int32{int32(rng.Int64N(3_600_000_001) - 1_800_000_000), 900_000_000 - rng.Int32N(20_000_000)}
				}
				pts = append(pts, p)
			}
			var script strings.Builder
			script.WriteString("const ps = [")
			for _, p := range pts {
				fmt.Fprintf(&script, "[%s,%s],", deg(p[0]), deg(p[1]))
			}
			script.WriteString(`]; ps.forEach((p, i) => cube.put(p, "p" + i)); "ok"`)
			if _, err := db.Eval(ctx, "world", script.String(), nil); err != nil {
				t.Fatal(err)
			}
			for _, q := range [][]int32{{1_799_990_000, 50_000_000}, {-1_799_990_000, 1}, {0, 900_000_000}, {123_456_789, 899_000_000}, {0, 0}} {
				for _, r := range []float64{20_000, 500_000, 3_000_000} {
					// Go's answer, in the JS's own words.
					near, err := ns.Nearby(ctx, q, 7, cube.NearbyOptions{MaxDist: r})
					if err != nil {
						t.Fatal(err)
					}
					var want []string
					for _, n := range near {
						// JavaScript writes a number below 1e21 without an exponent.
						want = append(want, fmt.Sprintf("%s,%s,%s,%s", deg(n.Coord[0]), deg(n.Coord[1]), n.Value, strconv.FormatFloat(n.Dist, 'f', -1, 64)))
					}
					count, err := ns.CountWithin(ctx, q, r)
					if err != nil {
						t.Fatal(err)
					}
					js := fmt.Sprintf(`cube.nearby([%s, %s], 7, {maxDist: %v}).map(n => n.c[0] + "," + n.c[1] + "," + n.v + "," + n.d).join(";") + "|" + cube.within([%s, %s], %v).count()`,
						deg(q[0]), deg(q[1]), r, deg(q[0]), deg(q[1]), r)
					c, err := db.Eval(ctx, "world", js, nil)
					if err != nil {
						t.Fatal(err)
					}
					if w := strings.Join(want, ";") + "|" + fmt.Sprint(count); strings.Trim(string(c.Output), `"`) != w {
						t.Errorf("near %v within %v m:\nJS %s\nGo %s", q, r, c.Output, w)
					}
				}
			}
		})
	}
}
