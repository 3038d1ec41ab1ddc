package repl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/engine/curve"
	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/js"
)

// Embedded evaluates inputs in-process on a *cube.DB: one JavaScript
// session per namespace, each input one read-write transaction.
type Embedded struct {
	db  *cube.DB
	sb  *js.Sandbox
	lim vm.Limits

	mu       sync.Mutex
	sessions map[string]*js.Session
}

var _ Evaluator = (*Embedded)(nil)

// EmbeddedOptions configure NewEmbedded.
type EmbeddedOptions struct {
	// Timeout bounds one input; zero means no limit (Ctrl-C stops it).
	Timeout time.Duration
}

// NewEmbedded returns an evaluator over db. Closing it does not close db.
func NewEmbedded(db *cube.DB, o EmbeddedOptions) *Embedded {
	lim := vm.Limits{Timeout: o.Timeout}
	if lim.Timeout <= 0 {
		lim.Timeout = -1
	}
	return &Embedded{db: db, sb: js.New(js.Options{}), lim: lim, sessions: map[string]*js.Session{}}
}

func (e *Embedded) session(ns string) *js.Session {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.sessions[ns]
	if s == nil {
		s = e.sb.NewSession(e.lim)
		e.sessions[ns] = s
	}
	return s
}

// Eval implements Evaluator.
func (e *Embedded) Eval(ctx context.Context, ns, script string) (Result, error) {
	if ns == "" {
		return Result{}, ErrNoNamespace
	}
	n, err := e.db.Namespace(ns)
	if err != nil {
		return Result{}, fmt.Errorf("namespace %q: %w", ns, err)
	}
	sess := e.session(ns)
	var c js.Completion
	err = n.Update(ctx, func(tx *engine.Tx) error {
		var err error
		c, err = sess.EvalCompletion(ctx, txHost{tx}, script)
		return err
	})
	if err != nil {
		return Result{}, scriptError(err)
	}
	return Result{Output: c.Output, Type: c.Type, JSON: c.JSON, Logs: c.Logs, Writes: c.Writes}, nil
}

// scriptError turns a sandbox failure into a ScriptError; other errors
// (the store's) pass through.
func scriptError(err error) error {
	var ve *vm.Error
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
	var k curve.Kind
	switch curveName {
	case "", "hilbert":
		k = curve.Hilbert
	case "morton":
		k = curve.Morton
	default:
		return fmt.Errorf("%w: unknown curve %q (hilbert or morton)", ErrUsage, curveName)
	}
	_, err := e.db.CreateNamespace(ctx, name, engine.NamespaceOptions{Dims: dims, Curve: k})
	return err
}

// errNoRegistry says why programs are not available on the embedded store
// yet: package cube has no program registry in this build.
var errNoRegistry = fmt.Errorf("%w: programs need package cube's program registry, which this build does not have yet", ErrUnsupported)

// Programs implements Evaluator.
func (e *Embedded) Programs(context.Context, string) ([]ProgramInfo, error) {
	return nil, errNoRegistry
}

// Prog implements Evaluator.
func (e *Embedded) Prog(context.Context, string, string, string, []byte) (string, error) {
	return "", errNoRegistry
}

// Run implements Evaluator.
func (e *Embedded) Run(context.Context, string, string, []byte) (Result, error) {
	return Result{}, errNoRegistry
}

// Stats implements Evaluator.
func (e *Embedded) Stats(_ context.Context, ns string) ([]byte, error) {
	st := e.db.Engine().Stats()
	if ns == "" {
		return json.Marshal(st)
	}
	for _, in := range st.Namespaces {
		if in.Name == ns {
			return json.Marshal(in)
		}
	}
	return nil, fmt.Errorf("namespace %q: %w", ns, engine.ErrNoNamespace)
}

// Close implements Evaluator: it ends the sessions, not the DB.
func (e *Embedded) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k, s := range e.sessions {
		s.Close()
		delete(e.sessions, k)
	}
	return e.sb.Close(context.Background())
}
