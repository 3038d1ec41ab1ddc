package repl_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/repl"
	"github.com/cubelinux/cube/vm"
)

// TestRemoteSession checks the remote evaluator against a real daemon:
// state kept between EVALs on one connection, typed errors with
// positions, and that cancelling a running script returns at once and
// says that the session starts over (RESP can only stop a command by
// closing its connection).
func TestRemoteSession(t *testing.T) {
	ctx := context.Background()
	sock := startDaemon(t, openDB(t))
	rem, err := repl.Dial(ctx, sock, repl.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rem.Close()

	if _, err := rem.Eval(ctx, "grid", "function add(a, b) { return a + b }"); err != nil {
		t.Fatal(err)
	}
	res, err := rem.Eval(ctx, "grid", "add(40, 2)")
	if err != nil || string(res.Output) != "42" {
		t.Fatalf("add(40, 2) = %q, %v", res.Output, err)
	}

	_, err = rem.Eval(ctx, "grid", "1 +\n  nope")
	var se *repl.ScriptError
	if !errors.As(err, &se) || se.Line != 2 || se.Column == 0 || se.Kind != "guest error" {
		t.Fatalf("error = %#v (%v), want a guest ScriptError at line 2", se, err)
	}
	if _, err := rem.Eval(ctx, "nowhere", "1"); err == nil {
		t.Fatal("EVAL in a missing namespace succeeded")
	}

	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = rem.Eval(cctx, "grid", "while (true) {}")
	if took := time.Since(start); took > 900*time.Millisecond {
		t.Errorf("cancelled EVAL returned after %v", took)
	}
	if !errors.Is(err, repl.ErrSessionReset) {
		t.Fatalf("cancelled EVAL: %v, want ErrSessionReset", err)
	}
	// The next input runs on a new connection (the daemon cancelled the
	// abandoned script when its connection closed), in a new session.
	res, err = rem.Eval(ctx, "grid", "typeof add")
	if !errors.Is(err, repl.ErrSessionReset) || string(res.Output) != "undefined" {
		t.Fatalf("after reconnecting: %q, %v; want \"undefined\" and the reset notice", res.Output, err)
	}
	res, err = rem.Eval(ctx, "grid", "1 + 1")
	if err != nil || string(res.Output) != "2" {
		t.Fatalf("1 + 1 = %q, %v", res.Output, err)
	}
}

// TestRemoteCancelFreesNamespace: Ctrl-C during a remote EVAL closes the
// connection, the daemon cancels the script, and the next EVAL on the same
// namespace runs at once rather than after the daemon's run limit.
func TestRemoteCancelFreesNamespace(t *testing.T) {
	ctx := context.Background()
	db, err := cube.Open(t.TempDir(), cube.Options{Engine: engine.Options{Sync: engine.SyncNone}, Limits: vm.Limits{Timeout: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.CreateNamespace(ctx, "grid", engine.NamespaceOptions{Dims: 2}); err != nil {
		t.Fatal(err)
	}
	sock := startDaemon(t, db)
	rem, err := repl.Dial(ctx, sock, repl.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rem.Close()
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := rem.Eval(cctx, "grid", "cube.put([1, 1], 'x'); while (true) {}"); !errors.Is(err, repl.ErrSessionReset) {
		t.Fatalf("cancelled EVAL: %v, want ErrSessionReset", err)
	}
	start := time.Now()
	res, err := rem.Eval(ctx, "grid", "String(cube.get([1, 1]))")
	if !errors.Is(err, repl.ErrSessionReset) || string(res.Output) != "null" {
		t.Fatalf("next EVAL: %q, %v; want \"null\" (the write rolled back) and the reset notice", res.Output, err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the next EVAL waited %v for the abandoned script", took)
	}
}

// TestDialRefused: no daemon, a clear error.
func TestDialRefused(t *testing.T) {
	_, err := repl.Dial(context.Background(), t.TempDir()+"/none.sock", repl.DialOptions{DialTimeout: time.Second})
	if err == nil {
		t.Fatal("Dial of a missing socket succeeded")
	}
}

// TestRemotePrograms checks .prog, .progs and .run against a daemon,
// including how PROGS's reply is read (a read-only program, run counts).
func TestRemotePrograms(t *testing.T) {
	ctx := context.Background()
	rem, err := repl.Dial(ctx, startDaemon(t, openDB(t)), repl.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rem.Close()
	ver, err := rem.Prog(ctx, "grid", "echo", "js", []byte(`function run(a) { return "echo " + a }`))
	if err != nil || len(ver) != 64 {
		t.Fatalf("Prog = %q, %v", ver, err)
	}
	for range 2 {
		res, err := rem.Run(ctx, "grid", "echo", []byte("x"))
		if err != nil || string(res.Output) != "echo x" {
			t.Fatalf("Run = %q, %v", res.Output, err)
		}
	}
	ps, err := rem.Programs(ctx, "grid")
	if err != nil || len(ps) != 1 {
		t.Fatalf("Programs = %+v, %v", ps, err)
	}
	if p := ps[0]; p.Name != "echo" || p.Kind != "js" || p.Version != ver || p.Runs != 2 {
		t.Errorf("Programs = %+v", p)
	}
	if _, err := rem.Run(ctx, "grid", "missing", nil); err == nil {
		t.Error("Run of a missing program succeeded")
	}
	st, err := rem.Stats(ctx, "grid")
	if err != nil || !json.Valid(st) {
		t.Errorf("Stats = %q, %v", st, err)
	}
}
