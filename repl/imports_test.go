package repl_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports keeps the layering of DESIGN.md: the REPL reaches the
// sandboxes only through package cube and never imports the daemon (its
// tests do, to run against it).
func TestImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, "github.com/cubelinux/cube/repl").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, imp := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/dop251/goja", "github.com/tetratelabs/wazero", "github.com/cubelinux/cube/server", "github.com/cubelinux/cube/vm/js", "github.com/cubelinux/cube/plugins"} {
			if imp == banned || strings.HasPrefix(imp, banned+"/") {
				t.Errorf("repl imports %s", imp)
			}
		}
	}
}
