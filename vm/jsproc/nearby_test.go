package jsproc_test

import (
	"context"
	"testing"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/jsproc"
	"github.com/cubelinux/cube/vm/vmtest"
)

// TestNearbyAcrossProcesses: cube.nearby and cube.within from a worker
// reach the run's host and bring back its answer, a radius scan of more
// points than one batch included (the cursor's further batches). Break it
// caught: the pool answering Within with Region's cursor over the box of
// the centre alone (one point came back).
func TestNearbyAcrossProcesses(t *testing.T) {
	p := newPool(t, jsproc.Options{})
	h := vmtest.NewHost(2)
	for i := int32(0); i < 600; i++ {
		h.Put(context.Background(), []int32{i, 0}, []byte{byte(i)})
	}
	prg := compile(t, p, `function run() {
		const near = cube.nearby([100, 0], 3, {maxDist: 1}).map(n => [n.c[0], n.d]);
		const all = cube.nearby([0, 7], 1000).length;
		const few = cube.within([10, 0], 2.5).toArray().map(p => p.c[0]);
		const many = cube.within([300, 0], 200).count();
		const limited = cube.within([300, 0], 200, {limit: 3}).toArray().length;
		return JSON.stringify({near, all, few, many, limited});
	}`, vm.Limits{})
	res, err := prg.Run(context.Background(), h, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"near":[[100,0],[99,1],[101,1]],"all":600,"few":[8,9,10,11,12],"many":401,"limited":3}`
	if got := string(res.Output); got != want {
		t.Fatalf("output %s, want %s", got, want)
	}
}
