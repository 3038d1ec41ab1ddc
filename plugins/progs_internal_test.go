package plugins

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

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

// TestConcurrentProgs: Progs of one namespace racing, several to each
// name, commit in batches; afterwards the registry's mirror and the
// store agree on every name's version, and each Prog's answer was a
// version that was registered.
//
// Break seen caught: install a batch's versions in reverse order
// (commitProgs) -> "mirror has version … of p0, the store …".
func TestConcurrentProgs(t *testing.T) {
	ctx := context.Background()
	db, err := engine.Open(t.TempDir(), engine.Options{Sync: engine.SyncAlways})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.CreateNamespace(ctx, "n", engine.NamespaceOptions{Dims: 1}); err != nil {
		t.Fatal(err)
	}
	r, err := New(ctx, db, Options{TelemetryInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	// First a batch made certain: the writer lock held while 16 Progs
	// queue, 4 to each name; then the same racing freely.
	g, err := r.reg(ctx, "n")
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 16)
	prog := func(i, n int) {
		name := fmt.Sprintf("p%d", i%4)
		code := fmt.Sprintf("function run() { return %q }", fmt.Sprint(i, ".", n))
		info, err := r.Prog(ctx, "n", name, vm.JS, []byte(code), ProgOptions{ReadOnly: true})
		if err != nil || info.Name != name || info.Version == "" {
			errs <- fmt.Errorf("Prog %s: %+v %v", name, info, err)
		}
	}
	var wg sync.WaitGroup
	g.wmu.Lock()
	for i := range 16 {
		wg.Go(func() { prog(i, 0) })
	}
	for {
		g.pmu.Lock()
		n := len(g.pending)
		g.pmu.Unlock()
		if n == 16 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	g.wmu.Unlock()
	wg.Wait()
	check := func() {
		fresh, err := New(ctx, db, Options{TelemetryInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer fresh.Close(ctx)
		for i := range 4 {
			name := fmt.Sprintf("p%d", i)
			mine, err := r.ProgInfo("n", name)
			if err != nil {
				t.Fatal(err)
			}
			stored, err := fresh.ProgInfo("n", name)
			if err != nil {
				t.Fatal(err)
			}
			if mine.Version != stored.Version {
				t.Fatalf("mirror has version %s of %s, the store %s", mine.Version, name, stored.Version)
			}
			a, err := r.Run(ctx, "n", name, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, err := fresh.Run(ctx, "n", name, nil)
			if err != nil || string(a.Output) != string(b.Output) {
				t.Fatalf("%s runs %q here, %q from the store (%v)", name, a.Output, b.Output, err)
			}
		}
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	check()
	errs = make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			for n := range 15 {
				prog(i, n+1)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	check()
}
