package cube_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cubelinux/cube"
)

// TestServeJSWorker runs JavaScript in a worker process that is this test
// binary calling ServeJSWorker (TestJSWorkerChild), as cube's hidden verb
// does. The child leaves a file behind, so the test knows the script ran
// there and not in this process. Seen failing with ServeJSWorker
// returning at once (the run fails: the worker died).
func TestServeJSWorker(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "worker-ran")
	t.Setenv("CUBE_TEST_JS_WORKER", mark)
	db := open(t, t.TempDir(), cube.Options{JSWorker: []string{os.Args[0], "-test.run=^TestJSWorkerChild$"}})
	s := db.Session("")
	defer s.Close()
	c, err := s.Eval(ctx, "6 * 7")
	if err != nil {
		t.Fatal(err)
	}
	if string(c.Output) != "42" {
		t.Fatalf("completion %q", c.Output)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Fatalf("the script did not run in the worker: %v", err)
	}
}

// TestJSWorkerChild is TestServeJSWorker's worker; it does nothing unless
// started by it.
func TestJSWorkerChild(t *testing.T) {
	mark := os.Getenv("CUBE_TEST_JS_WORKER")
	if mark == "" {
		t.Skip("only runs as TestServeJSWorker's worker")
	}
	if err := os.WriteFile(mark, nil, 0o600); err != nil {
		os.Exit(2)
	}
	if err := cube.ServeJSWorker(os.Stdin, os.Stdout); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}
