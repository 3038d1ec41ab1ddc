package engine_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/engine/vfs"
)

// TestDropped: a kept handle says it was dropped once its namespace is
// (DropNamespace, or a Restore, which drops every namespace first); the
// name's new namespace is another handle, not dropped; writes on the old
// one fail with ErrNoNamespace. Servers keep handles on this promise
// (server's call.ns). Break seen failing: Dropped always false ("a
// dropped namespace's handle does not say so").
func TestDropped(t *testing.T) {
	db := openMem(t, vfs.NewMem(), engine.Options{})
	old, err := db.CreateNamespace(ctx, "n", engine.NamespaceOptions{Dims: 1})
	if err != nil {
		t.Fatal(err)
	}
	if old.Dropped() {
		t.Fatal("a new namespace says it was dropped")
	}
	if err := old.Put(ctx, []int32{1}, []byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := db.DropNamespace(ctx, "n"); err != nil {
		t.Fatal(err)
	}
	if !old.Dropped() {
		t.Fatal("a dropped namespace's handle does not say so")
	}
	if err := old.Put(ctx, []int32{2}, []byte("b")); !errors.Is(err, engine.ErrNoNamespace) {
		t.Fatalf("Put on a dropped handle: %v, want ErrNoNamespace", err)
	}
	renewed, err := db.CreateNamespace(ctx, "n", engine.NamespaceOptions{Dims: 2})
	if err != nil {
		t.Fatal(err)
	}
	if renewed.Dropped() || renewed == old {
		t.Fatal("the name's new namespace is the dropped one")
	}
	if got, _ := db.Namespace("n"); got != renewed {
		t.Fatal("DB.Namespace does not find the new namespace")
	}

	// A restore replaces every namespace, even one of the same name.
	src := openMem(t, vfs.NewMem(), engine.Options{})
	if _, err := src.CreateNamespace(ctx, "n", engine.NamespaceOptions{Dims: 2}); err != nil {
		t.Fatal(err)
	}
	snap, err := src.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := snap.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if err := db.Restore(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	if !renewed.Dropped() {
		t.Fatal("a namespace a restore replaced does not say it was dropped")
	}
	if got, err := db.Namespace("n"); err != nil || got.Dropped() {
		t.Fatalf("the restored namespace: %v, dropped %v", err, got != nil && got.Dropped())
	}
}
