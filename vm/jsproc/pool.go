package jsproc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sort"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/js"
)

// Defaults for the zero fields of Options.
const (
	DefaultMaxSessions = 64
	DefaultKillGrace   = 50 * time.Millisecond
	DefaultTotalMemory = 4 << 30
	// CompileTimeout bounds checking a program in a worker.
	CompileTimeout = 10 * time.Second
	// retireGrowth is how much a worker's data segment may grow past its
	// idle size before it is replaced rather than reused.
	retireGrowth = 64 << 20
)

// ErrSessionEvicted is returned by the first Eval of a session whose
// worker was given to another session: when Options.MaxSessions sessions
// hold workers, a new one takes the worker of the longest idle.
var ErrSessionEvicted = errors.New("jsproc: this session's variables were dropped")

// Options configure a Pool.
type Options struct {
	// Command is the argv of a worker process: a program whose main calls
	// Serve on its standard input and output. Required.
	Command []string
	// Env is added to the daemon's environment for workers.
	Env []string
	// MaxWorkers bounds the runs and evals running at once (sessions have
	// their own workers). Zero means max(2, GOMAXPROCS).
	MaxWorkers int
	// MaxSessions bounds the sessions holding a worker (a process each).
	// A session past it takes the worker of the longest idle session,
	// whose state is then lost (its next Eval says so). Zero means
	// DefaultMaxSessions.
	MaxSessions int
	// KillGrace is how long past its time limit (or its caller's
	// cancellation) a run may take to stop before its worker is killed.
	// Zero means DefaultKillGrace.
	KillGrace time.Duration
	// TotalMemory bounds the sum of the memory limits of the runs, evals
	// and session evals running at once: a run waits until its limit fits.
	// It is the daemon-wide backstop. Zero means DefaultTotalMemory.
	TotalMemory int64
	// Logger receives a line per killed or crashed worker; nil discards.
	Logger *slog.Logger
}

// Pool runs JavaScript in worker processes. It has the methods of
// *js.Sandbox that cube uses (Compile, EvalCompletion, NewSession) and is
// safe for concurrent use.
type Pool struct {
	o      Options
	log    *slog.Logger
	slots  chan struct{} // one per worker that may run at once
	smu    sync.Mutex
	held   map[*Session]time.Time // sessions holding a worker, by last use
	memory *semaphore.Weighted

	mu     sync.Mutex
	idle   []*worker
	all    map[*worker]struct{}
	closed bool
	stats  Stats
}

// Stats count what the pool's workers did.
type Stats struct {
	Workers int   // worker processes alive
	Started int64 // worker processes started
	Killed  int64 // workers stopped for a time limit or a cancellation
	OOM     int64 // workers that ran out of memory (a run over its limit)
	Crashed int64 // workers that died for another reason
	// MaxOverrun is the longest any request took past its time limit,
	// from being handed to its worker until its answer (or the worker's
	// death) was known.
	MaxOverrun time.Duration
}

// Stats reports the pool's counters.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.Workers = len(p.all)
	return s
}

func (p *Pool) count(f func(*Stats)) {
	p.mu.Lock()
	f(&p.stats)
	p.mu.Unlock()
}

var _ vm.Sandbox = (*Pool)(nil)

