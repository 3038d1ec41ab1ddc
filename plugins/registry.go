package plugins

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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

// Registry keeps programs in the namespaces of one engine.DB and runs them.
// It is safe for concurrent use.
type Registry struct {
	eng  *engine.DB
	o    Options
	log  *slog.Logger
	wasm *wasm.Sandbox
	js   jsRuntime

	close sync.Once
	quit  chan struct{} // closed by Close: the flusher stops
	done  chan struct{} // closed by the flusher when it has stopped

	// mu guards the namespaces loaded so far and the closed mark. Its
	// critical sections are map lookups and swaps: loading a namespace's
	// programs (an engine read) happens before it is taken, and it is
	// never held across a compile, a run or an engine transaction.
	//
	// # Lock order
	//
	// The registry's locks, outermost first; a goroutine holding one may
	// take only those below it:
	//
	//  1. Session.mu — one session's calls, held across its whole Eval.
	//  2. nsReg.wmu — one namespace's registry writers (Prog, Unprog,
	//     refresh, the telemetry flush), held across their engine
	//     transaction (Prog compiles before it takes wmu).
	//  2a. nsReg.pmu — the queue of Progs waiting for wmu; held only
	//     across its own fields.
	//  3. Registry.mu (this one).
	//  4. nsReg.mu — one namespace's program map.
	//  5. entry.cache — one version's compiled program, held across its
	//     compile.
	//  6. compiled.mu — the run count of a compiled program.
	//  7. telemetry.mu — one program's counters; taken under nsReg.mu by
	//     the flush, alone everywhere else.
	//
	// The engine's own locks (a namespace's writer lock, taken by Update)
	// come after nsReg.wmu and Session.mu, and no registry lock is ever
	// taken inside an engine transaction: the host a guest calls reaches
	// the transaction only.
	//
	// # Guest calls
	//
	// Only Session.mu is held while a guest's run or eval executes. A
	// compile, which may run a WASM start function under the program's
	// timeout, holds no lock in Prog, and entry.cache at the first run of
	// a version. Locks 3, 4, 6 and 7 are never held across guest code, a
	// compile or an engine transaction; 6 and 7 never across anything but
	// their own fields. Retiring a replaced namespace's programs (in reg)
	// closes them under 3, 4 and 5: a Close runs no guest code.
	mu struct {
		sync.RWMutex
		regs map[string]*nsReg
		dead bool // Close has run: reg refuses with ErrClosed
	}
}

// nsReg is the registry of one namespace: the in-memory mirror of its
// "prog/" metadata, loaded on first use.
type nsReg struct {
	ns *engine.Namespace
	// wmu serializes the writers of this namespace's programs and
	// telemetry (Prog, Unprog, refresh, flush), each of which commits an
	// engine transaction and then updates mu.progs to match. A run that
	// finds its version retired or stale waits for wmu once (an empty
	// critical section) to let such a writer finish.
	wmu sync.Mutex
	// pmu guards pending, the Progs compiled and waiting for wmu: the
	// first to get it commits them all (commitProgs).
	pmu     sync.Mutex
	pending []*progReq
	// mu guards progs, the mirror: name -> current version.
	mu struct {
		sync.RWMutex
		progs map[string]*entry
	}
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
		quit: make(chan struct{}),
		done: make(chan struct{}),
	}
	r.mu.regs = map[string]*nsReg{}
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
	g, dead := r.mu.regs[name], r.mu.dead
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
	if r.mu.dead {
		return nil, ErrClosed
	}
	if g = r.mu.regs[name]; g != nil && g.ns == ns {
		return g, nil // loaded meanwhile by another caller
	}
	if g != nil {
		g.retireAll()
	}
	r.mu.regs[name] = ng
	return ng, nil
}

// load reads a namespace's programs and telemetry. A record that does not
// decode is logged and left out (Run of it says ErrNoProgram; Prog
// replaces it).
func (r *Registry) load(ctx context.Context, ns *engine.Namespace) (*nsReg, error) {
	g := &nsReg{ns: ns}
	g.mu.progs = map[string]*entry{}
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
			g.mu.progs[name] = e
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
	e := g.mu.progs[name]
	g.mu.RUnlock()
	return e
}

func (g *nsReg) retireAll() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, e := range g.mu.progs {
		e.retire()
	}
}

// Forget drops what the registry holds in memory for namespace ns (after
// the namespace was dropped). It changes nothing stored.
func (r *Registry) Forget(ns string) {
	r.mu.Lock()
	g := r.mu.regs[ns]
	delete(r.mu.regs, ns)
	r.mu.Unlock()
	if g != nil {
		g.retireAll()
	}
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
		r.mu.dead = true
		regs := r.mu.regs
		r.mu.regs = map[string]*nsReg{}
		r.mu.Unlock()
		for _, g := range regs {
			g.retireAll()
		}
		err = errors.Join(err, r.wasm.Close(ctx), r.js.Close(ctx))
	})
	return err
}
