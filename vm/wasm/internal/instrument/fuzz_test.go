package instrument_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/cubelinux/cube/vm/wasm/internal/instrument"
)

// FuzzRewrite: any module wazero accepts rewrites to one it accepts, and
// its exported functions without params return the same results (or trap
// with the same message) before and after. The budget is the largest, so
// the stack check itself never fires here. The rewritten module runs
// where wazero never looks at the context (close-on-context-done off), on
// a small fuel so that yields come often: only the rewriter's checks can
// end a module that never ends. With the stop flag set, every call traps
// at once.
func FuzzRewrite(f *testing.F) {
	for _, glob := range []string{"testdata/*.wasm", "../../testdata/*.wasm"} {
		files, _ := filepath.Glob(glob)
		for _, name := range files {
			b, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Add([]byte("\x00asm\x01\x00\x00\x00\x01\x05\x01\x60\x00\x01\x7f\x03\x02\x01\x00\x07\x05\x01\x01f\x00\x00\x0a\x06\x01\x04\x00\x41\x2a\x0b"))
	ctx := context.Background()
	origRT := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter().WithCloseOnContextDone(true))
	f.Cleanup(func() { _ = origRT.Close(ctx) })
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	f.Cleanup(func() { _ = rt.Close(ctx) })
	addYield(f, ctx, rt, 1000, nil)
	f.Fuzz(func(t *testing.T, b []byte) {
		res, rerr := instrument.Rewrite(b, instrument.MaxBudget)
		if errors.Is(rerr, instrument.ErrImpossibleCount) {
			return // invalid, and wazero would allocate for it without bound
		}
		orig, err := origRT.CompileModule(ctx, b)
		if err != nil {
			return
		}
		defer orig.Close(ctx)
		if rerr != nil {
			t.Fatalf("wazero accepts the module, Rewrite: %v", rerr)
		}
		rewritten, err := rt.CompileModule(ctx, res.Module)
		if err != nil {
			t.Fatalf("rewritten module refused: %v", err)
		}
		defer rewritten.Close(ctx)
		if len(orig.ImportedFunctions()) > 0 || len(orig.ImportedMemories()) > 0 {
			return // nothing to link against
		}
		// The rewritten module first: a module that never ends is found
		// out there, and the original, the same code less the checks,
		// then ends as soon. A module the checks fail to stop hangs the
		// fuzzer: the watchdog says so.
		dog := time.AfterFunc(30*time.Second, func() { panic("a rewritten module ran on 30 s past its deadline") })
		got, ok := outcomes(ctx, rt, rewritten, 100*time.Millisecond, "")
		dog.Stop()
		if !ok {
			return
		}
		want, ok := outcomes(ctx, origRT, orig, 10*time.Second, "")
		if ok && !slices.Equal(got, want) {
			t.Fatalf("before and after the rewrite:\n%q\n%q", want, got)
		}
		stopped, _ := outcomes(ctx, rt, rewritten, 10*time.Second, res.Stop)
		for _, s := range stopped {
			if !strings.HasSuffix(s, ": trap wasm error: unreachable") {
				t.Fatalf("with the stop flag set: %q", s)
			}
		}
	})
}

// outcomes instantiates cm and calls each exported function that takes no
// params, in name order, describing what each did. ok is false when a call
// ran out of time or the module did not instantiate.
// With stop set, the global of that name is set to StopValue first.
func outcomes(ctx context.Context, rt wazero.Runtime, cm wazero.CompiledModule, limit time.Duration, stop string) (out []string, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	m, err := rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		return nil, false
	}
	defer m.Close(ctx)
	if stop != "" {
		m.ExportedGlobal(stop).(api.MutableGlobal).Set(instrument.StopValue)
	}
	var names []string
	for name, d := range cm.ExportedFunctions() {
		if len(d.ParamTypes()) == 0 {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		res, err := m.ExportedFunction(name).Call(ctx)
		var ee *sys.ExitError
		if errors.As(err, &ee) || ctx.Err() != nil && stop == "" {
			return nil, false // timed out: the module is closed
		}
		s := name + ": "
		if err != nil {
			s += "trap " + firstLine(err.Error())
		} else {
			for i, t := range cm.ExportedFunctions()[name].ResultTypes() {
				s += api.ValueTypeName(t) + "=" + canonical(t, res[i]) + " "
			}
		}
		out = append(out, s)
	}
	return out, true
}

func firstLine(s string) string {
	for i := range s {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}