// New returns a pool; workers start when first needed.
func New(o Options) (*Pool, error) {
	if len(o.Command) == 0 {
		return nil, errors.New("jsproc: Options.Command is empty: give the command that starts a worker")
	}
	if o.MaxWorkers <= 0 {
		o.MaxWorkers = max(2, runtime.GOMAXPROCS(0))
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.KillGrace <= 0 {
		o.KillGrace = DefaultKillGrace
	}
	if o.TotalMemory <= 0 {
		o.TotalMemory = DefaultTotalMemory
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Pool{
		o:      o,
		log:    o.Logger,
		slots:  make(chan struct{}, o.MaxWorkers),
		held:   map[*Session]time.Time{},
		memory: semaphore.NewWeighted(o.TotalMemory),
		all:    map[*worker]struct{}{},
	}, nil
}

// Kind reports vm.JS.
func (p *Pool) Kind() vm.Kind { return vm.JS }

// Close stops every worker. Runs in flight fail.
func (p *Pool) Close(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	ws := make([]*worker, 0, len(p.all))
	for w := range p.all {
		ws = append(ws, w)
	}
	p.idle = nil
	p.mu.Unlock()
	for _, w := range ws {
		w.stop()
	}
	return nil
}

// get takes an idle worker, or starts one, holding a run slot. Of the
// idle workers it takes one that holds program key compiled, if any: a
// run on a worker that lacks its program sends the code and compiles it
// there again (goja parses it twice), more than the rest of a short run
// costs, and under cube stress's PROG then RUN every other run did.
func (p *Pool) get(ctx context.Context, key string) (*worker, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, &vm.Error{Kind: vm.KindAborted, Msg: "waiting for a JavaScript worker: " + ctx.Err().Error(), Err: ctx.Err()}
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.slots
		return nil, js.ErrClosed
	}
	if n := len(p.idle); n > 0 {
		// The most recently used by default; an idle worker's program
		// mirror is not written while it is idle (cached runs before put).
		i := n - 1
		if key != "" {
			for j := n - 1; j >= 0; j-- {
				if p.idle[j].has(key) {
					i = j
					break
				}
			}
		}
		w := p.idle[i]
		p.idle = append(p.idle[:i], p.idle[i+1:]...)
		p.mu.Unlock()
		return w, nil
	}
	p.mu.Unlock()
	w, err := p.spawn()
	if err != nil {
		<-p.slots
		return nil, err
	}
	return w, nil
}

// put returns a worker to the idle list, or stops it when it is spent.
// The worker is back in the list (or gone) before its run slot is freed:
// freed first, the next get could find the list empty and start a worker
// past MaxWorkers (under cube stress a third of two, every time).
func (p *Pool) put(w *worker, keep bool) {
	p.mu.Lock()
	if keep && !p.closed && !w.isDead() {
		p.idle = append(p.idle, w)
		p.mu.Unlock()
		<-p.slots
		return
	}
	delete(p.all, w)
	p.mu.Unlock()
	<-p.slots
	w.stop()
	// Start its replacement now, so the next run does not wait for a
	// process to start (tens of milliseconds).
	go p.spare()
}

// spare starts an idle worker unless enough are idle already.
func (p *Pool) spare() {
	p.mu.Lock()
	enough := p.closed || len(p.idle) >= p.o.MaxWorkers
	p.mu.Unlock()
	if enough {
		return
	}
	w, err := p.spawn()
	if err != nil {
		p.log.Warn("jsproc: start a spare worker", "err", err)
		return
	}
	p.mu.Lock()
	if p.closed || len(p.idle) >= p.o.MaxWorkers {
		delete(p.all, w)
		p.mu.Unlock()
		w.stop()
		return
	}
	p.idle = append(p.idle, w)
	p.mu.Unlock()
}

func (p *Pool) spawn() (*worker, error) {
	w, err := startWorker(p.o.Command, p.o.Env)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		w.stop()
		return nil, js.ErrClosed
	}
	p.all[w] = struct{}{}
	p.stats.Started++
	return w, nil
}

func (p *Pool) forget(w *worker) {
	p.mu.Lock()
	delete(p.all, w)
	p.mu.Unlock()
	w.stop()
}

// reserve takes lim's memory from the daemon-wide budget.
func (p *Pool) reserve(ctx context.Context, lim vm.Limits) (func(), error) {
	n := min(max(lim.MemoryBytes, 0), p.o.TotalMemory)
	if lim.MemoryBytes < 0 {
		n = p.o.TotalMemory // no limit: the run takes the whole budget
	}
	if err := p.memory.Acquire(ctx, n); err != nil {
		return nil, &vm.Error{Kind: vm.KindAborted, Msg: "waiting for memory for the run: " + err.Error(), Err: err}
	}
	return func() { p.memory.Release(n) }, nil
}

