package repl

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Remote evaluates inputs on a cube daemon over RESP: EVAL ns script, and
// NS.LIST, NS.INFO, NS.CREATE, PROGS, PROG, RUN and STATS for the
// dot-commands.
//
// All commands go over one connection, because the daemon keeps a
// session scope per connection: that is what makes a function defined by
// one input callable from the next. Stopping an input (cancelling its
// context) closes that connection, the only way RESP has to interrupt a
// command; the daemon then abandons the script and its writes, and the
// next input starts a new session, without the old JavaScript state.
type Remote struct {
	client *redis.Client

	mu     sync.Mutex
	conn   net.Conn // the current connection, closed to interrupt
	dials  int      // connections made so far
	seen   int      // dials when the last command started
	closed bool

	untyped bool // the daemon has no EVAL.TYPED

	// limit holds the TIMEOUT and MEMORY every EVAL sends (.timeout,
	// .memory); zero sends none, and the daemon's defaults apply.
	limit EvalLimits
}

var (
	_ Evaluator = (*Remote)(nil)
	_ Limiter   = (*Remote)(nil)
)

// DialOptions configure Dial.
type DialOptions struct {
	// Auth is the token for AUTH (needed on TCP).
	Auth string
	// DialTimeout bounds connecting; zero means 5 s.
	DialTimeout time.Duration
}

// ErrSessionReset is returned (wrapped) by Remote when the connection to the
// daemon was lost or closed (Ctrl-C closes it to stop a script): the
// daemon's session, with the JavaScript state of earlier inputs, is gone.
var ErrSessionReset = errors.New("repl: the connection to the daemon was reset; the session's JavaScript state starts over")

// Dial connects to a daemon at addr: a Unix socket path, or
// "tcp://HOST:PORT".
func Dial(ctx context.Context, addr string, o DialOptions) (*Remote, error) {
	network := "unix"
	if a, ok := strings.CutPrefix(addr, "tcp://"); ok {
		network, addr = "tcp", a
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 5 * time.Second
	}
	r := &Remote{}
	d := net.Dialer{Timeout: o.DialTimeout}
	// Connect once here, so that a daemon that is not there is one clear
	// error (go-redis would retry and log); the pool takes this connection
	// as its first.
	first, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, fmt.Errorf("repl: cannot reach the daemon at %s: %w", addr, err)
	}
	r.client = redis.NewClient(&redis.Options{
		Network:  network,
		Addr:     addr,
		Password: o.Auth,
		Protocol: 2,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			r.mu.Lock()
			c := first
			first = nil
			r.mu.Unlock()
			if c == nil {
				var err error
				if c, err = d.DialContext(ctx, network, addr); err != nil {
					return nil, err
				}
			}
			r.mu.Lock()
			r.conn = c
			r.dials++
			r.mu.Unlock()
			return c, nil
		},
		// One connection carries the session; never retry a script.
		PoolSize:                 1,
		DialerRetries:            1,
		MaxRetries:               -1,
		ReadTimeout:              -1,
		WriteTimeout:             -1,
		ConnMaxIdleTime:          -1,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	if err := r.client.Ping(ctx).Err(); err != nil {
		r.client.Close()
		return nil, fmt.Errorf("repl: cannot reach the daemon at %s: %w", addr, err)
	}
	r.seen = r.dials
	return r, nil
}

// do sends one command; cancelling ctx closes the connection to stop it.
func (r *Remote) do(ctx context.Context, args ...any) (any, error) {
	stop := context.AfterFunc(ctx, func() {
		r.mu.Lock()
		if r.conn != nil {
			r.conn.Close()
		}
		r.mu.Unlock()
	})
	v, err := r.client.Do(ctx, args...).Result()
	stop()
	r.mu.Lock()
	reset := r.dials > r.seen
	r.seen = r.dials
	r.mu.Unlock()
	if err != nil && err != redis.Nil {
		var re redis.Error
		if errors.As(err, &re) {
			return nil, remoteError(err)
		}
		return nil, fmt.Errorf("%w: %v", ErrSessionReset, err)
	}
	if reset {
		// A new connection carried this command: earlier state is gone.
		return v, fmt.Errorf("%w (reconnected)", ErrSessionReset)
	}
	if err == redis.Nil {
		return nil, nil
	}
	return v, nil
}

// Eval implements Evaluator with EVAL ns script, and TIMEOUT ms and
// MEMORY mib when SetEvalLimits set them; ns "" runs it outside any
// namespace (a daemon older than that refuses it).
func (r *Remote) Eval(ctx context.Context, ns, script string) (Result, error) {
	r.mu.Lock()
	lim := r.limit
	r.mu.Unlock()
	res, err := r.eval(ctx, ns, script, lim)
	return res, withLimitHint(err)
}

