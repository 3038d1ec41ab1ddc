package cube_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"log"
	"os"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/vm"
)

// Example opens a store, writes values, registers a JavaScript program and
// a WebAssembly one (testdata/get.wat, built with wat2wasm), and runs
// them.
func Example() {
	dir, err := os.MkdirTemp("", "cube-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	db, err := cube.Open(dir, cube.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	ns, err := db.CreateNamespace(ctx, "world", engine.NamespaceOptions{Dims: 3})
	if err != nil {
		log.Fatal(err)
	}
	for x := int32(0); x < 3; x++ {
		if err := ns.Put(ctx, []int32{x, 0, 0}, fmt.Appendf(nil, "%d", 10*(x+1))); err != nil {
			log.Fatal(err)
		}
	}

	// JavaScript: sum the values of a region (read-only: runs on a snapshot).
	sum := `function run(args) {
		let s = 0
		for (const p of cube.region([0, 0, 0], [9, 9, 9])) s += Number(p.v)
		return {sum: s}
	}`
	if _, err := db.Prog(ctx, "world", "sum", vm.JS, []byte(sum), cube.ProgOptions{ReadOnly: true}); err != nil {
		log.Fatal(err)
	}
	res, err := db.Run(ctx, "world", "sum", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("sum: %s\n", res.Output)

	// WebAssembly (ABI v1): args are a coordinate, output is its value.
	code, err := os.ReadFile("testdata/get.wasm")
	if err != nil {
		log.Fatal(err)
	}
	info, err := db.Prog(ctx, "world", "get", vm.WASM, code, cube.ProgOptions{ReadOnly: true})
	if err != nil {
		log.Fatal(err)
	}
	args := binary.LittleEndian.AppendUint32(nil, 2)
	args = binary.LittleEndian.AppendUint32(args, 0)
	args = binary.LittleEndian.AppendUint32(args, 0)
	res, err = db.Run(ctx, "world", "get", args)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("get [2 0 0]: %s (version: %d hex digits)\n", res.Output, len(info.Version))

	// A read-write script: its writes commit when it succeeds.
	if _, err := db.Eval(ctx, "world", `cube.put([5, 5, 5], "40"); "ok"`, nil); err != nil {
		log.Fatal(err)
	}
	res, _ = db.Run(ctx, "world", "sum", nil)
	fmt.Printf("sum: %s\n", res.Output)

	info, _ = db.ProgInfo("world", "sum")
	fmt.Printf("%s: %d runs\n", info.Name, info.Telemetry.Runs)
	// Output:
	// sum: {"sum":60}
	// get [2 0 0]: 30 (version: 64 hex digits)
	// sum: {"sum":100}
	// sum: 2 runs
}
