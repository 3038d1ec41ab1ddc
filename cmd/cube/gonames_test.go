package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// goSymbol is what goja printed for a host function before they were
// named: github.com/cubelinux/cube/vm/js.(*binding).installCube.func38.
var goSymbol = regexp.MustCompile(`github\.com|\.func\d|\(\*binding\)`)

// cubeStdin runs the built cube with args and stdin, and returns its
// combined output (its exit status is not the point here).
func cubeStdin(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	b, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CUBE_TEST_MAIN="+string(b))
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Run()
	return out.String()
}

// TestREPLNoGoNames types the inputs into the REPL of the built
// binary, embedded and through a daemon (whose JavaScript runs in worker
// processes): cube.V prints as [Function: cube.V], and cube.getJSON on a
// value that is not JSON says so with no Go symbol in the error or its
// stack.
//
// Seen to fail: with vm/js's native not setting "name" (prints
// "[Function: github.com/cubelinux/cube/vm/js.(*binding).native.func1]").
func TestREPLNoGoNames(t *testing.T) {
	dir := shortDir(t)
	data := filepath.Join(dir, "d")
	input := "cube.V\ncube.getJSON([1,1])\ntry { cube.getJSON([1,1]) } catch (e) { e.stack }\n"
	check := func(where, out string) {
		t.Helper()
		if m := goSymbol.FindString(out); m != "" {
			t.Errorf("%s: the REPL shows a Go symbol (%q):\n%s", where, m, out)
		}
		for _, want := range []string{"[Function: cube.V]", "cube.getJSON: the stored value is not JSON", "at cube.getJSON (native)"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: the REPL lacks %q:\n%s", where, want, out)
			}
		}
	}
	cubeStdin(t, "", "--data", data) // the REPL makes the store
	if out := cubeStdin(t, "", "--data", data, "ns.create", "w", "DIMS", "2"); !strings.Contains(out, "OK") {
		t.Fatalf("ns.create: %s", out)
	}
	if out := cubeStdin(t, "", "--data", data, "put", "w", "1", "1", "not json"); !strings.Contains(out, "OK") {
		t.Fatalf("put: %s", out)
	}
	check("embedded", cubeStdin(t, input, "--data", data, "-n", "w"))

	sock := filepath.Join(data, "cube.sock")
	d, dout := cubeProc(t, nil, "serve", "--data", data)
	defer func() { d.Process.Signal(syscall.SIGTERM); d.Wait() }()
	waitSocket(t, sock, dout)
	check("through the daemon", cubeStdin(t, input, "repl", "-s", sock, "-n", "w"))
}
