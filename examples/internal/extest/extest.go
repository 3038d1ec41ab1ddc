// Package extest runs an example program, in every language it is written
// in, on the reference host and on a real cube.DB, for the examples'
// main_test.go files.
package extest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/engine/vfs"
	"github.com/cubelinux/cube/plugins/pdk/conformance"
	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/vmtest"
)

// Everywhere runs program (built under root, the examples directory) in
// every language on data with args, once on a vmtest host and once
// registered in a cube.DB namespace, and checks that every run outputs
// want. It returns the DB namespace's points after the last language's
// run, for writers.
func Everywhere(t *testing.T, root, program string, d conformance.Data, args []byte, want string) {
	t.Helper()
	EverywhereCheck(t, root, program, d, args, want, nil)
}

// EverywhereCheck is Everywhere, also handing every successful run's result
// to check (where is "vmtest" or "cube.DB"), for what the output does not
// show, such as the run's log. Languages program is not written in are
// skipped.
func EverywhereCheck(t *testing.T, root, program string, d conformance.Data, args []byte, want string,
	check func(t *testing.T, where string, res vm.Result)) {
	t.Helper()
	ctx := context.Background()
	sb, err := conformance.NewSandboxes(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close(ctx) })
	db, err := cube.Open("db", cube.Options{Engine: engine.Options{FS: vfs.NewMem(), Sync: engine.SyncNone}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	lim := vm.Limits{Timeout: time.Minute} // Go guests start slowly under -race
	for _, l := range conformance.Languages() {
		if !conformance.Has(program, l) {
			continue
		}
		t.Run(string(l), func(t *testing.T) {
			if l == conformance.Go && conformance.Race {
				t.Skip("Go guests take ~50 s each to compile under -race; .ci/check.d/examples.sh runs them without")
			}
			path := conformance.File(root, program, l)
			// The reference host.
			p, err := sb.Program(ctx, path, lim)
			if err != nil {
				t.Fatal(err)
			}
			h := vmtest.NewHost(d.Dims)
			if err := d.Load(ctx, h); err != nil {
				t.Fatal(err)
			}
			res, err := p.Run(ctx, h, args)
			if err != nil {
				t.Fatalf("vmtest: %v", err)
			}
			if string(res.Output) != want {
				t.Errorf("vmtest: output %q, want %q", res.Output, want)
			}
			if check != nil {
				check(t, "vmtest", res)
			}
			// The real store: a fresh namespace per language.
			ns := "ex_" + string(l)
			n, err := db.CreateNamespace(ctx, ns, engine.NamespaceOptions{Dims: d.Dims})
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Load(ctx, nsHost{n}); err != nil {
				t.Fatal(err)
			}
			code, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Prog(ctx, ns, program, l.Kind(), code, cube.ProgOptions{Limits: lim}); err != nil {
				t.Fatalf("prog %s: %v", filepath.Base(path), err)
			}
			dbres, err := db.Run(ctx, ns, program, args)
			if err != nil {
				t.Fatalf("cube.DB: %v", err)
			}
			res = vm.Result(dbres)
			if string(res.Output) != want {
				t.Errorf("cube.DB: output %q, want %q", res.Output, want)
			}
			if check != nil {
				check(t, "cube.DB", res)
			}
		})
	}
}

// nsHost lets Data.Load write into a namespace.
type nsHost struct{ *cube.Namespace }

func (h nsHost) Put(ctx context.Context, c []int32, v []byte) error {
	return h.Namespace.Put(ctx, c, v)
}

func (h nsHost) Link(ctx context.Context, e vm.Edge) error {
	return h.Namespace.Link(ctx, e.From, e.To, e.Label, e.Weight, e.Value)
}