// evalArgs are the options of an EVAL under lim.
func (lim EvalLimits) evalArgs() []any {
	var a []any
	if lim.Timeout > 0 {
		a = append(a, "TIMEOUT", lim.Timeout.Milliseconds())
	}
	if lim.MemoryMiB > 0 {
		a = append(a, "MEMORY", lim.MemoryMiB)
	}
	return a
}

func (r *Remote) eval(ctx context.Context, ns, script string, lim EvalLimits) (Result, error) {
	opts := lim.evalArgs()
	// EVAL.TYPED says what type the value was and what the script logged;
	// a daemon without it gets plain EVAL.
	if !r.untyped {
		v, err := r.do(ctx, append([]any{"EVAL.TYPED", ns, script}, opts...)...)
		if res, ok := typedResult(v); ok {
			return res, err
		}
		switch {
		case err == nil:
			return Result{}, fmt.Errorf("repl: unexpected EVAL.TYPED reply %v", v)
		case !strings.Contains(strings.ToLower(err.Error()), "unknown command"):
			return Result{}, err
		}
		r.untyped = true // an older daemon: the script did not run; plain EVAL
	}
	v, err := r.do(ctx, append([]any{"EVAL", ns, script}, opts...)...)
	if err != nil {
		if v == nil {
			return Result{}, err
		}
		// It ran, on a new connection: the result and the notice.
		return replyResult(v), err
	}
	return replyResult(v), nil
}

// EvalLimits implements Limiter.
func (r *Remote) EvalLimits() EvalLimits {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.limit
}

// SetEvalLimits implements Limiter: later EVALs send lim's TIMEOUT and
// MEMORY. The daemon checks them against its maximum (cube serve
// --max-eval-timeout, --max-eval-memory) at once, with an empty EVAL
// outside any namespace, so a value it would refuse is refused here and
// the limits stay as they were.
func (r *Remote) SetEvalLimits(ctx context.Context, lim EvalLimits) error {
	if lim.Timeout < 0 || lim.MemoryMiB < 0 {
		return fmt.Errorf("%w: limits must be positive (or off)", ErrUsage)
	}
	if len(lim.evalArgs()) > 0 {
		if _, err := r.eval(ctx, "", "undefined", lim); err != nil {
			return err
		}
	}
	r.mu.Lock()
	r.limit = lim
	r.mu.Unlock()
	return nil
}

// typedResult reads EVAL.TYPED's [type, json, output, logs] reply.
func typedResult(v any) (Result, bool) {
	a, ok := v.([]any)
	if !ok || len(a) != 4 {
		return Result{}, false
	}
	typ, ok1 := a[0].(string)
	isJSON, ok2 := a[1].(int64)
	out, ok3 := a[2].(string)
	logs, ok4 := a[3].([]any)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return Result{}, false
	}
	res := Result{Type: typ, JSON: isJSON == 1, Output: []byte(out)}
	for _, l := range logs {
		if s, ok := l.(string); ok {
			res.Logs = append(res.Logs, s)
		}
	}
	return res, true
}

// replyResult maps a RESP reply to a Result.
func replyResult(v any) Result {
	switch v := v.(type) {
	case nil:
		return Result{Type: "undefined"}
	case string:
		return Result{Output: []byte(v)}
	case int64:
		return Result{Output: []byte(strconv.FormatInt(v, 10)), Type: "number", JSON: true}
	}
	return Result{Output: fmt.Appendf(nil, "%v", v), Type: "string"}
}

// remoteError reads a daemon's error reply: a program failure (PROGERR)
// becomes a ScriptError with kind and position; anything else keeps the
// daemon's words without the error code.
func remoteError(err error) error {
	msg := err.Error()
	if strings.HasPrefix(msg, "PROGERR ") {
		return parseScriptError(stripErrPrefix(msg))
	}
	return errors.New(stripErrPrefix(msg))
}

// stripErrPrefix drops the RESP error code ("ERR ") from a message.
func stripErrPrefix(s string) string {
	if code, rest, ok := strings.Cut(s, " "); ok && code == strings.ToUpper(code) && len(code) > 1 {
		return rest
	}
	return s
}

