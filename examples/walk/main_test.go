// The walk example: follow the lightest edges from a start until a value
// matches, in Go, C, AssemblyScript, WAT and JavaScript (see the sources
// under go/, c/, as/, wat/ and js/ for the contract and the rebuild
// commands).
package walk_test

import (
	"testing"

	"github.com/cubelinux/cube/examples/internal/extest"
	"github.com/cubelinux/cube/plugins/pdk/conformance"
	"github.com/cubelinux/cube/vm"
)

// TestWalk: a small road map; the cheapest road out of each town leads to
// the one with the inn.
func TestWalk(t *testing.T) {
	town := func(x, y int32, v string) vm.Point { return vm.Point{Coord: []int32{x, y}, Value: []byte(v)} }
	road := func(w float64, a, b []int32) vm.Edge { return vm.Edge{From: a, To: b, Label: "road", Weight: w} }
	d := conformance.Data{Dims: 2,
		Points: []vm.Point{town(0, 0, "home"), town(3, 1, "farm"), town(1, 4, "mill"), town(5, 5, "inn")},
		Edges: []vm.Edge{
			road(4, []int32{0, 0}, []int32{1, 4}),
			road(3, []int32{0, 0}, []int32{3, 1}),
			road(2.5, []int32{3, 1}, []int32{5, 5}),
			road(9, []int32{3, 1}, []int32{1, 4}),
		},
	}
	extest.Everywhere(t, "..", "walk", d, append(conformance.Coords(0, 0), "inn"...), "0,0 3,1 5,5")
}
