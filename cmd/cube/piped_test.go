package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// cubePiped runs "cube args..." with stdin as its standard input (a pipe,
// as in printf ... | cube) and returns its exit status and output.
func cubePiped(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	b, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CUBE_TEST_MAIN="+string(b), "HOME="+t.TempDir())
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return exitCode(err), out.String(), errb.String()
}
