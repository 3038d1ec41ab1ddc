// Command embed is cube's main job on an embedded store: it opens a data
// directory, writes values at coordinates, scans a region, links edges and
// walks them, then reopens the store to show that everything survived.
//
//	go run ./examples/embed            # a fresh store in a temporary directory
//	go run ./examples/embed -data DIR  # or in DIR
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/cubelinux/cube/engine"
)

func main() {
	data := flag.String("data", "", "data directory (default: a new temporary directory, removed afterwards)")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *data); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, dir string) error {
	if dir == "" {
		tmp, err := os.MkdirTemp("", "cube-embed-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	db, err := engine.Open(dir, engine.Options{})
	if err != nil {
		return err
	}
	ns, err := db.Namespace("grid")
	if err != nil {
		if ns, err = db.CreateNamespace(ctx, "grid", engine.NamespaceOptions{Dims: 2}); err != nil {
			return err
		}
	}

	// A 256x256 grid of values, written as transactions of one row each:
	// each row commits atomically and durably (one fsync per row).
	start := time.Now()
	for y := int32(0); y < 256; y++ {
		err := ns.Update(ctx, func(tx *engine.Tx) error {
			for x := int32(0); x < 256; x++ {
				if err := tx.Put([]int32{x, y}, fmt.Appendf(nil, "%d", x*y)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "wrote 65536 values in 256 durable transactions in %v\n", time.Since(start).Round(time.Millisecond))

	v, err := ns.Get(ctx, []int32{12, 34})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "get (12,34) = %s\n", v)

	start = time.Now()
	seq, err := ns.Region(ctx, []int32{100, 100}, []int32{163, 163}, 0)
	if err != nil {
		return err
	}
	n, sum := 0, 0
	for _, v := range seq {
		var x int
		fmt.Sscan(string(v), &x)
		n, sum = n+1, sum+x
	}
	fmt.Fprintf(w, "region [100,100]..[163,163]: %d values, sum %d, in %v\n", n, sum, time.Since(start).Round(time.Microsecond))

	// Roads along the grid's diagonal, and a shortcut.
	err = ns.Update(ctx, func(tx *engine.Tx) error {
		for i := int32(0); i < 10; i++ {
			if err := tx.Link([]int32{i, i}, []int32{i + 1, i + 1}, "road", 1, nil); err != nil {
				return err
			}
		}
		return tx.Link([]int32{0, 0}, []int32{10, 10}, "air", 12, []byte("slow plane"))
	})
	if err != nil {
		return err
	}
	steps, err := ns.Walk(ctx, []int32{0, 0}, engine.WalkOptions{MaxDepth: 3, Label: "road"})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "walk 3 hops of road from (0,0): %d nodes, last %v at depth %d\n", len(steps), steps[len(steps)-1].Coord, steps[len(steps)-1].Depth)
	p, ok, err := ns.ShortestPath(ctx, []int32{0, 0}, []int32{10, 10}, "", engine.Out)
	if err != nil || !ok {
		return fmt.Errorf("no path: %v", err)
	}
	fmt.Fprintf(w, "shortest path (0,0) -> (10,10): %d nodes, weight %g\n", len(p.Coords), p.Weight)

	if err := db.Close(); err != nil {
		return err
	}
	db, err = engine.Open(dir, engine.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	info := db.Namespaces()[0]
	fmt.Fprintf(w, "reopened: namespace %q has %d values and %d edges (%s)\n", info.Name, info.Values, info.Edges, db.Stats().Recovery)
	return nil
}
