package plugins

import (
	"context"
	"errors"
	"testing"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/vm"
)

// TestRegistryBehindItsBack: programs registered and removed by another
// writer of the store (as a cluster's follower applies its leader's)
// are found by Run, ProgInfo and Progs of a registry whose mirror of
// the namespace was loaded before.
//
// Break: make find return the mirror's miss without rereading the
// metadata -> "ProgInfo of a program registered behind the registry's
// back: plugins: no such program". Break: drop resync from Progs ->
// "Progs lists [{n p js …}] after the removal".
func TestRegistryBehindItsBack(t *testing.T) {
	ctx := context.Background()
	db, err := engine.Open(t.TempDir(), engine.Options{Sync: engine.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.CreateNamespace(ctx, "n", engine.NamespaceOptions{Dims: 1}); err != nil {
		t.Fatal(err)
	}
	mine, err := New(ctx, db, Options{TelemetryInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close(ctx)
	other, err := New(ctx, db, Options{TelemetryInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	if ps, err := mine.Progs("n"); err != nil || len(ps) != 0 { // loads the mirror
		t.Fatalf("Progs of a new namespace: %v %v", ps, err)
	}
	if _, err := other.Prog(ctx, "n", "p", vm.JS, []byte(`function run() { return "ran" }`), ProgOptions{ReadOnly: true}); err != nil {
		t.Fatal(err)
	}
	if p, err := mine.ProgInfo("n", "p"); err != nil || !p.ReadOnly {
		t.Fatalf("ProgInfo of a program registered behind the registry's back: %+v %v", p, err)
	}
	if ps, err := mine.Progs("n"); err != nil || len(ps) != 1 {
		t.Fatalf("Progs lists %v after the registration (%v)", ps, err)
	}
	if res, err := mine.Run(ctx, "n", "p", nil); err != nil || string(res.Output) != "ran" {
		t.Fatalf("Run: %q %v", res.Output, err)
	}
	if err := other.Unprog(ctx, "n", "p"); err != nil {
		t.Fatal(err)
	}
	if ps, err := mine.Progs("n"); err != nil || len(ps) != 0 {
		t.Fatalf("Progs lists %v after the removal (%v)", ps, err)
	}
	if _, err := mine.Run(ctx, "n", "p", nil); !errors.Is(err, ErrNoProgram) {
		t.Fatalf("Run of a removed program: %v, want ErrNoProgram", err)
	}
}
