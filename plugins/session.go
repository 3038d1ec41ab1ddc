package plugins

import (
	"context"
	"sync"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/js"
)

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
	r *Registry
	s jsSession
	// mu guards ns and serializes the session's calls: it is held across
	// the whole Eval (the engine transaction and the guest call in it),
	// which is how calls are serialized. It is taken before any other
	// lock and no registry lock is taken while it is held; the guest's
	// host calls reach only the engine transaction.
	mu struct {
		sync.Mutex
		ns string
	}
}

// Session returns a session on namespace ns (which need not exist yet:
// Eval fails with engine.ErrNoNamespace until it does). With ns "" its
// scripts run outside any namespace: plain JavaScript works and cube's
// calls fail saying so.
func (r *Registry) Session(ns string) *Session {
	s := &Session{r: r, s: r.js.newSession(r.o.Limits)}
	s.mu.ns = ns
	return s
}

// Namespace returns the namespace the session's Evals run in.
func (s *Session) Namespace() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.ns
}

// Use switches the session to namespace ns; its JavaScript state stays.
func (s *Session) Use(ns string) {
	s.mu.Lock()
	s.mu.ns = ns
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
	if s.mu.ns == "" {
		return s.s.EvalWith(ctx, noNamespace{}, script, args, lim)
	}
	n, err := s.r.eng.Namespace(s.mu.ns)
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
