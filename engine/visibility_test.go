package engine_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/engine/vfs"
)

// TestReadersNeverSeeUndurableWrites holds the log's fsync at a gate while
// a write is in flight: no reader — Get, Region, View, a read-write
// transaction that then commits nothing — may return having seen the write
// before the gate opens, because a crash at that moment would lose it.
func TestReadersNeverSeeUndurableWrites(t *testing.T) {
	gate := make(chan struct{})
	open := sync.OnceFunc(func() { close(gate) })
	var holding atomic.Bool
	mem := vfs.NewMem()
	fs := vfs.NewFaulty(mem, vfs.InjectorFunc(func(op vfs.Op) error {
		if op.Kind == vfs.OpSync && holding.Load() && strings.Contains(op.Path, "/wal/") {
			<-gate
		}
		return nil
	}))
	db := mustOpen(t, "/d", engine.Options{FS: fs, CheckpointInterval: -1, SegmentSize: 256 << 10}, verifyOn(mem))
	defer db.Close()
	defer open() // runs before Close: a failing test must not leave the writer stuck
	ns := mustNS(t, db, "v", 1)
	holding.Store(true)
	wrote := make(chan error, 1)
	go func() { wrote <- ns.Put(ctx, []int32{7}, []byte("x")) }()
	// Wait until the write is applied in memory (the writer is waiting on
	// the fsync).
	for ns.Info().Values == 0 {
		time.Sleep(time.Millisecond)
	}
	readers := map[string]func() bool{
		"get": func() bool { v, err := ns.Get(ctx, []int32{7}); return err == nil && string(v) == "x" },
		"region": func() bool {
			seq, err := ns.Region(ctx, []int32{0}, []int32{10}, 0)
			n := 0
			if err == nil {
				for range seq {
					n++
				}
			}
			return n == 1
		},
		"view": func() bool {
			var ok bool
			ns.View(ctx, func(tx *engine.Tx) error { _, err := tx.Get([]int32{7}); ok = err == nil; return nil })
			return ok
		},
		"update": func() bool {
			var ok bool
			ns.Update(ctx, func(tx *engine.Tx) error { _, err := tx.Get([]int32{7}); ok = err == nil; return nil })
			return ok
		},
	}
	done := map[string]chan bool{}
	for name, read := range readers {
		ch := make(chan bool, 1)
		done[name] = ch
		go func() { ch <- read() }()
	}
	time.Sleep(50 * time.Millisecond)
	for name, ch := range done {
		select {
		case <-ch:
			t.Fatalf("%s returned while the write it could see was not durable", name)
		default:
		}
	}
	holding.Store(false)
	open()
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	for name, ch := range done {
		if !<-ch {
			t.Fatalf("%s did not see the write once durable", name)
		}
	}
}

// heldFsync opens a store on a file system whose log fsyncs block, while
// hold is set, until release is called. A test writes, waits for the
// write to be applied in memory (its writer is then waiting on the fsync),
// and checks that readers wait too.
func heldFsync(t *testing.T) (db *engine.DB, hold func(), release func()) {
	t.Helper()
	gate := make(chan struct{})
	open := sync.OnceFunc(func() { close(gate) })
	var holding atomic.Bool
	mem := vfs.NewMem()
	fs := vfs.NewFaulty(mem, vfs.InjectorFunc(func(op vfs.Op) error {
		if op.Kind == vfs.OpSync && holding.Load() && strings.Contains(op.Path, "/wal/") {
			<-gate
		}
		return nil
	}))
	db = mustOpen(t, "/d", engine.Options{FS: fs, CheckpointInterval: -1, SegmentSize: 256 << 10}, verifyOn(mem))
	release = func() { holding.Store(false); open() }
	t.Cleanup(func() { release(); db.Close() })
	return db, func() { holding.Store(true) }, release
}

// mustWait fails if read returns within a moment (while the write it can
// observe is not durable); then it releases the fsync and returns what
// read returned.
func mustWait[T any](t *testing.T, what string, release func(), read func() T) T {
	t.Helper()
	ch := make(chan T, 1)
	go func() { ch <- read() }()
	select {
	case v := <-ch:
		t.Fatalf("%s returned %v while the write it observed was not durable", what, v)
	case <-time.After(50 * time.Millisecond):
	}
	release()
	return <-ch
}

