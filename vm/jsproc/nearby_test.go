package jsproc_test

import (
	"context"
	"strconv"
	"strings"
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

// TestColumnsAcrossProcesses: region.columns in a worker reads the run's
// host through the cursor batches (more points than one batch) in every
// values mode, and its memory check ends a run with the same typed error
// as in process. Break caught: the worker's remote cursor made to end
// after its first batch (n 256, not 600).
func TestColumnsAcrossProcesses(t *testing.T) {
	p := newPool(t, jsproc.Options{})
	h := vmtest.NewHost(2)
	for i := int32(0); i < 600; i++ {
		h.Put(context.Background(), []int32{i, -i}, []byte(strconv.Itoa(int(i))))
	}
	prg := compile(t, p, `function run() {
		const box = () => cube.region([0, -1000], [1000, 0]);
		const s = box().columns(), num = box().columns({values: "number"}), by = box().columns({values: "bytes"});
		let sum = 0, axis = 0;
		for (let i = 0; i < num.n; i++) { sum += num.v[i]; axis += s.c[0][i] + s.c[1][i]; }
		return JSON.stringify({n: [s.n, num.n, by.n], sum, axis, v: s.v[599] === String.fromCharCode(...by.v.subarray(by.off[599], by.off[600]))});
	}`, vm.Limits{})
	res, err := prg.Run(context.Background(), h, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(res.Output), `{"n":[600,600,600],"sum":179700,"axis":0,"v":true}`; got != want {
		t.Fatalf("output %s, want %s", got, want)
	}
	big := compile(t, p, `function run() {
		try { cube.region([0, -1000], [1000, 0]).columns() } catch (e) {}
		return "swallowed";
	}`, vm.Limits{MemoryBytes: 40 << 10})
	_, err = big.Run(context.Background(), h, nil)
	if vm.KindOf(err) != vm.KindMemoryLimit || !strings.Contains(err.Error(), "region.columns") {
		t.Fatalf("columns past 40 KiB in a worker: %v, want a memory limit naming region.columns", err)
	}
}
