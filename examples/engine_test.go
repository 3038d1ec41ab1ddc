package examples_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/engine/vfs"
	"github.com/cubelinux/cube/plugins/pdk/conformance"
	"github.com/cubelinux/cube/vm"
)

// memDB is a store in memory for the tests that run programs through
// db.Prog and db.Run.
func memDB(t *testing.T) *cube.DB {
	t.Helper()
	db, err := cube.Open("db", cube.Options{Engine: engine.Options{FS: vfs.NewMem(), Sync: engine.SyncNone}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// TestConformanceEngine runs the table through the real thing: each case's
// data in its own namespace of a cube.DB, the program registered with
// db.Prog and run with db.Run (a read-write run is an engine transaction),
// and the namespace read back afterwards. The outcomes must be the table's,
// as on the reference host.
func TestConformanceEngine(t *testing.T) {
	ctx := context.Background()
	db := memDB(t)
	cases := conformance.Cases()
	for _, l := range conformance.Languages() {
		if *onlyLang != "" && string(l) != *onlyLang {
			continue
		}
		t.Run(string(l), func(t *testing.T) {
			if l == conformance.Go && conformance.Race {
				t.Skip("Go guests take ~50 s each to compile under -race; .ci/check.d/examples.sh runs them without")
			}
			for i, c := range cases {
				if !conformance.Has(c.Program, l) {
					continue
				}
				t.Run(c.Name, func(t *testing.T) {
					if c.EngineBug != "" {
						t.Skip("known engine bug: " + c.EngineBug)
					}
					// A namespace per case and language: runs that
					// succeed commit their writes (values and edges).
					ns := fmt.Sprint("ns", i, "_", l)
					if err := loadEngine(ctx, db, ns, c.Data); err != nil {
						t.Fatal(err)
					}
					o := runEngine(t, db, ns, l, c)
					if err := c.Check(o); err != nil {
						t.Fatal(err)
					}
				})
			}
		})
	}
}

func loadEngine(ctx context.Context, db *cube.DB, name string, d conformance.Data) error {
	ns, err := db.CreateNamespace(ctx, name, engine.NamespaceOptions{Dims: d.Dims})
	if err != nil {
		return err
	}
	return ns.Update(ctx, func(tx *cube.Tx) error {
		for _, p := range d.Points {
			if err := tx.Put(p.Coord, p.Value); err != nil {
				return err
			}
		}
		for _, e := range d.Edges {
			if err := tx.Link(e.From, e.To, e.Label, e.Weight, e.Value); err != nil {
				return err
			}
		}
		return nil
	})
}

// runEngine registers the case's program in namespace name, runs it once,
// and reports the outcome with the namespace's points afterwards. Runs
// that write change the namespace, so each case and language has its own.
func runEngine(t *testing.T, db *cube.DB, name string, l conformance.Lang, c conformance.Case) conformance.Outcome {
	t.Helper()
	ctx := context.Background()
	code, err := os.ReadFile(conformance.File(".", c.Program, l))
	if err != nil {
		t.Fatal(err)
	}
	lim := c.Limits
	if lim.Timeout == 0 {
		lim.Timeout = time.Minute
	}
	prog := c.Program + "_" + string(l)
	if _, err := db.Prog(ctx, name, prog, l.Kind(), code, cube.ProgOptions{ReadOnly: lim.ReadOnly, Limits: lim}); err != nil {
		t.Fatalf("prog: %v", err)
	}
	ns, err := db.Namespace(name)
	if err != nil {
		t.Fatal(err)
	}
	var o conformance.Outcome
	res, err := db.Run(ctx, name, prog, c.Args)
	if err != nil {
		var e *vm.Error
		if !errors.As(err, &e) {
			t.Fatalf("run: not a vm error: %v", err)
		}
		o.Kind, o.Msg = e.Kind, e.Msg
	} else {
		o.Output = string(res.Output)
	}
	o.Points = conformance.RenderPoints(readPoints(t, ns))
	return o
}

func readPoints(t *testing.T, ns *cube.Namespace) []vm.Point {
	t.Helper()
	lo := make([]int32, ns.Dims())
	hi := make([]int32, ns.Dims())
	for i := range lo {
		lo[i], hi[i] = math.MinInt32, math.MaxInt32
	}
	seq, err := ns.Region(context.Background(), lo, hi, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ps []vm.Point
	for c, v := range seq {
		ps = append(ps, vm.Point{Coord: append([]int32(nil), c...), Value: append([]byte(nil), v...)})
	}
	return ps
}
