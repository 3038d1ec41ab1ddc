package wasm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/wasm/internal/instrument"
)

// Options configure a Sandbox. The zero value is usable.
type Options struct {
	// CacheDir holds wazero's compilation cache and the instrumented
	// modules (see instrument.Rewrite), so a program compiled once loads
	// fast after a restart. "" keeps the compilation cache in memory and
	// instruments every module anew.
	CacheDir string
	// Logger receives the sandbox's own diagnostics. nil discards them.
	Logger *slog.Logger
}

// Sandbox runs WebAssembly programs on wazero in compiled mode. It
// implements vm.Sandbox and is safe for concurrent use.
type Sandbox struct {
	cache  wazero.CompilationCache
	rw     rewriteCache
	logger *slog.Logger
	epoch  time.Time // zero of the guests' monotonic clock

	mu     sync.Mutex
	progs  map[*Program]struct{}
	closed bool
}

var _ vm.Sandbox = (*Sandbox)(nil)

// New returns a sandbox. With Options.CacheDir set, the directory is
// created if needed and compiled code is cached there.
func New(ctx context.Context, o Options) (*Sandbox, error) {
	s := &Sandbox{logger: o.Logger, epoch: time.Now(), progs: map[*Program]struct{}{}}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if o.CacheDir == "" {
		s.cache = wazero.NewCompilationCache()
	} else {
		c, err := wazero.NewCompilationCacheWithDir(o.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("wasm: compilation cache %s: %w", o.CacheDir, err)
		}
		s.cache = c
		if s.rw, err = newRewriteCache(o.CacheDir); err != nil {
			_ = c.Close(ctx)
			return nil, fmt.Errorf("wasm: compilation cache %s: %w", o.CacheDir, err)
		}
	}
	return s, nil
}

// Kind implements vm.Sandbox.
func (s *Sandbox) Kind() vm.Kind { return vm.WASM }

// Close releases every program compiled by s and the in-memory part of the
// compilation cache. Runs in progress end with KindAborted.
func (s *Sandbox) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	progs := s.progs
	s.progs = nil
	s.mu.Unlock()
	var errs []error
	for p := range progs {
		errs = append(errs, p.close(ctx))
	}
	errs = append(errs, s.cache.Close(ctx))
	return errors.Join(errs...)
}

func memoryPages(bytes int64) uint32 {
	if bytes < 0 || bytes >= 65536*65536 {
		return 65536
	}
	return uint32(max(1, (bytes+65535)/65536))
}

func badModule(format string, args ...any) *vm.Error {
	return &vm.Error{Kind: vm.KindBadModule, Msg: fmt.Sprintf(format, args...)}
}

// Compile implements vm.Sandbox. It validates the module (imports against
// ABI v1 and the WASI subset, the run export), compiles it, and
// instantiates it once on trial under lim.Timeout, so that a start
// function or _initialize that never returns fails here with KindTimeout
// instead of at every run.
func (s *Sandbox) Compile(ctx context.Context, code []byte, lim vm.Limits) (vm.Program, error) {
	lim = lim.WithDefaults()
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	// No close-on-context-done: the rewritten code stops itself (see
	// yield), where wazero would start a goroutine per call and leave its
	// compiled code for Go at every loop header.
	cfg := wazero.NewRuntimeConfigCompiler().
		WithMemoryLimitPages(memoryPages(lim.MemoryBytes)).
		WithCompilationCache(s.cache).
		WithDebugInfoEnabled(false) // the instrumented code section would misplace DWARF lines
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	p := &Program{s: s, rt: rt, lim: lim, stackSlots: uint32(StackBytes(lim) / 8)}
	inst, err := s.rw.rewrite(code, p.stackSlots)
	if err != nil {
		// wazero's own message says more about a module it refuses, but a
		// count the module cannot hold would make it allocate without bound.
		if errors.Is(err, instrument.ErrImpossibleCount) {
			err = fmt.Errorf("wasm: malformed module: %w", err)
		} else if _, cerr := rt.CompileModule(ctx, code); cerr != nil {
			err = cerr
		} else {
			err = fmt.Errorf("wasm: cannot instrument the module: %w", err)
		}
		_ = rt.Close(ctx)
		return nil, &vm.Error{Kind: vm.KindBadModule, Msg: err.Error(), Err: err}
	}
	p.counter, p.stop, p.yield = inst.Counter, inst.Stop, inst.Yield
	if err := p.compile(ctx, inst.Module, instrument.Stateless(code)); err != nil {
		_ = rt.Close(ctx)
		return nil, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = rt.Close(ctx)
		return nil, ErrClosed
	}
	s.progs[p] = struct{}{}
	s.mu.Unlock()
	return p, nil
}