// exchange runs one request on w, serving its host calls, and returns the
// worker's answer. A worker that had to be killed, or died, is marked
// dead and the error says why.
func (p *Pool) exchange(ctx context.Context, w *worker, req *request, host vm.Host, lim vm.Limits) (*done, error) {
	free, err := p.reserve(ctx, lim)
	if err != nil {
		return nil, err
	}
	defer free()
	g := w.begin()
	defer g.end()
	start := time.Now()
	defer func() {
		if over := time.Since(start) - lim.Timeout; lim.Timeout > 0 && over > 0 {
			p.count(func(s *Stats) { s.MaxOverrun = max(s.MaxOverrun, over) })
		}
	}()
	if lim.Timeout > 0 {
		t := time.AfterFunc(lim.Timeout+p.o.KillGrace, func() { g.kill(vm.KindTimeout) })
		defer t.Stop()
	}
	stopWatch := context.AfterFunc(ctx, func() {
		g.interrupt()
		time.AfterFunc(p.o.KillGrace, func() { g.kill(vm.KindAborted) })
	})
	defer stopWatch()
	if host != nil {
		req.Dims, req.Geo = host.Dims(), host.Geo()
	}
	if err := w.send(req); err != nil {
		return nil, p.died(w, g, lim)
	}
	cur := cursors{}
	defer cur.closeAll()
	for {
		var m message
		if err := w.dec.Decode(&m); err != nil {
			return nil, p.died(w, g, lim)
		}
		switch {
		case m.Done != nil:
			return m.Done, nil
		case m.Call != nil:
			r := serve(ctx, host, m.Call, cur)
			if err := w.send(&request{Op: opReply, Reply: r}); err != nil {
				return nil, p.died(w, g, lim)
			}
		default:
			w.kill()
			return nil, p.died(w, g, lim)
		}
	}
}

// died explains why w stopped answering.
func (p *Pool) died(w *worker, g *guard, lim vm.Limits) error {
	why := g.killedBy()
	if why == 0 {
		// It died by itself: its last words say why.
		w.wait(time.Second)
	}
	w.kill()
	tail := w.stderr.String()
	var e *vm.Error
	switch {
	case why == vm.KindTimeout:
		e = &vm.Error{Kind: vm.KindTimeout, Msg: fmt.Sprintf("the run passed its time limit of %v and did not stop within %v of it (a built-in that cannot be interrupted, or a machine too busy to give its worker time); its worker process was stopped", lim.Timeout, p.o.KillGrace)}
	case why == vm.KindAborted:
		e = &vm.Error{Kind: vm.KindAborted, Msg: "the run was cancelled; its worker process was stopped", Err: context.Canceled}
	case outOfMemory(tail), lim.MemoryBytes > 0 && runtimeFault(tail):
		e = &vm.Error{Kind: vm.KindMemoryLimit, Msg: fmt.Sprintf("the run needed more than its memory limit of %d MiB; its worker process was stopped", lim.MemoryBytes>>20)}
	default:
		e = &vm.Error{Kind: vm.KindTrap, Msg: "the JavaScript worker process ended unexpectedly: " + lastLine(tail)}
	}
	p.count(func(s *Stats) {
		switch {
		case why != 0:
			s.Killed++
		case e.Kind == vm.KindMemoryLimit:
			s.OOM++
		default:
			s.Crashed++
		}
	})
	p.log.Warn("jsproc: worker stopped", "reason", e.Kind.String(), "stderr", lastLine(tail))
	p.log.Debug("jsproc: the stopped worker's standard error", "stderr", tail)
	return e
}

