//lint:file-ignore SA2001 Run waits for a registering writer with an empty critical section on purpose.

package plugins

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/js"
	"github.com/cubelinux/cube/vm/jsproc"
	"github.com/cubelinux/cube/vm/wasm"
)

// Options configure a Registry. The zero value is usable.
type Options struct {
	// Logger receives notices (telemetry flush failures, undecodable
	// records); nil discards them.
	Logger *slog.Logger
	// CacheDir holds the WASM compilation cache, so programs compile fast
	// after a restart. "" keeps it in memory only.
	CacheDir string
	// Limits are the defaults for every program's zero Limits fields, and
	// the limits of Eval and sessions. Zero fields here take vm's defaults.
	Limits vm.Limits
	// TelemetryInterval is how often changed telemetry is written to the
	// store; zero means DefaultTelemetryInterval, negative only at Close.
	TelemetryInterval time.Duration
	// Clock returns the current time (registration times); nil means
	// time.Now.
	Clock func() time.Time
	// JSWorker, when set, is the command that starts a JavaScript worker
	// process (one that calls jsproc.Serve): every JavaScript program,
	// Eval and Session then runs in worker processes whose memory and
	// time limits the kernel enforces (see vm/jsproc). Empty runs
	// JavaScript in this process, bounded by vm/js's own checks only: fine
	// for code you trust, not for a daemon serving others.
	JSWorker []string
	// JSWorkers tunes the worker pool when JSWorker is set (its Command is
	// JSWorker).
	JSWorkers jsproc.Options
}

// jsRuntime is what the registry needs of a JavaScript sandbox: the
// in-process one (*js.Sandbox) or the worker pool (*jsproc.Pool).
type jsRuntime interface {
	vm.Sandbox
	EvalCompletion(ctx context.Context, host vm.Host, script string, args []byte, lim vm.Limits) (js.Completion, error)
	newSession(lim vm.Limits) jsSession
}

type jsSession interface {
	EvalWith(ctx context.Context, host vm.Host, script string, args []byte, lim vm.Limits) (js.Completion, error)
	Close()
}

type inProcess struct{ *js.Sandbox }

func (s inProcess) newSession(lim vm.Limits) jsSession { return s.NewSession(lim) }

type workerPool struct{ *jsproc.Pool }

func (p workerPool) newSession(lim vm.Limits) jsSession { return p.NewSession(lim) }

// ProgOptions configure one program. They are part of its version:
// registering the same code with other options is a new version.
type ProgOptions struct {
	// ReadOnly programs run on a snapshot, concurrently with each other
	// and with writers; a write fails the run with vm.ErrReadOnly.
	ReadOnly bool
	// Limits bound each run; zero fields take the registry's defaults
	// (Options.Limits), then vm's. Limits.ReadOnly is the same as
	// ReadOnly.
	Limits vm.Limits
}

// ProgramInfo describes a registered program.
type ProgramInfo struct {
	Namespace  string
	Name       string
	Kind       vm.Kind
	Version    string // hex SHA-256 of kind, options and code
	ReadOnly   bool
	Limits     vm.Limits // as registered; zero fields mean the defaults
	CodeSize   int
	Registered time.Time
	Telemetry  Telemetry
}

// Registry keeps programs in the namespaces of one engine.DB and runs them.
// It is safe for concurrent use.
type Registry struct {
	eng   *engine.DB
	o     Options
	log   *slog.Logger
	wasm  *wasm.Sandbox
	js    jsRuntime
	mu    sync.RWMutex
	regs  map[string]*nsReg
	close sync.Once
	quit  chan struct{}
	done  chan struct{}
	dead  bool // under mu
}

// nsReg is the registry of one namespace: the in-memory mirror of its
// "prog/" metadata, loaded on first use.
type nsReg struct {
	ns  *engine.Namespace
	wmu sync.Mutex // serializes Prog, Unprog and telemetry flushes
	mu  sync.RWMutex
	// progs mirrors the stored programs: name -> current version.
	progs map[string]*entry
}

// entry is one version of a program, compiled on first use.
type entry struct {
	name string
	rec  *record
	tel  *telemetry // shared by every version under the name

	cmu  sync.Mutex
	prog *compiled
}

