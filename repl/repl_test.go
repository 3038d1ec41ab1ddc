package repl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/repl"
	"github.com/cubelinux/cube/server"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata")

// openDB opens a fresh store with a 2-D namespace "grid".
func openDB(t testing.TB) *cube.DB {
	t.Helper()
	db, err := cube.Open(t.TempDir(), cube.Options{Engine: engine.Options{Sync: engine.SyncNone}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.CreateNamespace(context.Background(), "grid", engine.NamespaceOptions{Dims: 2}); err != nil {
		t.Fatal(err)
	}
	return db
}

// durations in .time output vary from run to run.
var durationRe = regexp.MustCompile(`(?m)^\([0-9.]+(ns|µs|ms|s)\)$`)

// transcript runs input through the REPL without a terminal, echoing each
// input, and returns what it printed (results and errors interleaved).
func transcript(t *testing.T, ev repl.Options, input string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	ev.In, ev.Out, ev.Err, ev.Echo = strings.NewReader(input), &out, &out, true
	ev.HistoryFile = filepath.Join(t.TempDir(), "history")
	err := repl.Run(context.Background(), ev)
	return durationRe.ReplaceAllString(out.String(), "(<duration>)"), err
}

// TestTranscripts runs testdata/*.in through the REPL on an embedded store
// and through a real daemon over its socket, and compares each with its
// golden file: NAME.golden and NAME.remote.golden (the differences between
// the two are what a daemon's untyped replies cannot tell apart).
// go test ./repl -run TestTranscripts -update rewrites them.
func TestTranscripts(t *testing.T) {
	ins, err := filepath.Glob("testdata/*.in")
	if err != nil || len(ins) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	modes := []struct {
		suffix string
		opts   func(t *testing.T) repl.Options
	}{
		{".golden", func(t *testing.T) repl.Options { return repl.Options{DB: openDB(t)} }},
		{".remote.golden", func(t *testing.T) repl.Options { return repl.Options{Socket: startDaemon(t, openDB(t))} }},
	}
	for _, in := range ins {
		for _, m := range modes {
			name := strings.TrimSuffix(filepath.Base(in), ".in") + strings.TrimSuffix(m.suffix, ".golden")
			t.Run(name, func(t *testing.T) {
				src, err := os.ReadFile(in)
				if err != nil {
					t.Fatal(err)
				}
				got, runErr := transcript(t, m.opts(t), string(src))
				if runErr != nil {
					got += "-- Run: " + runErr.Error() + "\n"
				}
				golden := strings.TrimSuffix(in, ".in") + m.suffix
				if *update {
					if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run with -update to create it)", err)
				}
				if got != string(want) {
					t.Errorf("transcript %s differs from %s (run with -update if the change is right):\n%s", in, golden, diff(string(want), got))
				}
			})
		}
	}
}

// startDaemon serves db on a Unix socket until the test ends.
func startDaemon(t testing.TB, db *cube.DB) string {
	t.Helper()
	return startDaemonWith(t, db, server.Options{})
}

// startDaemonWith is startDaemon with server options; o.Socket is set
// to a socket in the test's temporary directory.
func startDaemonWith(t testing.TB, db *cube.DB, o server.Options) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "cube.sock")
	o.Socket = sock
	srv, err := server.New(db, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Serve: %v", err)
		}
	})
	return sock
}

// diff shows the first lines where two transcripts part.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + wl + "\n  got:  " + gl
		}
	}
	return "(same lines)"
}

// TestPipedOneResultPerInput checks the plain piped mode a script sees:
// no prompts, one line per result, errors on Err, and ErrInputFailed.
func TestPipedOneResultPerInput(t *testing.T) {
	db := openDB(t)
	var out, errw bytes.Buffer
	in := "function f(a, b) {\n  return a + b\n}\nf(2, 3)\ncube.put([1, 1], 'x')\nnope\ncube.get([1, 1])\n"
	err := repl.Run(context.Background(), repl.Options{
		In: strings.NewReader(in), Out: &out, Err: &errw, DB: db,
		HistoryFile: filepath.Join(t.TempDir(), "h"),
	})
	if !errors.Is(err, repl.ErrInputFailed) {
		t.Fatalf("Run = %v, want ErrInputFailed", err)
	}
	if want := "undefined\n5\nundefined\n\"x\"\n"; out.String() != want {
		t.Errorf("out = %q, want %q", out.String(), want)
	}
	if !strings.Contains(errw.String(), "ReferenceError: nope is not defined") {
		t.Errorf("err = %q", errw.String())
	}
	if strings.Contains(out.String(), ">") || strings.Contains(out.String(), "\x1b") {
		t.Errorf("prompt or escape code in piped output: %q", out.String())
	}
}

// TestStateAndNamespaces checks that the session's state survives .ns
// switches, and that writes land in the current namespace.
func TestStateAndNamespaces(t *testing.T) {
	db := openDB(t)
	got, err := transcript(t, repl.Options{DB: db, Namespace: "grid"}, strings.Join([]string{
		"var where = 'grid'",
		".ns other 3 morton",
		"typeof where",
		"var where = 'other'; cube.put([1, 2, 3], 'in other')",
		".ns grid",
		"where",
		".ns missing",
	}, "\n"))
	if !errors.Is(err, repl.ErrInputFailed) {
		t.Fatalf("Run = %v, want ErrInputFailed (.ns missing)", err)
	}
	for _, want := range []string{
		"other> typeof where\n\"string\"\n",
		"grid> where\n\"other\"\n",
		"error: no namespace \"missing\"",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("transcript lacks %q:\n%s", want, got)
		}
	}
	ns, err := db.Namespace("other")
	if err != nil {
		t.Fatal(err)
	}
	v, err := ns.Get(context.Background(), []int32{1, 2, 3})
	if err != nil || string(v) != "in other" {
		t.Fatalf("other [1,2,3] = %q, %v", v, err)
	}
}

// TestNoEvaluator: Run needs something to evaluate against.
func TestNoEvaluator(t *testing.T) {
	err := repl.Run(context.Background(), repl.Options{In: strings.NewReader("1\n"), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}})
	if !errors.Is(err, repl.ErrNoEvaluator) {
		t.Fatalf("Run = %v, want ErrNoEvaluator", err)
	}
}

// TestStats checks .stats: JSON about the namespace and its programs.
func TestStats(t *testing.T) {
	got, err := transcript(t, repl.Options{DB: openDB(t)}, "cube.put([1, 1], 'x')\n.prog hello testdata/hello.js\n.stats\n.json on\n.stats\n")
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, got)
	}
	_, compact, ok := strings.Cut(got, "grid> .json on\ngrid> .stats\n")
	if !ok {
		t.Fatalf("no compact .stats in:\n%s", got)
	}
	var st struct {
		Namespace struct {
			Name   string
			Values int
		}
		Programs []struct{ Name string }
	}
	if err := json.Unmarshal([]byte(compact), &st); err != nil {
		t.Fatalf(".stats in JSON mode is not JSON: %v\n%s", err, compact)
	}
	if st.Namespace.Name != "grid" || st.Namespace.Values != 1 || len(st.Programs) != 1 || st.Programs[0].Name != "hello" {
		t.Errorf(".stats = %+v", st)
	}
	if !strings.Contains(got, "grid> .stats\n{\n") {
		t.Errorf(".stats is not indented:\n%s", got)
	}
}