// result turns a worker's answer into the run's result and error.
func result(d *done) (js.Completion, error) {
	c := js.Completion{Result: vm.Result{Output: d.Output, Logs: d.Logs, HostCalls: d.HostCalls, Writes: d.Writes}, Type: d.Type, JSON: d.JSON}
	if d.Err != nil {
		return c, d.Err.err()
	}
	return c, nil
}

// spent reports whether a worker should not be reused after d.
func spent(d *done) bool { return d.Grown > retireGrowth }

// Compile checks code in a worker (a parser bomb stops the worker, not the
// daemon) and returns a program whose runs each take a pooled worker.
func (p *Pool) Compile(ctx context.Context, code []byte, lim vm.Limits) (vm.Program, error) {
	sum := sha256.Sum256(code)
	prg := &program{p: p, key: hex.EncodeToString(sum[:]), code: append([]byte(nil), code...), lim: lim.WithDefaults()}
	w, err := p.get(ctx, "")
	if err != nil {
		return nil, err
	}
	// Compiling runs no guest code, only goja's parser and the building of
	// a frozen runtime, which take longer than a short run's limit on a
	// loaded machine; a parser bomb is still bounded, by this.
	clim := prg.lim
	clim.Timeout = max(clim.Timeout, CompileTimeout)
	d, err := p.exchange(ctx, w, &request{Op: opCompile, Prog: prg.key, Code: prg.code, Limits: wireLimits(clim)}, nil, clim)
	if err != nil {
		p.put(w, false)
		return nil, err
	}
	w.cached(prg.key, d)
	p.put(w, !spent(d))
	if _, err := result(d); err != nil {
		return nil, err
	}
	return prg, nil
}

// program is a compiled program: its code, sent to each worker once.
type program struct {
	p    *Pool
	key  string
	code []byte
	lim  vm.Limits
}

func (g *program) Run(ctx context.Context, host vm.Host, args []byte) (vm.Result, error) {
	w, err := g.p.get(ctx, g.key)
	if err != nil {
		return vm.Result{}, err
	}
	req := &request{Op: opRun, Prog: g.key, Args: args, Limits: wireLimits(g.lim)}
	if !w.has(g.key) {
		req.Code = g.code
	}
	d, err := g.p.exchange(ctx, w, req, host, g.lim)
	if err == nil && d.Unknown {
		// The worker dropped the program although the mirror says it
		// holds it: nothing ran, so send it again with the code.
		w.forgot(g.key)
		req.Code = g.code
		d, err = g.p.exchange(ctx, w, req, host, g.lim)
	}
	if err != nil {
		g.p.put(w, false)
		return vm.Result{}, err
	}
	w.cached(g.key, d)
	g.p.put(w, !spent(d))
	c, err := result(d)
	return c.Result, err
}

func (g *program) Close(ctx context.Context) error { return nil }

// EvalCompletion runs an ad-hoc script in a fresh runtime of a pooled
// worker, as js.Sandbox.EvalCompletion does in process.
func (p *Pool) EvalCompletion(ctx context.Context, host vm.Host, script string, args []byte, lim vm.Limits) (js.Completion, error) {
	lim = lim.WithDefaults()
	w, err := p.get(ctx, "")
	if err != nil {
		return js.Completion{}, err
	}
	d, err := p.exchange(ctx, w, &request{Op: opEval, Script: script, Args: args, Limits: wireLimits(lim)}, host, lim)
	if err != nil {
		p.put(w, false)
		return js.Completion{}, err
	}
	p.put(w, !spent(d))
	return result(d)
}

// Session is a JavaScript scope that keeps its state between evals, in a
// worker of its own.
type Session struct {
	p   *Pool
	lim vm.Limits

	mu      sync.Mutex
	w       *worker
	closed  bool
	evicted bool // its worker was taken for another session
}