// compiled is a vm.Program with a count of the runs using it, so a version
// replaced while it runs is closed when its last run ends.
type compiled struct {
	p       vm.Program
	mu      sync.Mutex
	refs    int
	retired bool
}

func (c *compiled) acquire() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.retired {
		return false
	}
	c.refs++
	return true
}

func (c *compiled) release() {
	c.mu.Lock()
	c.refs--
	closeNow := c.retired && c.refs == 0
	c.mu.Unlock()
	if closeNow {
		_ = c.p.Close(context.Background())
	}
}

func (c *compiled) retire() {
	c.mu.Lock()
	closeNow := !c.retired && c.refs == 0
	c.retired = true
	c.mu.Unlock()
	if closeNow {
		_ = c.p.Close(context.Background())
	}
}

func (e *entry) retire() {
	e.cmu.Lock()
	if e.prog != nil {
		e.prog.retire()
	}
	e.cmu.Unlock()
}

// New returns a registry over eng. It starts the telemetry flusher; Close
// stops it and writes the last counters.
func New(ctx context.Context, eng *engine.DB, o Options) (*Registry, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.TelemetryInterval == 0 {
		o.TelemetryInterval = DefaultTelemetryInterval
	}
	ws, err := wasm.New(ctx, wasm.Options{CacheDir: o.CacheDir, Logger: o.Logger})
	if err != nil {
		return nil, fmt.Errorf("plugins: wasm sandbox: %w", err)
	}
	r := &Registry{
		eng:  eng,
		o:    o,
		log:  o.Logger,
		wasm: ws,
		js:   inProcess{js.New(js.Options{Logger: o.Logger})},
		regs: map[string]*nsReg{},
		quit: make(chan struct{}),
		done: make(chan struct{}),
	}
	if len(o.JSWorker) > 0 {
		po := o.JSWorkers
		po.Command = o.JSWorker
		if po.Logger == nil {
			po.Logger = o.Logger
		}
		p, err := jsproc.New(po)
		if err != nil {
			_ = ws.Close(ctx)
			return nil, fmt.Errorf("plugins: javascript workers: %w", err)
		}
		r.js = workerPool{p}
	}
	if o.TelemetryInterval > 0 {
		go r.flusher(o.TelemetryInterval)
	} else {
		close(r.done)
	}
	return r, nil
}

func (r *Registry) sandbox(k vm.Kind) (vm.Sandbox, error) {
	switch k {
	case vm.WASM:
		return r.wasm, nil
	case vm.JS:
		return r.js, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrBadKind, k)
}

// limits merges a program's limits over the registry's defaults.
func (r *Registry) limits(rec *record) vm.Limits {
	l := over(rec.limits, r.o.Limits)
	l.ReadOnly = rec.readOnly
	return l
}

// over returns l with its zero fields taken from d.
func over(l, d vm.Limits) vm.Limits {
	if l.Timeout == 0 {
		l.Timeout = d.Timeout
	}
	if l.MemoryBytes == 0 {
		l.MemoryBytes = d.MemoryBytes
	}
	if l.OutputBytes == 0 {
		l.OutputBytes = d.OutputBytes
	}
	if l.Writes == 0 {
		l.Writes = d.Writes
	}
	if l.HostCalls == 0 {
		l.HostCalls = d.HostCalls
	}
	return l
}

// reg returns the registry of namespace name, loading it on first use, and
// reloading it if the namespace was dropped and created again.
func (r *Registry) reg(ctx context.Context, name string) (*nsReg, error) {
	ns, err := r.eng.Namespace(name)
	if err != nil {
		return nil, err
	}
	r.mu.RLock()
	g, dead := r.regs[name], r.dead
	r.mu.RUnlock()
	if dead {
		return nil, ErrClosed
	}
	if g != nil && g.ns == ns {
		return g, nil
	}
	ng, err := r.load(ctx, ns)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dead {
		return nil, ErrClosed
	}
	if g = r.regs[name]; g != nil && g.ns == ns {
		return g, nil // loaded meanwhile by another caller
	}
	if g != nil {
		g.retireAll()
	}
	r.regs[name] = ng
	return ng, nil
}

