// The writer example: double every number in a box, in Go, C,
// AssemblyScript, WAT and JavaScript (see the sources under go/, c/, as/,
// wat/ and js/ for the contract and the rebuild commands).
package writer_test

import (
	"testing"

	"github.com/cubelinux/cube/examples/internal/extest"
	"github.com/cubelinux/cube/plugins/pdk/conformance"
	"github.com/cubelinux/cube/vm"
)

// TestWriter: three numbers and a label in a 1-D namespace; the numbers are
// doubled (what is written is checked by the conformance table).
func TestWriter(t *testing.T) {
	d := conformance.Data{Dims: 1, Points: []vm.Point{
		{Coord: []int32{1}, Value: []byte("5")},
		{Coord: []int32{2}, Value: []byte("-8")},
		{Coord: []int32{3}, Value: []byte("total")},
		{Coord: []int32{4}, Value: []byte("40")},
	}}
	extest.Everywhere(t, "..", "writer", d, conformance.Coords(0, 10), "wrote=3")
}
