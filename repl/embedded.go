package repl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/cubelinux/cube"
)

// Embedded evaluates inputs in-process on a *cube.DB, in one cube.Session
// that moves between namespaces (its JavaScript state stays, as a
// daemon connection's does). Each input is one read-write transaction
// under the DB's Options.Limits.
type Embedded struct {
	db *cube.DB

	mu    sync.Mutex
	sess  *cube.Session
	limit EvalLimits // .timeout and .memory; zero takes the DB's Options.Limits
}

var (
	_ Evaluator = (*Embedded)(nil)
	_ Limiter   = (*Embedded)(nil)
)

// NewEmbedded returns an evaluator over db. Closing it does not close db.
func NewEmbedded(db *cube.DB) *Embedded { return &Embedded{db: db} }

// Eval implements Evaluator. With ns "" the script runs outside any
// namespace: plain JavaScript works and cube's calls fail.
func (e *Embedded) Eval(ctx context.Context, ns, script string) (Result, error) {
	e.mu.Lock()
	if e.sess == nil {
		e.sess = e.db.Session(ns)
	}
	s, lim := e.sess, e.limit
	e.mu.Unlock()
	s.Use(ns)
	c, err := s.EvalWith(ctx, script, nil, cube.Limits{Timeout: lim.Timeout, MemoryBytes: int64(lim.MemoryMiB) << 20})
	if err != nil {
		return Result{}, withLimitHint(scriptError(err))
	}
	return Result{Output: c.Output, Type: c.Type, JSON: c.JSON, Logs: c.Logs, Writes: c.Writes}, nil
}

// EvalLimits implements Limiter.
func (e *Embedded) EvalLimits() EvalLimits {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.limit
}

// SetEvalLimits implements Limiter: later Evals run under lim (its zero
// fields under the DB's Options.Limits). An embedded store has no daemon
// maximum: any positive value is taken.
func (e *Embedded) SetEvalLimits(_ context.Context, lim EvalLimits) error {
	if lim.Timeout < 0 || lim.MemoryMiB < 0 {
		return fmt.Errorf("%w: limits must be positive (or off)", ErrUsage)
	}
	e.mu.Lock()
	e.limit = lim
	e.mu.Unlock()
	return nil
}

// scriptError turns a sandbox failure into a ScriptError; other errors
// (the store's) pass through.
func scriptError(err error) error {
	var ve *cube.Error
	if !errors.As(err, &ve) {
		return err
	}
	return &ScriptError{Kind: ve.Kind.String(), Msg: ve.Msg, Line: ve.Line, Column: ve.Column}
}

// Namespaces implements Evaluator.
func (e *Embedded) Namespaces(context.Context) ([]NamespaceInfo, error) {
	infos := e.db.Namespaces()
	out := make([]NamespaceInfo, len(infos))
	for i, in := range infos {
		out[i] = NamespaceInfo{Name: in.Name, Dims: in.Dims, Curve: in.Curve, Values: in.Values, Edges: in.Edges}
	}
	return out, nil
}

// CreateNamespace implements Evaluator.
func (e *Embedded) CreateNamespace(ctx context.Context, name string, dims int, curveName string) error {
	var k cube.Curve
	switch curveName {
	case "", "hilbert":
		k = cube.Hilbert
	case "morton":
		k = cube.Morton
	default:
		return fmt.Errorf("%w: unknown curve %q (hilbert or morton)", ErrUsage, curveName)
	}
	_, err := e.db.CreateNamespace(ctx, name, cube.NamespaceOptions{Dims: dims, Curve: k})
	return err
}

// Programs implements Evaluator.
func (e *Embedded) Programs(_ context.Context, ns string) ([]ProgramInfo, error) {
	ps, err := e.db.Progs(ns)
	if err != nil {
		return nil, err
	}
	out := make([]ProgramInfo, len(ps))
	for i, p := range ps {
		out[i] = ProgramInfo{Name: p.Name, Kind: string(p.Kind), Version: p.Version, ReadOnly: p.ReadOnly, Runs: p.Telemetry.Runs}
	}
	return out, nil
}

// Prog implements Evaluator.
func (e *Embedded) Prog(ctx context.Context, ns, name, kind string, code []byte) (string, error) {
	info, err := e.db.Prog(ctx, ns, name, cube.Kind(kind), code, cube.ProgOptions{})
	if err != nil {
		return "", scriptError(err)
	}
	return info.Version, nil
}

// Run implements Evaluator.
func (e *Embedded) Run(ctx context.Context, ns, name string, arg []byte) (Result, error) {
	res, err := e.db.Run(ctx, ns, name, arg)
	if err != nil {
		return Result{}, scriptError(err)
	}
	return Result{Output: res.Output, Logs: res.Logs, Writes: res.Writes}, nil
}

// Stats implements Evaluator: the namespace and its programs, or with ns
// "" the whole store.
func (e *Embedded) Stats(_ context.Context, ns string) ([]byte, error) {
	st := e.db.Stats()
	if ns == "" {
		return json.Marshal(st)
	}
	for _, in := range st.Store.Namespaces {
		if in.Name != ns {
			continue
		}
		var progs []cube.ProgramInfo
		for _, p := range st.Programs {
			if p.Namespace == ns {
				progs = append(progs, p)
			}
		}
		return json.Marshal(struct {
			Namespace cube.NamespaceInfo
			Programs  []cube.ProgramInfo
		}{in, progs})
	}
	return nil, fmt.Errorf("namespace %q: %w", ns, cube.ErrNoNamespace)
}

// Close implements Evaluator: it ends the session, not the DB.
func (e *Embedded) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.sess != nil {
		e.sess.Close()
		e.sess = nil
	}
	return nil
}
