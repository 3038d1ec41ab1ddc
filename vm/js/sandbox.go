package js

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"

	"github.com/cubelinux/cube/vm"
)

// Defaults for the zero fields of Options.
const (
	// DefaultMaxCallStack bounds nested JavaScript calls. It is lower than
	// V8's ~10,000 frames because goja unwinds a stack overflow that
	// recursed through native built-ins (f = () => [1].map(f)) in time
	// quadratic in the depth: 1,000 frames take ~40 ms, 3,000 ~350 ms,
	// 10,000 over 5 s, during which Interrupt cannot stop it.
	DefaultMaxCallStack = 2_000
	// DefaultRegexpTimeout bounds one backtracking regular-expression
	// match.
	DefaultRegexpTimeout = 100 * time.Millisecond
)

// Options configure a Sandbox. The zero value is ready to use.
type Options struct {
	// Logger receives one debug line per failed run. Nil discards.
	Logger *slog.Logger
	// MaxCallStack bounds the JavaScript call depth; deeper recursion
	// ends the run with KindTrap. Zero means DefaultMaxCallStack.
	MaxCallStack int
	// RegexpTimeout bounds a single backtracking regular-expression match.
	// It is process-wide in the regexp engine, so only the first New in a
	// process sets it. Zero means DefaultRegexpTimeout.
	RegexpTimeout time.Duration
}

// Sandbox compiles JavaScript programs. It is safe for concurrent use.
type Sandbox struct {
	log      *slog.Logger
	maxStack int
	rxLimit  time.Duration
	wd       *watchdog
	boot     *goja.Program // lockdownJS, compiled once

	// pool holds idle frozen runtimes, shared by the programs. A channel,
	// not a sync.Pool: building one costs milliseconds, too much to redo
	// after every garbage collection empties a sync.Pool.
	pool  chan *pooled
	built atomic.Int64 // runtimes built
	// buildTime is how long the last runtime took to build, in
	// nanoseconds: how long take waits for an idle one before it builds.
	buildTime atomic.Int64

	mu     sync.Mutex
	progs  map[*Program]struct{}
	closed atomic.Bool
}

var _ vm.Sandbox = (*Sandbox)(nil)

// regexpOnce sets regexp2's process-wide default match timeout. It is the
// only knob regexp2 offers (goja compiles its patterns without options),
// and it must be set before any pattern is compiled.
var (
	regexpOnce    sync.Once
	regexpTimeout time.Duration
)

// New returns a JavaScript sandbox.
func New(o Options) *Sandbox {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxCallStack <= 0 {
		o.MaxCallStack = DefaultMaxCallStack
	}
	if o.RegexpTimeout <= 0 {
		o.RegexpTimeout = DefaultRegexpTimeout
	}
	regexpOnce.Do(func() {
		regexp2.DefaultMatchTimeout = o.RegexpTimeout
		regexpTimeout = o.RegexpTimeout
	})
	return &Sandbox{
		boot:     goja.MustCompile("lockdown.js", lockdownJS, true),
		log:      o.Logger,
		maxStack: o.MaxCallStack,
		rxLimit:  regexpTimeout,
		wd:       newWatchdog(),
		progs:    make(map[*Program]struct{}),
		pool:     make(chan *pooled, poolSize()),
	}
}

// Kind reports vm.JS.
func (s *Sandbox) Kind() vm.Kind { return vm.JS }

// wrapPrefix turns a program's top level into a function body, so that
// each run gets a fresh scope. It is on the first line of the wrapped
// source, so only first-line columns need shifting back.
const wrapPrefix = `(function(){"use strict";`