// load reads a namespace's programs and telemetry. A record that does not
// decode is logged and left out (Run of it says ErrNoProgram; Prog
// replaces it).
func (r *Registry) load(ctx context.Context, ns *engine.Namespace) (*nsReg, error) {
	g := &nsReg{ns: ns, progs: map[string]*entry{}}
	err := ns.View(ctx, func(tx *engine.Tx) error {
		for _, key := range tx.MetaKeys(progPrefix) {
			name := key[len(progPrefix):]
			b, _ := tx.Meta(key)
			rec, err := decodeRecord(b)
			if err != nil {
				r.log.Error("plugins: program not loaded", "namespace", ns.Name(), "program", name, "err", err)
				continue
			}
			e := &entry{name: name, rec: rec, tel: newTelemetry()}
			if sb, ok := tx.Meta(statPrefix + name); ok {
				if t, err := decodeTelemetry(sb); err != nil {
					r.log.Warn("plugins: telemetry not loaded", "namespace", ns.Name(), "program", name, "err", err)
				} else {
					e.tel = t
				}
			}
			g.progs[name] = e
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return g, nil
}

func (g *nsReg) get(name string) *entry {
	g.mu.RLock()
	e := g.progs[name]
	g.mu.RUnlock()
	return e
}

func (g *nsReg) retireAll() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, e := range g.progs {
		e.retire()
	}
}

// Prog validates and compiles code, then stores it as program name of
// namespace ns, replacing any earlier version in the same write. It
// returns the program's description, whose Version is the content hash.
//
// Registering the code, kind and options of the current version again
// changes nothing and writes nothing. The registration is durable when Prog
// returns, as the engine's sync mode promises for any write.
//
// # Errors
//
// ErrBadName, ErrBadKind, ErrEmptyCode; a *vm.Error of KindBadModule or
// KindABIVersion (syntax error, refused import, no run export) or of
// KindTimeout (a start function that never returns); engine.ErrNoNamespace.
func (r *Registry) Prog(ctx context.Context, ns, name string, kind vm.Kind, code []byte, o ProgOptions) (ProgramInfo, error) {
	if err := checkName(name); err != nil {
		return ProgramInfo{}, err
	}
	sb, err := r.sandbox(kind)
	if err != nil {
		return ProgramInfo{}, err
	}
	if len(code) == 0 {
		return ProgramInfo{}, ErrEmptyCode
	}
	lim := o.Limits
	rec := &record{registered: r.o.Clock(), kind: kind, readOnly: o.ReadOnly || lim.ReadOnly, code: bytes.Clone(code)}
	lim.ReadOnly = false
	rec.limits = lim
	stored, err := rec.seal()
	if err != nil {
		return ProgramInfo{}, err
	}
	g, err := r.reg(ctx, ns)
	if err != nil {
		return ProgramInfo{}, err
	}
	g.wmu.Lock()
	defer g.wmu.Unlock()
	if cur := g.get(name); cur != nil && cur.rec.version == rec.version {
		return r.info(ns, cur), nil
	}
	p, err := sb.Compile(ctx, rec.code, r.limits(rec))
	if err != nil {
		return ProgramInfo{}, err
	}
	err = g.ns.Update(ctx, func(tx *engine.Tx) error { return tx.SetMeta(progPrefix+name, stored) })
	if err != nil {
		_ = p.Close(ctx)
		return ProgramInfo{}, err
	}
	e := &entry{name: name, rec: rec, prog: &compiled{p: p}}
	g.mu.Lock()
	old := g.progs[name]
	if old != nil {
		e.tel = old.tel
	} else {
		e.tel = newTelemetry()
	}
	g.progs[name] = e
	g.mu.Unlock()
	if old != nil {
		old.retire()
	}
	return r.info(ns, e), nil
}

// Unprog removes program name from namespace ns, with its telemetry. Runs
// in progress finish with the version they started with. It is durable
// when it returns, like any write.
func (r *Registry) Unprog(ctx context.Context, ns, name string) error {
	g, err := r.reg(ctx, ns)
	if err != nil {
		return err
	}
	g.wmu.Lock()
	defer g.wmu.Unlock()
	err = g.ns.Update(ctx, func(tx *engine.Tx) error {
		ok, err := tx.DeleteMeta(progPrefix + name)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: %q in namespace %q", ErrNoProgram, name, ns)
		}
		_, err = tx.DeleteMeta(statPrefix + name)
		return err
	})
	if err != nil {
		return err
	}
	g.mu.Lock()
	old := g.progs[name]
	delete(g.progs, name)
	g.mu.Unlock()
	if old != nil {
		old.retire()
	}
	return nil
}

// ProgInfo describes program name of namespace ns, telemetry included.
func (r *Registry) ProgInfo(ns, name string) (ProgramInfo, error) {
	g, err := r.reg(context.Background(), ns)
	if err != nil {
		return ProgramInfo{}, err
	}
	e := g.get(name)
	if e == nil {
		return ProgramInfo{}, fmt.Errorf("%w: %q in namespace %q", ErrNoProgram, name, ns)
	}
	return r.info(ns, e), nil
}

// Progs describes every program of namespace ns, sorted by name.
func (r *Registry) Progs(ns string) ([]ProgramInfo, error) {
	g, err := r.reg(context.Background(), ns)
	if err != nil {
		return nil, err
	}
	g.mu.RLock()
	out := make([]ProgramInfo, 0, len(g.progs))
	for _, e := range g.progs {
		out = append(out, r.info(ns, e))
	}
	g.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// All describes every program of every namespace, sorted by namespace and
// name.
func (r *Registry) All() []ProgramInfo {
	var out []ProgramInfo
	for _, ni := range r.eng.Namespaces() {
		ps, err := r.Progs(ni.Name)
		if err != nil {
			continue // dropped meanwhile
		}
		out = append(out, ps...)
	}
	return out
}

func (r *Registry) info(ns string, e *entry) ProgramInfo {
	return ProgramInfo{
		Namespace:  ns,
		Name:       e.name,
		Kind:       e.rec.kind,
		Version:    e.rec.versionString(),
		ReadOnly:   e.rec.readOnly,
		Limits:     e.rec.limits,
		CodeSize:   len(e.rec.code),
		Registered: e.rec.registered,
		Telemetry:  e.tel.snapshot(),
	}
}

// compiled returns the entry's compiled program, compiling it on first use,
// with a reference the caller must release.
func (r *Registry) compiled(ctx context.Context, e *entry) (*compiled, error) {
	e.cmu.Lock()
	defer e.cmu.Unlock()
	if e.prog == nil {
		sb, err := r.sandbox(e.rec.kind)
		if err != nil {
			return nil, err
		}
		p, err := sb.Compile(ctx, e.rec.code, r.limits(e.rec))
		if err != nil {
			return nil, err
		}
		e.prog = &compiled{p: p}
	}
	if !e.prog.acquire() {
		// Replaced or removed between lookup and here: the caller looks
		// it up again.
		return nil, errRetired
	}
	return e.prog, nil
}

var errRetired = errors.New("plugins: program version retired")

// Run runs program name of namespace ns with args and returns its result.
//
// A read-only program runs on a snapshot; a read-write one inside one
// engine transaction whose writes commit, durably as the sync mode
// promises, when the program succeeds. On failure Run returns the
// program's partial Result (logs, counters) and the error, and none of the
// run's writes is visible, ever.
//
// # Errors
//
// ErrNoProgram; a *vm.Error (vm.KindOf tells trap, timeout, limits, guest
// error, ...); engine errors (engine.ErrNoNamespace, engine.ErrFailed).
func (r *Registry) Run(ctx context.Context, ns, name string, args []byte) (vm.Result, error) {
	g, err := r.reg(ctx, ns)
	if err != nil {
		return vm.Result{}, err
	}
	for attempt := 0; ; attempt++ {
		e := g.get(name)
		if e == nil {
			return vm.Result{}, fmt.Errorf("%w: %q in namespace %q", ErrNoProgram, name, ns)
		}
		res, err := r.runEntry(ctx, g, e, args)
		if attempt < 8 && (errors.Is(err, errRetired) || errors.Is(err, errStale)) {
			// A Prog or Unprog is between its commit and its update of
			// the in-memory mirror: wait for it (it holds wmu), then look
			// again. Past two attempts the metadata was changed behind
			// the registry's back: reread it.
			g.wmu.Lock()
			g.wmu.Unlock()
			if attempt >= 2 {
				if err := r.refresh(ctx, g, name); err != nil {
					return vm.Result{}, err
				}
			}
			continue
		}
		return res, err
	}
}

// errStale: the run's transaction sees another version than the entry the
// run started with.
var errStale = errors.New("plugins: program version changed")

func (r *Registry) runEntry(ctx context.Context, g *nsReg, e *entry, args []byte) (vm.Result, error) {
	c, err := r.compiled(ctx, e)
	if err != nil {
		if !errors.Is(err, errRetired) {
			e.tel.record(0, vm.Result{}, err)
		}
		return vm.Result{}, err
	}
	defer c.release()
	key := progPrefix + e.name
	var res vm.Result
	run := func(tx *engine.Tx) error {
		// Run exactly the version this transaction sees.
		b, ok := tx.Meta(key)
		if v, vok := recordVersion(b); !ok || !vok || !bytes.Equal(v, e.rec.version[:]) {
			return errStale
		}
		h := newHost(tx)
		defer h.close()
		var err error
		res, err = c.p.Run(ctx, h, args)
		return err
	}
	start := time.Now()
	if e.rec.readOnly {
		err = g.ns.View(ctx, run)
	} else {
		err = g.ns.Update(ctx, run)
	}
	if !errors.Is(err, errStale) {
		e.tel.record(time.Since(start), res, err)
	}
	return res, err
}

// refresh rereads program name from the namespace's metadata into the
// in-memory mirror.
func (r *Registry) refresh(ctx context.Context, g *nsReg, name string) error {
	g.wmu.Lock()
	defer g.wmu.Unlock()
	var rec *record
	err := g.ns.View(ctx, func(tx *engine.Tx) error {
		b, ok := tx.Meta(progPrefix + name)
		if !ok {
			return nil
		}
		var err error
		rec, err = decodeRecord(b)
		return err
	})
	if err != nil {
		return err
	}
	g.mu.Lock()
	old := g.progs[name]
	if rec == nil {
		delete(g.progs, name)
	} else {
		e := &entry{name: name, rec: rec, tel: newTelemetry()}
		if old != nil {
			e.tel = old.tel
		}
		g.progs[name] = e
	}
	g.mu.Unlock()
	if old != nil {
		old.retire()
	}
	return nil
}

// Eval runs an ad-hoc JavaScript script in namespace ns as one read-write
// transaction (its writes commit when it succeeds, as Run's do) under the
// registry's default limits, and returns its completion value. cube.args
// holds args. Nothing of the script outlives it; see Session for a scope
// that does.
func (r *Registry) Eval(ctx context.Context, ns, script string, args []byte) (js.Completion, error) {
	n, err := r.eng.Namespace(ns)
	if err != nil {
		return js.Completion{}, err
	}
	var c js.Completion
	err = n.Update(ctx, func(tx *engine.Tx) error {
		h := newHost(tx)
		defer h.close()
		c, err = r.js.EvalCompletion(ctx, h, script, args, r.o.Limits)
		return err
	})
	return c, err
}

// Session is a JavaScript scope that keeps its state between Evals (a
// function defined by one is there for the next): the REPL's, and each
// server connection's EVAL. Each Eval is one read-write transaction of
// the session's current namespace. Calls are serialized. Close it when
// done.
type Session struct {
	r  *Registry
	mu sync.Mutex
	ns string
	s  jsSession
}

// Session returns a session on namespace ns (which need not exist yet:
// Eval fails with engine.ErrNoNamespace until it does). With ns "" its
// scripts run outside any namespace: plain JavaScript works and cube's
// calls fail saying so.
func (r *Registry) Session(ns string) *Session {
	return &Session{r: r, ns: ns, s: r.js.newSession(r.o.Limits)}
}

// Namespace returns the namespace the session's Evals run in.
func (s *Session) Namespace() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ns
}

// Use switches the session to namespace ns; its JavaScript state stays.
func (s *Session) Use(ns string) {
	s.mu.Lock()
	s.ns = ns
	s.mu.Unlock()
}

// Eval runs script in the session as one read-write transaction of the
// session's namespace and returns its completion value. cube.args is
// empty; see EvalArgs.
func (s *Session) Eval(ctx context.Context, script string) (js.Completion, error) {
	return s.EvalArgs(ctx, script, nil)
}

// EvalArgs is Eval with cube.args holding args for this call only: the
// script sees the session's state, as with Eval, and the session's later
// scripts see their own arguments.
func (s *Session) EvalArgs(ctx context.Context, script string, args []byte) (js.Completion, error) {
	return s.EvalWith(ctx, script, args, vm.Limits{})
}

// EvalWith is EvalArgs under lim for this call only (EVAL's TIMEOUT and
// MEMORY); lim's zero fields take the registry's defaults, as the
// session's other calls do. Bounding lim is the caller's job: the daemon
// keeps it under its own maximum.
func (s *Session) EvalWith(ctx context.Context, script string, args []byte, lim vm.Limits) (js.Completion, error) {
	lim = over(lim, s.r.o.Limits)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ns == "" {
		return s.s.EvalWith(ctx, noNamespace{}, script, args, lim)
	}
	n, err := s.r.eng.Namespace(s.ns)
	if err != nil {
		return js.Completion{}, err
	}
	var c js.Completion
	err = n.Update(ctx, func(tx *engine.Tx) error {
		h := newHost(tx)
		defer h.close()
		c, err = s.s.EvalWith(ctx, h, script, args, lim)
		return err
	})
	return c, err
}

// Close ends the session.
func (s *Session) Close() { s.s.Close() }

// Forget drops what the registry holds in memory for namespace ns (after
// the namespace was dropped). It changes nothing stored.
func (r *Registry) Forget(ns string) {
	r.mu.Lock()
	g := r.regs[ns]
	delete(r.regs, ns)
	r.mu.Unlock()
	if g != nil {
		g.retireAll()
	}
}

func (r *Registry) flusher(every time.Duration) {
	defer close(r.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-r.quit:
			return
		case <-t.C:
			if err := r.Flush(context.Background()); err != nil {
				r.log.Warn("plugins: telemetry not written", "err", err)
			}
		}
	}
}