// TestFailedUpdateWaitsForWhatItRead: a transaction that reads a write not
// yet durable and then fails carries what it read out in its error (a
// program that reads and throws does); Update must not return it before
// the write is durable. The same for a panic that carries it.
//
// Breaks seen caught: Namespace.Update returning fn's error without
// waitVisible(tx.lsn) ("error"); its panic path without the wait ("panic").
func TestFailedUpdateWaitsForWhatItRead(t *testing.T) {
	for _, how := range []string{"error", "panic"} {
		t.Run(how, func(t *testing.T) {
			db, hold, release := heldFsync(t)
			ns := mustNS(t, db, "v", 1)
			hold()
			wrote := make(chan error, 1)
			go func() { wrote <- ns.Put(ctx, []int32{7}, []byte("undurable")) }()
			for ns.Info().Values == 0 {
				time.Sleep(time.Millisecond)
			}
			got := mustWait(t, "Update whose fn failed", release, func() (msg string) {
				defer func() {
					if p := recover(); p != nil {
						msg = fmt.Sprint(p)
					}
				}()
				err := ns.Update(ctx, func(tx *engine.Tx) error {
					v, err := tx.Get([]int32{7})
					if err != nil {
						return err
					}
					if how == "panic" {
						panic("saw " + string(v))
					}
					return errors.New("saw " + string(v))
				})
				return fmt.Sprint(err)
			})
			if got != "saw undurable" {
				t.Fatalf("Update = %q, want fn's own failure", got)
			}
			if err := <-wrote; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestMissWaitsForUndurableDelete: not finding a value is an observation
// too. A read that misses because of a delete not yet durable must wait,
// or a crash would bring back the value it said was gone.
//
// Breaks seen caught: Namespace.Get returning ErrNotFound on a miss without
// waitVisible ("get"); Snapshot without its waitVisible ("view"); Update
// returning after fn without waitVisible(tx.lsn) ("update").
func TestMissWaitsForUndurableDelete(t *testing.T) {
	readers := map[string]func(ns *engine.Namespace) error{
		"get": func(ns *engine.Namespace) error { _, err := ns.Get(ctx, []int32{7}); return err },
		"view": func(ns *engine.Namespace) error {
			return ns.View(ctx, func(tx *engine.Tx) error { _, err := tx.Get([]int32{7}); return err })
		},
		"update": func(ns *engine.Namespace) error {
			return ns.Update(ctx, func(tx *engine.Tx) error { _, err := tx.Get([]int32{7}); return err })
		},
	}
	for name, read := range readers {
		t.Run(name, func(t *testing.T) {
			db, hold, release := heldFsync(t)
			ns := mustNS(t, db, "v", 1)
			if err := ns.Put(ctx, []int32{7}, []byte("x")); err != nil {
				t.Fatal(err)
			}
			hold()
			deleted := make(chan error, 1)
			go func() { _, err := ns.Delete(ctx, []int32{7}); deleted <- err }()
			for ns.Info().Values != 0 {
				time.Sleep(time.Millisecond)
			}
			err := mustWait(t, name+" of a value whose delete is not durable", release, func() error { return read(ns) })
			if !errors.Is(err, engine.ErrNotFound) {
				t.Fatalf("%s after the delete = %v, want ErrNotFound", name, err)
			}
			if err := <-deleted; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRegistryWaitsForUndurableCreateAndDrop: finding a namespace that
// only a create not yet durable made, or missing one that only such a drop
// removed, is seeing a write a crash could undo. Namespace and Namespaces
// wait.
//
// Breaks seen caught: Namespace without waitRegistry ("create" and
// "drop"); Namespaces without it ("list").
func TestRegistryWaitsForUndurableCreateAndDrop(t *testing.T) {
	cases := []struct {
		name  string
		write func(db *engine.DB) error
		read  func(db *engine.DB) string
		want  string
	}{
		{"create",
			func(db *engine.DB) error {
				_, err := db.CreateNamespace(ctx, "n", engine.NamespaceOptions{Dims: 1})
				return err
			},
			func(db *engine.DB) string { _, err := db.Namespace("n"); return fmt.Sprint(err) },
			"<nil>"},
		{"drop",
			func(db *engine.DB) error { return db.DropNamespace(ctx, "old") },
			func(db *engine.DB) string {
				_, err := db.Namespace("old")
				return fmt.Sprint(errors.Is(err, engine.ErrNoNamespace))
			},
			"true"},
		{"list",
			func(db *engine.DB) error {
				_, err := db.CreateNamespace(ctx, "n", engine.NamespaceOptions{Dims: 1})
				return err
			},
			func(db *engine.DB) string { return fmt.Sprint(len(db.Namespaces())) },
			"2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db, hold, release := heldFsync(t)
			mustNS(t, db, "old", 1)
			hold()
			wrote := make(chan error, 1)
			go func() { wrote <- c.write(db) }()
			// Stats counts namespaces as they are in memory, without
			// waiting: the create or drop is applied once the count moves.
			for len(db.Stats().Namespaces) == 1 {
				time.Sleep(time.Millisecond)
			}
			if got := mustWait(t, c.name, release, func() string { return c.read(db) }); got != c.want {
				t.Fatalf("%s read %s once durable, want %s", c.name, got, c.want)
			}
			if err := <-wrote; err != nil {
				t.Fatal(err)
			}
		})
	}
}
