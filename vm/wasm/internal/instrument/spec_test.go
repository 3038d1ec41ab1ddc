package instrument_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/cubelinux/cube/vm/wasm/internal/instrument"
)

// wazeroDir is where the go command keeps wazero's module source, whose
// spec test suites (compiled .wasm files) make a corpus of every
// instruction wazero knows.
func wazeroDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/tetratelabs/wazero").Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		t.Skipf("wazero's module source not found (%v)", err)
	}
	return dir
}

// TestSpecCorpus rewrites every module of wazero's spec test suites that
// wazero accepts and checks that wazero accepts the result.
func TestSpecCorpus(t *testing.T) {
	dir := wazeroDir(t)
	ctx := context.Background()
	for _, suite := range []struct {
		dir      string
		features api.CoreFeatures
	}{
		{"v1", api.CoreFeaturesV1},
		{"v2", api.CoreFeaturesV2},
		{"tail-call", api.CoreFeaturesV2 | experimental.CoreFeaturesTailCall},
	} {
		t.Run(suite.dir, func(t *testing.T) {
			files, _ := filepath.Glob(filepath.Join(dir, "internal/integration_test/spectest", suite.dir, "testdata/*.wasm"))
			if len(files) == 0 {
				t.Skip("no spec test modules")
			}
			if testing.Short() {
				files = files[:len(files)/10]
			}
			rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter().WithCoreFeatures(suite.features))
			defer rt.Close(ctx)
			var valid, checked int
			for _, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				cm, err := rt.CompileModule(ctx, b)
				if err != nil {
					continue
				}
				_ = cm.Close(ctx)
				valid++
				res, err := instrument.Rewrite(b, 1<<20)
				if err != nil {
					t.Errorf("%s: wazero accepts it, Rewrite: %v", filepath.Base(f), err)
					continue
				}
				cm, err = rt.CompileModule(ctx, res.Module)
				if err != nil {
					t.Errorf("%s: rewritten module refused: %v", filepath.Base(f), err)
					continue
				}
				_ = cm.Close(ctx)
				checked++
			}
			t.Logf("%d modules, %d valid, %d rewritten and valid", len(files), valid, checked)
		})
	}
}
