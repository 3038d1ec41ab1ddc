package server_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/server"
)

// TestRunTypedLogs: RUN.TYPED replies what a program logged beside its
// output, in EVAL.TYPED's shape; plain RUN still replies the output alone.
//
// Seen to fail: with cmdRunTyped writing c.Logs as an empty array (logs
// dropped), with RUN.TYPED left out of the table (unknown command), and
// with runProgram not keeping a failed run's log (e.logs unset).
func TestRunTypedLogs(t *testing.T) {
	ts := startServer(t, server.Options{})
	cl := ts.client(t, 3)
	ctx := context.Background()
	must(t, cl.Do(ctx, "NS.CREATE", "w", "DIMS", 2).Err())
	must(t, cl.Do(ctx, "PROG", "w", "talk", "JS", `function run(a) { cube.log("starting", a); cube.log("done"); return "out " + a }`).Err())
	typed, err := cl.Do(ctx, "RUN.TYPED", "w", "talk", "x").Slice()
	if err != nil || len(typed) != 4 || typed[0] != "bytes" || typed[1] != int64(0) || typed[2] != "out x" {
		t.Fatalf("RUN.TYPED = %#v, %v", typed, err)
	}
	if logs, ok := typed[3].([]any); !ok || len(logs) != 2 || logs[0] != "starting x" || logs[1] != "done" {
		t.Fatalf("RUN.TYPED logs = %#v", typed[3])
	}
	if got, err := cl.Do(ctx, "RUN", "w", "talk", "y").Text(); err != nil || got != "out y" {
		t.Fatalf("RUN = %q, %v", got, err)
	}
	if err := cl.Do(ctx, "RUN.TYPED", "w", "nope").Err(); err == nil || !strings.HasPrefix(err.Error(), "NOPROG") {
		t.Fatalf("RUN.TYPED of a missing program: %v", err)
	}

	// A failed run has no reply to carry its log: its error ends with it.
	wasm, err := os.ReadFile("testdata/logfail.wasm")
	must(t, err)
	must(t, cl.Do(ctx, "PROG", "w", "logfail", "WASM", wasm).Err())
	for _, cmd := range []string{"RUN", "RUN.TYPED"} {
		err := cl.Do(ctx, cmd, "w", "logfail").Err()
		if err == nil || !strings.Contains(err.Error(), "gave up; its log: looking | the store said no") {
			t.Fatalf("%s of a program that logs then fails: %v", cmd, err)
		}
	}
}

// TestEvalLimits: EVAL's TIMEOUT and MEMORY set one call's limits within
// the daemon's maximum, and each limit error names what raises it.
//
// Seen to fail: with evalInSession calling EvalArgs (the options parsed
// but ignored: the 300 ms script timed out at the 100 ms default), with
// the maximum check removed (TIMEOUT 5000 ran), and with the old hint
// ("raise it with PROG ... TIMEOUT ms") for an EVAL.
func TestEvalLimits(t *testing.T) {
	ts := startServerDB(t, cube.Options{Limits: cube.Limits{Timeout: 100 * time.Millisecond}},
		server.Options{MaxEvalTimeout: 2 * time.Second, MaxEvalMemory: 256 << 20})
	cl := ts.client(t, 3)
	ctx := context.Background()
	must(t, cl.Do(ctx, "NS.CREATE", "w", "DIMS", 2).Err())
	spin := func(ms int) string {
		return "var t0 = Date.now(); while (Date.now() - t0 < " + strconv.Itoa(ms) + ") {} 'spun'"
	}

	// TIMEOUT 50 on a loop that never ends: about 50 ms, with a hint that
	// names EVAL's own option and the daemon's maximum.
	start := time.Now()
	err := cl.Do(ctx, "EVAL", "w", "while (true) {}", "TIMEOUT", 50).Err()
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "EVAL ns script [arg] TIMEOUT ms") || !strings.Contains(err.Error(), "2000 ms") {
		t.Fatalf("EVAL TIMEOUT 50 of a spin: %v", err)
	}
	if strings.Contains(err.Error(), "PROG ...") {
		t.Fatalf("an EVAL's hint names PROG: %v", err)
	}
	if took < 40*time.Millisecond || took > 600*time.Millisecond {
		t.Fatalf("EVAL TIMEOUT 50 ended after %v", took)
	}
	t.Logf("%v after %v", err, took.Round(time.Millisecond))

	// Past the store's default of 100 ms only with TIMEOUT; the session
	// goes back to the default for the next call.
	if err := cl.Do(ctx, "EVAL", "w", spin(300)).Err(); err == nil || !strings.Contains(err.Error(), "timeout") && !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("EVAL of 300 ms under the 100 ms default: %v", err)
	}
	if got, err := cl.Do(ctx, "EVAL", "w", spin(300), "TIMEOUT", 1500).Text(); err != nil || got != "spun" {
		t.Fatalf("EVAL of 300 ms with TIMEOUT 1500: %q, %v", got, err)
	}
	if err := cl.Do(ctx, "EVAL", "w", spin(300)).Err(); err == nil {
		t.Fatal("a TIMEOUT outlived its EVAL")
	}

	// With an arg and both options, EVAL.TYPED too; MEMORY is accepted.
	typed, err := cl.Do(ctx, "EVAL.TYPED", "w", "cube.log('hi'); cube.args", "an arg", "TIMEOUT", 500, "MEMORY", 128).Slice()
	if err != nil || len(typed) != 4 || typed[2] != "an arg" {
		t.Fatalf("EVAL.TYPED with an arg and options = %#v, %v", typed, err)
	}
	if got, err := cl.Do(ctx, "EVAL", "w", "'mem ok'", "MEMORY", 200).Text(); err != nil || got != "mem ok" {
		t.Fatalf("EVAL MEMORY 200: %q, %v", got, err)
	}

	// Past the maximum, or malformed: refused before anything runs.
	for _, c := range []struct {
		args []any
		want string
	}{
		{[]any{"EVAL", "w", "1", "TIMEOUT", 5000}, "TIMEOUT must be 1 to 2000 ms on this daemon, got 5000 (its maximum is set by cube serve --max-eval-timeout)"},
		{[]any{"EVAL", "w", "1", "MEMORY", 1024}, "MEMORY must be 1 to 256 MiB on this daemon, got 1024 (its maximum is set by cube serve --max-eval-memory)"},
		{[]any{"EVAL.TYPED", "w", "1", "x", "TIMEOUT", 0}, "EVAL.TYPED: TIMEOUT must be 1 to 2000 ms"},
		{[]any{"EVAL", "w", "1", "TIMEOUT", "soon"}, "TIMEOUT (milliseconds) must be a non-negative integer, got 'soon'"},
		{[]any{"EVAL", "w", "1", "arg1", "arg2"}, "EVAL: unknown option 'arg1'"},
		{[]any{"EVAL", "w", "1", "QUICK", 5}, "EVAL: unknown option 'QUICK'; usage: EVAL ns script [arg] [TIMEOUT ms] [MEMORY mib]"},
	} {
		if err := cl.Do(ctx, c.args...).Err(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}

	// A program's limit error names PROG, where its limits are set.
	must(t, cl.Do(ctx, "PROG", "w", "slow", "JS", "function run() { while (true) {} }", "TIMEOUT", 50).Err())
	if err := cl.Do(ctx, "RUN", "w", "slow").Err(); err == nil || !strings.Contains(err.Error(), "registering the program again with PROG ... TIMEOUT ms") {
		t.Fatalf("RUN of a program past its time limit: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
