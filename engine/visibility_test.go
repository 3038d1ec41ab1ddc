package engine_test

import (
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
	fs := vfs.NewFaulty(vfs.NewMem(), vfs.InjectorFunc(func(op vfs.Op) error {
		if op.Kind == vfs.OpSync && holding.Load() && strings.Contains(op.Path, "/wal/") {
			<-gate
		}
		return nil
	}))
	db, err := engine.Open("/d", engine.Options{FS: fs, CheckpointInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
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