// Compile parses and compiles code once. The code must define a function
// run(args). Syntax errors and a missing run are KindBadModule errors with
// the line and column of the problem.
func (s *Sandbox) Compile(ctx context.Context, code []byte, lim vm.Limits) (vm.Program, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	src := string(code)
	sum := sha256.Sum256(code)
	name := fmt.Sprintf("program-%x.js", sum[:6])
	// Parse the code on its own first: its positions are the user's, and
	// code that parses as a whole script cannot break out of the wrapper.
	ast, err := parseScript(name, src)
	if err != nil {
		return nil, err
	}
	if !declaresRun(ast) {
		return nil, &vm.Error{Kind: vm.KindBadModule, Msg: "the script does not define a function run(args) at its top level"}
	}
	wrapped, err := compileScript(name, wrapPrefix+src+"\n;return typeof run === 'function' ? run : undefined;})")
	if err != nil {
		return nil, err
	}
	p := &Program{sb: s, name: name, factory: wrapped, lim: lim}
	// The runtimes are the sandbox's: a new program costs its parse and
	// compile, not a frozen runtime (milliseconds). The first program
	// builds the pool's first runtime, so that its first run does not pay
	// for it. The top level is not run here: it runs at every run, with
	// the host and under the run's limits.
	if s.built.Load() == 0 {
		rt, err := s.newRuntime()
		if err != nil {
			return nil, err
		}
		s.put(rt)
	}
	s.mu.Lock()
	s.progs[p] = struct{}{}
	s.mu.Unlock()
	return p, nil
}

// declaresRun reports whether the script's top level declares run: a
// function declaration, or a var, let or const binding.
func declaresRun(prg *ast.Program) bool {
	isRun := func(l []*ast.Binding) bool {
		for _, b := range l {
			if id, ok := b.Target.(*ast.Identifier); ok && id.Name == "run" {
				return true
			}
		}
		return false
	}
	for _, st := range prg.Body {
		switch d := st.(type) {
		case *ast.FunctionDeclaration:
			if d.Function.Name != nil && d.Function.Name.Name == "run" {
				return true
			}
		case *ast.VariableStatement:
			if isRun(d.List) {
				return true
			}
		case *ast.LexicalDeclaration:
			if isRun(d.List) {
				return true
			}
		}
	}
	return false
}

// parseScript parses src, turning syntax errors into KindBadModule
// errors with a position.
func parseScript(name, src string) (*ast.Program, error) {
	prg, err := parser.ParseFile(nil, name, src, 0, parser.WithDisableSourceMaps)
	if err != nil {
		e := &vm.Error{Kind: vm.KindBadModule, Msg: "syntax error: " + err.Error(), Err: err}
		if l, ok := err.(parser.ErrorList); ok && len(l) > 0 {
			e.Msg = "syntax error: " + l[0].Message
			e.Line, e.Column = l[0].Position.Line, l[0].Position.Column
		}
		return nil, e
	}
	return prg, nil
}

// compileScript parses and compiles src as strict-mode script.
func compileScript(name, src string) (*goja.Program, error) {
	ast, err := parseScript(name, src)
	if err != nil {
		return nil, err
	}
	prg, err := goja.CompileAST(ast, true)
	if err != nil {
		e := &vm.Error{Kind: vm.KindBadModule, Msg: "syntax error: " + err.Error(), Err: err}
		if ce, ok := err.(*goja.CompilerSyntaxError); ok {
			e.Msg = "syntax error: " + ce.Message
			if ce.File != nil {
				pos := ce.File.Position(ce.Offset)
				e.Line, e.Column = pos.Line, pos.Column
			}
		}
		return nil, e
	}
	return prg, nil
}

// Close closes every program compiled by the sandbox.
func (s *Sandbox) Close(ctx context.Context) error {
	s.closed.Store(true)
	s.mu.Lock()
	progs := s.progs
	s.progs = map[*Program]struct{}{}
	s.mu.Unlock()
	for p := range progs {
		p.Close(ctx)
	}
	for {
		select {
		case <-s.pool:
		default:
			return nil
		}
	}
}

func (s *Sandbox) forget(p *Program) {
	s.mu.Lock()
	delete(s.progs, p)
	s.mu.Unlock()
}
