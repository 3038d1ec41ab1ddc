//go:build linux || darwin

package repl_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/repl"
	"github.com/cubelinux/cube/vm"
)

// The test binary doubles as the REPL behind a pseudo-terminal: with
// ptyChildEnv set, TestMain runs repl.Run on its own standard input and
// output (which the parent made a pty) instead of the tests.
const ptyChildEnv = "CUBE_REPL_PTY_CHILD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(ptyChildEnv); dir != "" {
		os.Exit(ptyChild(dir))
	}
	os.Exit(m.Run())
}

func ptyChild(dir string) int {
	ctx := context.Background()
	// No time limit: only Ctrl-C can stop a runaway script.
	db, err := cube.Open(filepath.Join(dir, "data"), cube.Options{
		Engine: engine.Options{Sync: engine.SyncNone},
		Limits: vm.Limits{Timeout: -1},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer db.Close()
	if _, err := db.CreateNamespace(ctx, "grid", engine.NamespaceOptions{Dims: 2}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	err = repl.Run(ctx, repl.Options{DB: db, HistoryFile: filepath.Join(dir, "history")})
	if err != nil {
		fmt.Fprintln(os.Stderr, "repl:", err)
		return 1
	}
	return 0
}

// term is the parent's end of the pty: what the REPL printed, and a way
// to wait for a text to appear after a mark.
type term struct {
	t    *testing.T
	pty  *os.File
	mu   sync.Mutex
	buf  bytes.Buffer
	mark int
}

func (tm *term) read() {
	b := make([]byte, 4096)
	for {
		n, err := tm.pty.Read(b)
		tm.mu.Lock()
		tm.buf.Write(b[:n])
		tm.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (tm *term) send(s string) {
	tm.t.Helper()
	if _, err := io.WriteString(tm.pty, s); err != nil {
		tm.t.Fatalf("write to pty: %v", err)
	}
}

// expect waits until want appears in the output after the mark, then
// moves the mark past it.
func (tm *term) expect(want string) {
	tm.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		tm.mu.Lock()
		out := tm.buf.String()
		tm.mu.Unlock()
		if i := strings.Index(out[tm.mark:], want); i >= 0 {
			tm.mark += i + len(want)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	tm.mu.Lock()
	defer tm.mu.Unlock()
	tm.t.Fatalf("waited for %q; the terminal shows after the mark:\n%q", want, tm.buf.String()[tm.mark:])
}

// TestTerminal drives the REPL through a real pseudo-terminal: tab
// completion (one candidate completes inline; several are listed),
// multi-line input, Ctrl-C stopping a runaway script with the prompt
// coming back and the session intact, Ctrl-C at an empty prompt, Ctrl-D,
// and the history file.
func TestTerminal(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), ptyChildEnv+"="+dir, "TERM=xterm")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer f.Close()
	tm := &term{t: t, pty: f}
	go tm.read()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
	}()

	tm.expect("grid> ")

	// One candidate: Tab completes in place; the rest of the line follows.
	tm.send("cube.reg\t")
	tm.expect("cube.region")
	tm.send("([0, 0], [9, 9]).count()\r")
	tm.expect("\r\n0\r\n")
	tm.expect("grid> ")

	// Several candidates: Tab lists them.
	tm.send("cube.ge\t\t")
	tm.expect("getBytes")
	tm.send("\x03") // abandon the line
	tm.expect("grid> ")

	// Dot-commands complete too, and so do namespace names.
	tm.send(".n\t")
	tm.expect(".ns")
	tm.send(" gr\t")
	tm.expect("grid")
	tm.send("\r")
	tm.expect("grid> ")

	// A multi-line definition, then a call.
	tm.send("function sq(n) {\r")
	tm.expect("... ")
	tm.send("  return n * n }\r")
	tm.expect("grid> ")
	tm.send("sq(12)\r")
	tm.expect("144")
	tm.expect("grid> ")

	// Ctrl-C stops a runaway script and the prompt comes back.
	tm.send("cube.put([1, 1], 'lost'); while (true) {}\r")
	tm.expect("while (true) {}")
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	tm.send("\x03")
	tm.expect("interrupted (Ctrl-C): none of its writes were kept")
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Ctrl-C took %v to stop the script", took)
	}
	tm.expect("grid> ")
	// The session survived, and the interrupted write was rolled back.
	tm.send("[sq(3), cube.get([1, 1])]\r")
	tm.expect("[9, null]")
	tm.expect("grid> ")

	// Ctrl-C at an empty prompt says how to leave.
	tm.send("\x03")
	tm.expect("(To exit, press Ctrl-D or type .exit)")
	tm.expect("grid> ")

	// Ctrl-D leaves.
	tm.send("\x04")
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("REPL exited with %v; terminal:\n%s", err, tm.buf.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("REPL did not exit on Ctrl-D")
	}
	hist, err := os.ReadFile(filepath.Join(dir, "history"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"sq(12)", "while (true) {}", ".ns grid"} {
		if !strings.Contains(string(hist), want) {
			t.Errorf("history lacks %q:\n%s", want, hist)
		}
	}
}