// Namespaces implements Evaluator with NS.LIST and NS.INFO.
func (r *Remote) Namespaces(ctx context.Context) ([]NamespaceInfo, error) {
	v, err := r.do(ctx, "NS.LIST")
	if err != nil {
		return nil, err
	}
	arr, _ := v.([]any)
	var out []NamespaceInfo
	for _, e := range arr {
		var ni NamespaceInfo
		if name, ok := e.(string); ok {
			ni.Name = name
			if info, err := r.do(ctx, "NS.INFO", name); err == nil {
				fillNamespace(&ni, toMap(info))
			}
		} else {
			fillNamespace(&ni, toMap(e))
		}
		if ni.Name != "" {
			out = append(out, ni)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func fillNamespace(ni *NamespaceInfo, m map[string]any) {
	if s, ok := m["name"].(string); ok {
		ni.Name = s
	}
	ni.Dims = toInt(m["dims"])
	if s, ok := m["curve"].(string); ok {
		ni.Curve = s
	}
	ni.Values = toInt(m["values"])
	ni.Edges = toInt(m["edges"])
}

// toMap reads a RESP3 map or a RESP2 array of alternating field and value
// (as HGETALL and INFO-like replies give them); keys are lower-cased.
func toMap(v any) map[string]any {
	m := map[string]any{}
	switch v := v.(type) {
	case map[any]any:
		for k, e := range v {
			m[strings.ToLower(fmt.Sprint(k))] = e
		}
	case map[string]any:
		for k, e := range v {
			m[strings.ToLower(k)] = e
		}
	case []any:
		for i := 0; i+1 < len(v); i += 2 {
			m[strings.ToLower(fmt.Sprint(v[i]))] = v[i+1]
		}
	}
	return m
}

func toInt(v any) int {
	switch v := v.(type) {
	case int64:
		return int(v)
	case string:
		n, _ := strconv.Atoi(v)
		return n
	}
	return 0
}

// CreateNamespace implements Evaluator with NS.CREATE.
func (r *Remote) CreateNamespace(ctx context.Context, name string, dims int, curve string) error {
	args := []any{"NS.CREATE", name, "DIMS", dims}
	if curve != "" {
		args = append(args, "CURVE", curve)
	}
	_, err := r.do(ctx, args...)
	return err
}

// Programs implements Evaluator with PROGS ns.
func (r *Remote) Programs(ctx context.Context, ns string) ([]ProgramInfo, error) {
	v, err := r.do(ctx, "PROGS", ns)
	if err != nil {
		return nil, err
	}
	arr, _ := v.([]any)
	var out []ProgramInfo
	for _, e := range arr {
		var p ProgramInfo
		switch e := e.(type) {
		case string:
			p.Name = e
		case []any:
			if len(e) > 0 && isFieldName(e[0]) {
				fillProgram(&p, toMap(e))
			} else {
				// [name, kind, version]
				for i, f := range e {
					s := fmt.Sprint(f)
					switch i {
					case 0:
						p.Name = s
					case 1:
						p.Kind = strings.ToLower(s)
					case 2:
						p.Version = s
					}
				}
			}
		default:
			fillProgram(&p, toMap(e))
		}
		if p.Name != "" {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func isFieldName(v any) bool {
	s, ok := v.(string)
	return ok && strings.EqualFold(s, "name")
}

func fillProgram(p *ProgramInfo, m map[string]any) {
	p.Name = fmt.Sprint(m["name"])
	if k, ok := m["kind"]; ok {
		p.Kind = strings.ToLower(fmt.Sprint(k))
	}
	if v, ok := m["version"]; ok {
		p.Version = fmt.Sprint(v)
	}
	switch ro := m["readonly"].(type) {
	case bool:
		p.ReadOnly = ro
	case int64:
		p.ReadOnly = ro != 0
	}
	p.Runs = int64(toInt(m["runs"]))
}

// Prog implements Evaluator with PROG ns name JS|WASM code.
func (r *Remote) Prog(ctx context.Context, ns, name, kind string, code []byte) (string, error) {
	v, err := r.do(ctx, "PROG", ns, name, strings.ToUpper(kind), code)
	if err != nil {
		return "", err
	}
	return fmt.Sprint(v), nil
}

// Run implements Evaluator with RUN.TYPED ns name [arg], which also
// replies what the program logged; on a daemon without it, RUN.
func (r *Remote) Run(ctx context.Context, ns, name string, arg []byte) (Result, error) {
	args := []any{"RUN.TYPED", ns, name}
	if len(arg) > 0 {
		args = append(args, arg)
	}
	v, err := r.do(ctx, args...)
	if res, ok := typedResult(v); ok && err == nil {
		res.Type = "" // the program's output is bytes to the daemon: shown as RUN's
		return res, nil
	}
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "unknown command") {
		if err != nil {
			return Result{}, err
		}
		return Result{}, fmt.Errorf("repl: unexpected RUN.TYPED reply %v", v)
	}
	args[0] = "RUN" // an older daemon: the program did not run
	v, err = r.do(ctx, args...)
	if err != nil {
		return Result{}, err
	}
	return replyResult(v), nil
}

// Stats implements Evaluator with STATS [ns].
func (r *Remote) Stats(ctx context.Context, ns string) ([]byte, error) {
	args := []any{"STATS"}
	if ns != "" {
		args = append(args, ns)
	}
	v, err := r.do(ctx, args...)
	if err != nil {
		return nil, err
	}
	return []byte(fmt.Sprint(v)), nil
}

// Close implements Evaluator: it closes the connection.
func (r *Remote) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	return r.client.Close()
}