// compile compiles code, the rewritten module; stateless is what
// instrument.Stateless says of the module as written.
func (p *Program) compile(ctx context.Context, code []byte, stateless bool) error {
	cm, err := p.rt.CompileModule(ctx, code)
	if err != nil {
		if strings.Contains(err.Error(), "over limit") {
			return &vm.Error{Kind: vm.KindMemoryLimit, Msg: fmt.Sprintf("%v (limit %d bytes)", err, p.lim.MemoryBytes), Err: err}
		}
		return &vm.Error{Kind: vm.KindBadModule, Msg: err.Error(), Err: err}
	}
	p.mod = cm
	usesWASI, verr := checkImports(cm, p.yield)
	if verr != nil {
		return verr
	}
	exp := cm.ExportedFunctions()
	if d, ok := exp["run"]; !ok || len(d.ParamTypes()) != 0 || !sameTypes(d.ResultTypes(), i32s(1)) {
		return badModule("the module must export a function run() -> i32")
	}
	if d, ok := exp["_initialize"]; ok {
		if len(d.ParamTypes()) != 0 || len(d.ResultTypes()) != 0 {
			return badModule("_initialize must take and return nothing")
		}
		p.hasInit = true
	}
	if err := instantiateHost(ctx, p.rt, ModuleName, abiFuncs); err != nil {
		return err
	}
	if err := instantiateHost(ctx, p.rt, instrument.YieldModule, yieldFuncs); err != nil {
		return err
	}
	if usesWASI {
		if err := instantiateHost(ctx, p.rt, WASIModuleName, wasiFuncs(p.s.epoch, p.s.logger)); err != nil {
			return err
		}
	}
	p.mcfg = wazero.NewModuleConfig().
		WithName("").            // anonymous: any number of instances at once
		WithStartFunctions().    // _initialize is called by hand, under the run's deadline
		WithRandSource(zeros{}). // wazero would otherwise seed a PRNG per instance (~10 µs); the guest's random_get is ours
		// Nor need wazero's clocks be made for each instance (three
		// allocations): the guest's clock_time_get is ours too.
		WithWalltime(noWalltime, 1).
		WithNanotime(noNanotime, 1)
	p.allocCtx = experimental.WithMemoryAllocator(context.Background(), &p.mem)
	// A run with no host: its cube_v1 calls answer as outside a run (see
	// enter), its WASI calls count against its guard.
	rs := p.newRun(ctx)
	defer p.endRun(rs)
	rs.g = *vm.NewGuard(p.lim)
	m, err := p.instantiate(rs)
	if err != nil {
		return p.classify(ctx, rs, err, nil, nil)
	}
	switch {
	case p.lim.Isolation == vm.Reuse:
		p.idle = append(p.idle, m)
	case stateless && !p.hasInit:
		// Nothing ran in it: its memory is every instance's initial
		// memory, and it is the first run's.
		p.reset = newResetPlan(m)
		p.idle = append(p.idle, m)
	case !rs.outside:
		// The first run takes it (see acquire). Not one whose
		// _initialize asked for the store: in a run it would have had
		// one.
		g := rs.g
		m.init = &g
		p.spare = m
	default:
		_ = m.m.Close(ctx)
	}
	return nil
}

func noWalltime() (int64, int32) { return 0, 0 }
func noNanotime() int64          { return 0 }

type zeros struct{}

func (zeros) Read(b []byte) (int, error) { clear(b); return len(b), nil }

func instantiateHost(ctx context.Context, rt wazero.Runtime, name string, fns []hostFunc) error {
	b := rt.NewHostModuleBuilder(name)
	for _, f := range fns {
		b.NewFunctionBuilder().WithGoModuleFunction(f.fn, f.params, f.results).WithName(f.name).Export(f.name)
	}
	if _, err := b.Instantiate(ctx); err != nil {
		return fmt.Errorf("wasm: host module %s: %w", name, err)
	}
	return nil
}

func sameTypes(a, b []api.ValueType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func sig(params, results []api.ValueType) string {
	name := func(ts []api.ValueType) string {
		var s []string
		for _, t := range ts {
			s = append(s, api.ValueTypeName(t))
		}
		return "(" + strings.Join(s, ", ") + ")"
	}
	return name(params) + " -> " + name(results)
}

// checkImports refuses every import outside ABI v1 and the WASI subset,
// naming it, except the rewriter's own yield (imported function number
// yield). A module built for another ABI version fails with
// KindABIVersion before anything else is reported.
func checkImports(cm wazero.CompiledModule, yield uint32) (usesWASI bool, err error) {
	abi := map[string]hostFunc{}
	for _, f := range abiFuncs {
		abi[f.name] = f
	}
	wasi := map[string]hostFunc{}
	for _, f := range wasiFuncs(time.Time{}, nil) {
		wasi[f.name] = f
	}
	var first *vm.Error
	note := func(e *vm.Error) {
		if first == nil {
			first = e
		}
	}
	for i, d := range cm.ImportedFunctions() {
		mod, name, _ := d.Import()
		if uint32(i) == yield {
			continue
		}
		var table map[string]hostFunc
		switch {
		case mod == ModuleName:
			table = abi
		case mod == WASIModuleName:
			table, usesWASI = wasi, true
		case strings.HasPrefix(mod, "cube"):
			return false, &vm.Error{Kind: vm.KindABIVersion, Msg: fmt.Sprintf("the module imports %q.%q, but this host speaks ABI v1 (import module %q)", mod, name, ModuleName)}
		default:
			note(badModule("import %q.%q is not allowed: a program may import only %q and a WASI subset (docs/ABI.md)", mod, name, ModuleName))
			continue
		}
		f, ok := table[name]
		if !ok {
			if mod == WASIModuleName {
				note(badModule("import %q.%q is not allowed: no file system, network or process access (docs/ABI.md lists the WASI subset)", mod, name))
			} else {
				note(badModule("import %q.%q: no such function in ABI v1", mod, name))
			}
			continue
		}
		if !sameTypes(d.ParamTypes(), f.params) || !sameTypes(d.ResultTypes(), f.results) {
			note(badModule("import %q.%q has type %s, want %s", mod, name, sig(d.ParamTypes(), d.ResultTypes()), sig(f.params, f.results)))
		}
	}
	for _, d := range cm.ImportedMemories() {
		mod, name, _ := d.Import()
		note(badModule("import %q.%q (a memory) is not allowed: the module must define its own memory", mod, name))
	}
	if first != nil {
		return false, first
	}
	return usesWASI, nil
}
