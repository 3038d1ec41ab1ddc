package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestREPLAndServeSayTheyCreatedAStore: the two verbs besides import that
// may make a store say so, once (caught: the REPL and serve opening with
// cube.Open directly made ./cube.data silently).
func TestREPLAndServeSayTheyCreatedAStore(t *testing.T) {
	dir := shortDir(t)
	data := filepath.Join(dir, "r")
	for i, want := range []int{1, 0} {
		code, _, errs := cubeRun(t, "1+1\n", "--data", data)
		if code != 0 || strings.Count(errs, "created a new store in "+data) != want {
			t.Fatalf("REPL run %d: exit %d, stderr %q; want the notice %d time(s)", i+1, code, errs, want)
		}
	}
	sdata := filepath.Join(dir, "s")
	d, out := cubeProc(t, nil, "serve", "--data", sdata, "--sync", "none")
	waitSocket(t, filepath.Join(sdata, "cube.sock"), out)
	d.Process.Signal(syscall.SIGTERM)
	d.Wait()
	if !strings.Contains(out.String(), "created a new store in "+sdata) {
		t.Fatalf("serve on a new directory did not say it made a store:\n%s", out)
	}
}
