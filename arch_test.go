package cube_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportDirection keeps the arrows pointing down: cmd -> repl, server
// -> cube (this package, the facade) -> plugins -> vm, engine. vm never
// imports engine; engine imports nothing of the project but its own
// packages; each runtime library is imported by one package only.
//
// The layers above plugins reach the store and the sandboxes through the
// facade alone, so that what they may rely on is what package cube
// documents: server, repl and cmd import neither engine, vm nor plugins
// (nor their subpackages). examples/ are not a layer: they show the
// engine on its own and may import it.
//
// docs/ARCHITECTURE.md is the map these rules keep (every package, what
// it owns, who may import it), and docs/DESIGN.md says why the layers are
// cut where they are; change them with the rules.
//
// Seen to fail: with server/args.go importing engine again (and using
// engine.ErrNoNamespace), and with repl/embedded.go importing
// engine/curve.
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
	const root = mod + "\x00root" // the root package, told apart from the module prefix
	below := []string{mod + "/engine", mod + "/vm", mod + "/plugins"}
	// who may not import what: a package (prefix) -> forbidden import prefixes
	forbidden := map[string][]string{
		mod + "/engine":  {mod + "/vm", mod + "/plugins", mod + "/server", mod + "/repl", mod + "/cmd", root},
		mod + "/vm":      {mod + "/engine", mod + "/plugins", mod + "/server", mod + "/repl", mod + "/cmd", root},
		mod + "/plugins": {mod + "/server", mod + "/repl", mod + "/cmd", root},
		mod + "/server":  below,
		mod + "/repl":    append([]string{mod + "/server"}, below...), // the REPL talks to a daemon over the wire
		mod + "/cmd":     below,                                       // cmd/cube opens stores and runs programs through cube
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
				target = root
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