// NewSession returns a session whose every eval runs under lim. Its worker
// starts at the first eval.
func (p *Pool) NewSession(lim vm.Limits) *Session {
	return &Session{p: p, lim: lim.WithDefaults()}
}

// EvalArgs evaluates script in the session with cube.args holding args
// for this call.
func (s *Session) EvalArgs(ctx context.Context, host vm.Host, script string, args []byte) (js.Completion, error) {
	return s.EvalWith(ctx, host, script, args, s.lim)
}

// EvalWith is EvalArgs under lim for this call instead of the session's
// limits; zero fields take vm's defaults. The worker applies each
// request's limits afresh, so one call's larger limit does not outlive it.
func (s *Session) EvalWith(ctx context.Context, host vm.Host, script string, args []byte, lim vm.Limits) (js.Completion, error) {
	lim = lim.WithDefaults()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return js.Completion{}, js.ErrClosed
	}
	if s.evicted {
		s.evicted = false
		return js.Completion{}, fmt.Errorf("%w: it was the longest idle of the %d sessions the daemon keeps, and another needed its place; define them again (this script did not run)", ErrSessionEvicted, s.p.o.MaxSessions)
	}
	if s.w == nil {
		if err := s.p.holdSession(ctx, s); err != nil {
			return js.Completion{}, err
		}
		w, err := s.p.spawn()
		if err != nil {
			s.p.releaseSession(s)
			return js.Completion{}, err
		}
		s.w = w
	}
	defer s.p.touchSession(s)
	d, err := s.p.exchange(ctx, s.w, &request{Op: opSession, Script: script, Args: args, Limits: wireLimits(lim)}, host, lim)
	if err != nil {
		s.drop()
		var ve *vm.Error
		if errors.As(err, &ve) {
			ve.Msg += "; the session's variables were lost with it"
		}
		return js.Completion{}, err
	}
	return result(d)
}

// drop stops the session's worker. s.mu held.
func (s *Session) drop() {
	if s.w != nil {
		s.p.forget(s.w)
		s.w = nil
		s.p.releaseSession(s)
	}
}

// Close ends the session and stops its worker.
func (s *Session) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.drop()
}

// holdSession gives s a place among the sessions that hold a worker,
// taking the place of the longest idle one when all are taken. It waits
// while every holder is evaluating. s.mu held.
func (p *Pool) holdSession(ctx context.Context, s *Session) error {
	for {
		p.smu.Lock()
		if len(p.held) < p.o.MaxSessions {
			p.held[s] = time.Now()
			p.smu.Unlock()
			return nil
		}
		if v := p.idlest(); v != nil {
			// v.mu is held (TryLock in idlest): v is not evaluating.
			delete(p.held, v)
			p.held[s] = time.Now()
			p.smu.Unlock()
			p.forget(v.w)
			v.w, v.evicted = nil, true
			v.mu.Unlock()
			return nil
		}
		p.smu.Unlock()
		select {
		case <-ctx.Done():
			return &vm.Error{Kind: vm.KindAborted, Msg: "waiting for a JavaScript session's worker: " + ctx.Err().Error(), Err: ctx.Err()}
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// idlest returns the longest idle holder that is not evaluating, with its
// mu locked, or nil. p.smu held.
func (p *Pool) idlest() *Session {
	var order []*Session
	for h := range p.held {
		order = append(order, h)
	}
	sort.Slice(order, func(i, j int) bool { return p.held[order[i]].Before(p.held[order[j]]) })
	for _, h := range order {
		if h.mu.TryLock() {
			if h.w != nil && !h.closed {
				return h
			}
			h.mu.Unlock()
		}
	}
	return nil
}

func (p *Pool) touchSession(s *Session) {
	p.smu.Lock()
	if _, ok := p.held[s]; ok {
		p.held[s] = time.Now()
	}
	p.smu.Unlock()
}

func (p *Pool) releaseSession(s *Session) {
	p.smu.Lock()
	delete(p.held, s)
	p.smu.Unlock()
}
