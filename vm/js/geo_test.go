package js_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/vmtest"
)

// TestGeo: in a geographic namespace a program reads and writes degrees,
// exact to 1e-7 (2.3522 goes in as 23522000 units and comes out as
// 2.3522, never 2.3521999), and nearby, within and their options measure
// metres. Breaks caught: truncating instead of rounding (int32(f*1e7))
// stores [0.57, 0.57] at 5699999 units; dividing in float32 prints
// 2.3522000312805176.
func TestGeo(t *testing.T) {
	sb := newSB(t)
	h := vmtest.NewGeoHost()
	p := compile(t, sb, `function run() {
		cube.put([2.3522, 48.8566], "Paris");
		cube.put([-0.1276, 51.5072], "London");
		cube.put([2.2945, 48.8584], "Eiffel");
		cube.put([179.99, -16.5], "east");
		cube.put([-179.99, -16.5], "west");
		cube.put([0.57, 0.57], "x"); // 0.57 * 1e7 is 5699999.999999999 in doubles
		const out = [cube.geo, cube.get([2.3522, 48.8566])];
		const n = cube.nearby([2.3522, 48.8566], 2);
		out.push(JSON.stringify(n.map(x => x.c)), n[1].v, Math.round(n[1].d));
		out.push(cube.within([2.3522, 48.8566], 50000).count());
		out.push(cube.within([2.3522, 48.8566], 400000).count());
		out.push(cube.nearby([2.3522, 48.8566], 5, {maxDist: 10000}).length);
		out.push(cube.nearby([179.999, -16.5], 2).map(x => x.v).join("+"));
		out.push(JSON.stringify(cube.region([2, 48], [3, 49]).toArray().map(x => x.c)));
		cube.link([2.3522, 48.8566], [-0.1276, 51.5072], "eurostar");
		out.push(JSON.stringify(cube.edges([2.3522, 48.8566])[0].to));
		out.push(JSON.stringify(cube.path([2.3522, 48.8566], [-0.1276, 51.5072]).coords));
		return out.join(" ");
	}`, vm.Limits{})
	got := run(t, p, h, "")
	want := `true Paris [[2.3522,48.8566],[2.2945,48.8584]] Eiffel 4226 2 3 2 east+west [[2.2945,48.8584],[2.3522,48.8566]] [-0.1276,51.5072] [[2.3522,48.8566],[-0.1276,51.5072]]`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// The host holds the exact units.
	if v, ok, _ := h.Get(context.Background(), []int32{23522000, 488566000}); !ok || string(v) != "Paris" {
		t.Errorf("the host has no Paris at (23522000, 488566000): %q %v", v, ok)
	}
	if _, ok, _ := h.Get(context.Background(), []int32{5700000, 5700000}); !ok {
		t.Errorf("[0.57, 0.57] is not at (5700000, 5700000)")
	}
}

// TestGeoErrors: a coordinate that is not [longitude, latitude] in range
// is a TypeError that says what a geographic coordinate is.
func TestGeoErrors(t *testing.T) {
	sb := newSB(t)
	h := vmtest.NewGeoHost()
	for _, tt := range []struct{ src, want string }{
		{`cube.get([200, 0])`, "cube.get: the longitude must be within -180..180 degrees"},
		{`cube.put([0, -90.5], "x")`, "cube.put: the latitude must be within -90..90 degrees"},
		{`cube.get([1, 2, 3])`, "is [longitude, latitude] in degrees"},
		{`cube.nearby(["2", 48], 1)`, "the longitude must be a number of degrees"},
		{`cube.within([NaN, 0], 5)`, "the longitude must be within"},
		{`cube.region([170, 0], [-170, 1])`, "cube.region: min 170 > max -170 degrees of longitude"},
	} {
		p := compile(t, sb, "function run() { "+tt.src+" }", vm.Limits{})
		_, err := p.Run(context.Background(), h, nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.src, err, tt.want)
		}
	}
}
