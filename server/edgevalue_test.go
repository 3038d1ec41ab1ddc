package server_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/server"
	"github.com/redis/go-redis/v9"
)

// serveDir serves the store in dir until the returned function stops the
// daemon and closes the store (a clean restart when called between two
// serveDirs on the same dir).
func serveDir(t *testing.T, dir string) (*testServer, func()) {
	t.Helper()
	var o cube.Options
	o.Engine.Sync = cube.SyncAlways
	db, err := cube.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(shortDir(t), "cube.sock")
	srv, err := server.New(db, server.Options{Socket: sock})
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts := &testServer{db: db, srv: srv, sock: sock, dir: dir, done: make(chan error, 1), stop: cancel}
	go func() { ts.done <- srv.Serve(ctx) }()
	return ts, func() { ts.close(t) }
}

// TestEdgeWithoutValue: EDGES replies null for an edge linked without a
// value (or with an empty one: the store keeps both as a zero length), the
// same before a restart and after one, whether the edge comes back from
// the log or from a checkpoint. The issue saw "" on one side of a restart
// and null on the other: the engine held an empty slice for one and nil
// for the other, and cmdEdges replied null only for nil.
//
// Seen to fail: without engine/edges.go's link turning an empty value
// into nil, with cmdEdges testing e.Value == nil (before the restart:
// edge "none" has value "", want <nil>).
func TestEdgeWithoutValue(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	want := map[string]any{"none": nil, "empty": nil, "v": "x"}
	check := func(ts *testServer, when string) {
		t.Helper()
		cl := ts.client(t, 3)
		v, err := cl.Do(ctx, "EDGES", "w", 1, 1, "BOTH").Slice()
		if err != nil {
			t.Fatalf("%s: EDGES: %v", when, err)
		}
		if len(v) != len(want) {
			t.Fatalf("%s: EDGES = %v, want %d edges", when, v, len(want))
		}
		for _, e := range v {
			f := e.([]any)
			label, val := f[2].(string), f[4]
			if val != want[label] {
				t.Errorf("%s: edge %q has value %#v, want %#v", when, label, val, want[label])
			}
		}
	}

	ts, stop := serveDir(t, dir)
	cl := ts.client(t, 3)
	for _, c := range [][]any{
		{"NS.CREATE", "w", "DIMS", 2},
		{"LINK", "w", 1, 1, 2, 2, "none"},
		{"LINK", "w", 1, 1, 3, 3, "empty", "VALUE", ""},
		{"LINK", "w", 1, 1, 4, 4, "v", "VALUE", "x"},
	} {
		if err := cl.Do(ctx, c...).Err(); err != nil {
			t.Fatalf("%v: %v", c, err)
		}
	}
	check(ts, "before a restart")
	stop()

	ts, stop = serveDir(t, dir)
	check(ts, "after a restart (log replayed)")
	if err := ts.client(t, 3).Do(ctx, "CHECKPOINT").Err(); err != nil && err != redis.Nil {
		t.Fatal(err)
	}
	stop()

	ts, stop = serveDir(t, dir)
	defer stop()
	check(ts, "after a restart (from a checkpoint)")
}
