// The kitcheck example: every guest-kit function the other examples leave
// out, and the inverted-box error path, in Go, C, AssemblyScript and
// JavaScript (see the sources under go/, c/, as/ and js/ for the rebuild
// commands; plugins/pdk/conformance holds the expected output).
package kitcheck_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cubelinux/cube/examples/internal/extest"
	"github.com/cubelinux/cube/plugins/pdk/conformance"
	"github.com/cubelinux/cube/vm"
)

// TestKitcheck runs the program in every language on both hosts: the same
// output, and the run's log (which the output does not show) holds the two
// lines every version logs.
func TestKitcheck(t *testing.T) {
	i := slices.IndexFunc(conformance.Cases(), func(c conformance.Case) bool { return c.Name == "kitcheck/every call" })
	if i < 0 {
		t.Fatal("no case kitcheck/every call in the table")
	}
	c := conformance.Cases()[i]
	lines := strings.Count(c.Want, "\n") + 1
	wantLogs := []string{"kitcheck: start", "kitcheck: " + strconv.Itoa(lines) + " lines"}
	extest.EverywhereCheck(t, "..", conformance.Kitcheck, c.Data, c.Args, c.Want, func(t *testing.T, where string, res vm.Result) {
		if !slices.Equal(res.Logs, wantLogs) {
			t.Errorf("%s: log %q, want %q", where, res.Logs, wantLogs)
		}
	})
}
