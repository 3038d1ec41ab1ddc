package engine_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/cubelinux/cube/engine"
)

// Example is README.md's "Using the engine", run (the README leaves out
// the error checks): a store in a directory, a 3-D namespace, a value, a
// transaction that writes a value and two edges, a region in curve order,
// a walk along the edges and a least-weight path. TestSnippetsAreExamples
// in the root package fails if a README line is not here, in order.
func Example() {
	dir, err := os.MkdirTemp("", "engine-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	db, err := engine.Open(dir, engine.Options{}) // durable: fsync per commit, shared by concurrent writers
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	ns, err := db.CreateNamespace(ctx, "world", engine.NamespaceOptions{Dims: 3})
	if err != nil {
		log.Fatal(err)
	}
	err = ns.Put(ctx, []int32{1, 2, 3}, []byte("hello"))
	if err != nil {
		log.Fatal(err)
	}
	v, err := ns.Get(ctx, []int32{1, 2, 3})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("get: %s\n", v)

	a, b, c := []int32{0, 0, 0}, []int32{5, 5, 5}, []int32{9, 9, 9}
	err = ns.Update(ctx, func(tx *engine.Tx) error { // atomic, serializable, durable on return
		if err := tx.Put(b, []byte("b")); err != nil {
			return err
		}
		if err := tx.Link(a, b, "road", 1.5, nil); err != nil {
			return err
		}
		return tx.Link(b, c, "road", 2, nil)
	})
	if err != nil {
		log.Fatal(err)
	}
	seq, err := ns.Region(ctx, []int32{0, 0, 0}, []int32{9, 9, 9}, 0)
	if err != nil {
		log.Fatal(err)
	}
	for c, v := range seq { // in Hilbert-curve order
		fmt.Printf("region: %v %s\n", c, v)
	}
	steps, err := ns.Walk(ctx, a, engine.WalkOptions{MaxDepth: 3, Label: "road"})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range steps {
		fmt.Printf("walk: %v at depth %d\n", s.Coord, s.Depth)
	}
	path, ok, err := ns.ShortestPath(ctx, a, c, "", engine.Out)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("path: %v, weight %g, found %v\n", path.Coords, path.Weight, ok)
	// Output:
	// get: hello
	// region: [5 5 5] b
	// region: [1 2 3] hello
	// walk: [0 0 0] at depth 0
	// walk: [5 5 5] at depth 1
	// walk: [9 9 9] at depth 2
	// path: [[0 0 0] [5 5 5] [9 9 9]], weight 3.5, found true
}
