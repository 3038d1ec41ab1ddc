package cube_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportDirection keeps the arrows pointing down (STYLE.md): cmd ->
// repl, server -> cube -> plugins -> vm, engine; vm never imports engine;
// engine imports nothing of the project but its own packages; each runtime
// library is imported by one package only.
func TestImportDirection(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(goBin, "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/cubelinux/cube"
	// who may import what: a package (prefix) -> forbidden import prefixes
	forbidden := map[string][]string{
		mod + "/engine":  {mod + "/vm", mod + "/plugins", mod + "/server", mod + "/repl", mod + "/cmd", mod + "\x00root"},
		mod + "/vm":      {mod + "/engine", mod + "/plugins", mod + "/server", mod + "/repl", mod + "/cmd", mod + "\x00root"},
		mod + "/plugins": {mod + "/server", mod + "/repl", mod + "/cmd", mod + "\x00root"},
	}
	only := map[string]string{ // library -> the one package prefix allowed to import it
		"github.com/tetratelabs/wazero": mod + "/vm/wasm",
		"github.com/dop251/goja":        mod + "/vm/js",
		"github.com/peterh/liner":       mod + "/repl",
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg, imps := f[0], f[1:]
		for _, imp := range imps {
			target := imp
			if imp == mod {
				target = mod + "\x00root"
			}
			for prefix, bad := range forbidden {
				if pkg != prefix && !strings.HasPrefix(pkg, prefix+"/") {
					continue
				}
				if strings.HasPrefix(pkg, mod+"/plugins/pdk") {
					continue // guest kits are separate programs
				}
				for _, b := range bad {
					if target == b || strings.HasPrefix(target, b+"/") {
						t.Errorf("%s imports %s", pkg, imp)
					}
				}
			}
			for lib, owner := range only {
				if (imp == lib || strings.HasPrefix(imp, lib+"/")) && pkg != owner && !strings.HasPrefix(pkg, owner+"/") {
					t.Errorf("%s imports %s; only %s may", pkg, imp, owner)
				}
			}
		}
	}
}