// Flush writes the telemetry counters that changed since the last flush,
// one transaction per namespace. The flusher calls it every
// Options.TelemetryInterval and Close calls it last.
func (r *Registry) Flush(ctx context.Context) error {
	r.mu.RLock()
	regs := make([]*nsReg, 0, len(r.regs))
	for _, g := range r.regs {
		regs = append(regs, g)
	}
	r.mu.RUnlock()
	var errs []error
	for _, g := range regs {
		errs = append(errs, g.flush(ctx))
	}
	return errors.Join(errs...)
}

func (g *nsReg) flush(ctx context.Context) error {
	g.wmu.Lock()
	defer g.wmu.Unlock()
	g.mu.RLock()
	var dirty []*entry
	for _, e := range g.progs {
		e.tel.mu.Lock()
		if e.tel.dirty {
			dirty = append(dirty, e)
		}
		e.tel.mu.Unlock()
	}
	g.mu.RUnlock()
	if len(dirty) == 0 {
		return nil
	}
	err := g.ns.Update(ctx, func(tx *engine.Tx) error {
		for _, e := range dirty {
			if err := tx.SetMeta(statPrefix+e.name, e.tel.encode()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		for _, e := range dirty {
			e.tel.mu.Lock()
			e.tel.dirty = true
			e.tel.mu.Unlock()
		}
		if errors.Is(err, engine.ErrNoNamespace) {
			return nil // dropped: its telemetry went with it
		}
		return fmt.Errorf("plugins: telemetry of %q: %w", g.ns.Name(), err)
	}
	return nil
}

// Close stops the telemetry flusher, writes the last counters, and closes
// every compiled program and both sandboxes. Call it before closing the
// engine.
func (r *Registry) Close(ctx context.Context) error {
	var err error
	r.close.Do(func() {
		close(r.quit)
		<-r.done
		err = r.Flush(ctx)
		r.mu.Lock()
		r.dead = true
		regs := r.regs
		r.regs = map[string]*nsReg{}
		r.mu.Unlock()
		for _, g := range regs {
			g.retireAll()
		}
		err = errors.Join(err, r.wasm.Close(ctx), r.js.Close(ctx))
	})
	return err
}
