// The aggregate example: the sum of the decimal integers in a box, in Go,
// C, AssemblyScript, WAT and JavaScript (see the sources under go/, c/, as/,
// wat/ and js/ for the contract and the rebuild commands).
package aggregate_test

import (
	"testing"

	"github.com/cubelinux/cube/examples/internal/extest"
	"github.com/cubelinux/cube/plugins/pdk/conformance"
	"github.com/cubelinux/cube/vm"
)

// TestAggregate: readings in a 3-D namespace; the box holds 4 numbers and
// one value that is not a number.
func TestAggregate(t *testing.T) {
	d := conformance.Data{Dims: 3, Points: []vm.Point{
		{Coord: []int32{0, 0, 0}, Value: []byte("21")},
		{Coord: []int32{1, 0, 0}, Value: []byte("19")},
		{Coord: []int32{1, 1, 0}, Value: []byte("-3")},
		{Coord: []int32{1, 1, 1}, Value: []byte("100")},
		{Coord: []int32{0, 1, 1}, Value: []byte("offline")},
		{Coord: []int32{5, 5, 5}, Value: []byte("1000")}, // outside
	}}
	args := conformance.Coords(0, 0, 0, 1, 1, 1)
	extest.Everywhere(t, "..", "aggregate", d, args, "sum=137 count=4")
}
