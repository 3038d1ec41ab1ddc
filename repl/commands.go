package repl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// command is one dot-command: its synopsis (for .help and usage errors),
// what it does, and its handler. The table drives dispatch, .help and
// completion.
type command struct {
	name     string
	args     string
	help     string
	complete argKind
	run      func(r *session, ctx context.Context, args string) error
}

// argKind says what the completer offers for a command's first argument.
type argKind int

const (
	argNone argKind = iota
	argNamespace
	argProgram
	argOnOff
	argFile
	argLimit // a number, or off
)

// errExit is returned by .exit's handler.
var errExit = fmt.Errorf("exit")

// commandTable returns the dot-commands. It is a function, not a
// variable, because .help's handler prints the table.
func commandTable() []command {
	return []command{
		{"help", "", "show this help", argNone, (*session).cmdHelp},
		{"ns", "[NAME [DIMS [hilbert|morton]]]", "list namespaces; switch to NAME; with DIMS, create it first", argNamespace, (*session).cmdNs},
		{"progs", "", "list the programs of the namespace", argNone, (*session).cmdProgs},
		{"prog", "NAME FILE", "register FILE (.js or .wasm) as program NAME", argProgram, (*session).cmdProg},
		{"run", "NAME [ARG]", "run program NAME with ARG (the rest of the line)", argProgram, (*session).cmdRun},
		{"stats", "", "statistics of the namespace (of the store if none is selected)", argNone, (*session).cmdStats},
		{"load", "FILE", "evaluate a JavaScript file in this session", argFile, (*session).cmdLoad},
		{"timeout", "[MS|off]", "wall time of each input, in milliseconds (a daemon's EVAL TIMEOUT); off: the default", argLimit, (*session).cmdTimeout},
		{"memory", "[MIB|off]", "memory of each input, in MiB (a daemon's EVAL MEMORY); off: the default", argLimit, (*session).cmdMemory},
		{"time", "on|off", "print how long each input took", argOnOff, (*session).cmdTime},
		{"json", "on|off", "print results as one line of compact JSON", argOnOff, (*session).cmdJSON},
		{"exit", "", "leave (as does Ctrl-D)", argNone, func(*session, context.Context, string) error { return errExit }},
	}
}

func lookupCommand(name string) *command {
	for _, c := range commandTable() {
		if c.name == name {
			return &c
		}
	}
	return nil
}

// isDotCommand reports whether a first line is a dot-command rather than
// JavaScript (".5 + 1" is JavaScript).
func isDotCommand(line string) bool {
	s := strings.TrimSpace(line)
	return len(s) > 1 && s[0] == '.' && (s[1] >= 'a' && s[1] <= 'z' || s[1] >= 'A' && s[1] <= 'Z')
}

// command runs a dot-command line; it reports whether the REPL should end.
func (r *session) command(ctx context.Context, line string) bool {
	s := strings.TrimSpace(line)[1:]
	name, args, _ := strings.Cut(s, " ")
	args = strings.TrimSpace(args)
	c := lookupCommand(name)
	r.inputs++
	if c == nil {
		r.fail(fmt.Errorf("unknown command .%s (.help lists them)", name), "")
		return false
	}
	err := c.run(r, ctx, args)
	if err == errExit {
		return true
	}
	if err != nil {
		r.fail(err, "")
	}
	return false
}

func usage(name string) error {
	c := lookupCommand(name)
	return fmt.Errorf("%w: .%s %s", ErrUsage, c.name, c.args)
}

func (r *session) cmdHelp(context.Context, string) error {
	fmt.Fprintln(r.out, "JavaScript runs in the namespace's session with the cube API:")
	fmt.Fprintln(r.out, "  cube.get(c) cube.put(c, v) cube.del(c) cube.region(min, max).toArray()")
	fmt.Fprintln(r.out, "  cube.nearby(c, k) cube.within(c, r) cube.region(min, max).columns({values: \"number\"})")
	fmt.Fprintln(r.out, "  cube.edges(c) cube.link(a, b, label) cube.walk(c, {depth}) cube.path(a, b)")
	fmt.Fprintln(r.out, "  cube.V(c).out(label).all() ... (Tab completes)")
	fmt.Fprintln(r.out, "Commands:")
	commands := commandTable()
	w := 0
	for _, c := range commands {
		w = max(w, len(c.name)+len(c.args)+2)
	}
	for _, c := range commands {
		syn := "." + c.name
		if c.args != "" {
			syn += " " + c.args
		}
		fmt.Fprintf(r.out, "  %-*s  %s\n", w, syn, c.help)
	}
	return nil
}

func (r *session) cmdNs(ctx context.Context, args string) error {
	f := strings.Fields(args)
	switch len(f) {
	case 0:
		var nss []NamespaceInfo
		err := r.call(ctx, func(ctx context.Context) (err error) { nss, err = r.ev.Namespaces(ctx); return err })
		if err != nil {
			return err
		}
		if len(nss) == 0 {
			fmt.Fprintln(r.out, "no namespaces (.ns NAME DIMS creates one)")
			return nil
		}
		rows := make([]map[string]any, len(nss))
		for i, n := range nss {
			rows[i] = map[string]any{"name": n.Name, "dims": n.Dims, "curve": n.Curve, "values": n.Values, "edges": n.Edges}
		}
		r.printTable(rows, "name", "dims", "curve", "values", "edges")
		return nil
	case 1:
		var found bool
		err := r.call(ctx, func(ctx context.Context) error {
			nss, err := r.ev.Namespaces(ctx)
			for _, n := range nss {
				found = found || n.Name == f[0]
			}
			return err
		})
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("no namespace %q (.ns lists them; .ns %s DIMS creates it)", f[0], f[0])
		}
		r.ns = f[0]
		return nil
	case 2, 3:
		dims, err := strconv.Atoi(f[1])
		if err != nil {
			return fmt.Errorf("%w: DIMS must be a number from 1 to 8, not %q", ErrUsage, f[1])
		}
		crv := ""
		if len(f) == 3 {
			crv = f[2]
		}
		if err := r.call(ctx, func(ctx context.Context) error { return r.ev.CreateNamespace(ctx, f[0], dims, crv) }); err != nil {
			return err
		}
		r.ns = f[0]
		fmt.Fprintf(r.out, "created namespace %s (%d dimensions)\n", f[0], dims)
		return nil
	}
	return usage("ns")
}

func (r *session) needNs() error {
	if r.ns == "" {
		return ErrNoNamespace
	}
	return nil
}

func (r *session) cmdProgs(ctx context.Context, args string) error {
	if args != "" {
		return usage("progs")
	}
	if err := r.needNs(); err != nil {
		return err
	}
	var ps []ProgramInfo
	if err := r.call(ctx, func(ctx context.Context) (err error) { ps, err = r.ev.Programs(ctx, r.ns); return err }); err != nil {
		return err
	}
	if len(ps) == 0 {
		fmt.Fprintf(r.out, "no programs in %s (.prog NAME FILE registers one)\n", r.ns)
		return nil
	}
	rows := make([]map[string]any, len(ps))
	for i, p := range ps {
		ver := p.Version
		if len(ver) > 12 && !r.jsonMode {
			ver = ver[:12]
		}
		mode := "rw"
		if p.ReadOnly {
			mode = "ro"
		}
		rows[i] = map[string]any{"name": p.Name, "kind": p.Kind, "mode": mode, "runs": int(p.Runs), "version": ver}
	}
	r.printTable(rows, "name", "kind", "mode", "runs", "version")
	return nil
}

func (r *session) cmdProg(ctx context.Context, args string) error {
	f := strings.Fields(args)
	if len(f) != 2 {
		return usage("prog")
	}
	if err := r.needNs(); err != nil {
		return err
	}
	var kind string
	switch strings.ToLower(filepath.Ext(f[1])) {
	case ".js", ".mjs":
		kind = "js"
	case ".wasm":
		kind = "wasm"
	default:
		return fmt.Errorf("%w: cannot tell the kind of %s: name it .js or .wasm", ErrUsage, f[1])
	}
	code, err := os.ReadFile(f[1])
	if err != nil {
		return err
	}
	var ver string
	if err := r.call(ctx, func(ctx context.Context) (err error) { ver, err = r.ev.Prog(ctx, r.ns, f[0], kind, code); return err }); err != nil {
		var se *ScriptError
		if errors.As(err, &se) && kind == "js" {
			r.fail(err, string(code)) // points into the file
			return nil
		}
		return err
	}
	fmt.Fprintf(r.out, "registered %s (%s) version %s\n", f[0], kind, ver)
	return nil
}

func (r *session) cmdRun(ctx context.Context, args string) error {
	name, arg, _ := strings.Cut(args, " ")
	if name == "" {
		return usage("run")
	}
	if err := r.needNs(); err != nil {
		return err
	}
	var res Result
	if err := r.call(ctx, func(ctx context.Context) (err error) { res, err = r.ev.Run(ctx, r.ns, name, []byte(arg)); return err }); err != nil {
		return err
	}
	for _, l := range res.Logs {
		fmt.Fprintln(r.out, l)
	}
	fmt.Fprintln(r.out, formatOutput(res.Output))
	return nil
}

func (r *session) cmdStats(ctx context.Context, args string) error {
	if args != "" {
		return usage("stats")
	}
	var js []byte
	if err := r.call(ctx, func(ctx context.Context) (err error) { js, err = r.ev.Stats(ctx, r.ns); return err }); err != nil {
		return err
	}
	fmt.Fprintln(r.out, formatResult(Result{Output: labelStats(js), Type: "object", JSON: true}, r.jsonMode))
	return nil
}

func (r *session) cmdLoad(ctx context.Context, args string) error {
	if args == "" {
		return usage("load")
	}
	src, err := os.ReadFile(args)
	if err != nil {
		return err
	}
	r.inputs-- // eval counts it
	r.eval(ctx, string(src))
	return nil
}

// EvalLimits are the limits of each input set by .timeout and .memory;
// zero fields mean the evaluator's defaults (an embedded store's
// Options.Limits, a daemon's).
type EvalLimits struct {
	Timeout   time.Duration
	MemoryMiB int
}

// Limiter is an Evaluator whose inputs can run under other limits than
// its defaults; Embedded and Remote are. .timeout and .memory need one.
type Limiter interface {
	EvalLimits() EvalLimits
	// SetEvalLimits sets the limits of later Evals, or refuses them
	// (outside a daemon's maximum) and keeps the old ones.
	SetEvalLimits(ctx context.Context, lim EvalLimits) error
}

func (r *session) cmdTimeout(ctx context.Context, args string) error {
	return r.setLimit(ctx, "timeout", "ms", args,
		func(l EvalLimits) int64 { return l.Timeout.Milliseconds() },
		func(l *EvalLimits, ms int64) { l.Timeout = time.Duration(ms) * time.Millisecond })
}

func (r *session) cmdMemory(ctx context.Context, args string) error {
	return r.setLimit(ctx, "memory", "MiB", args,
		func(l EvalLimits) int64 { return int64(l.MemoryMiB) },
		func(l *EvalLimits, mib int64) { l.MemoryMiB = int(mib) })
}

// setLimit is .timeout and .memory: without args it shows the limit, with
// a positive number it sets it, with off it goes back to the default.
func (r *session) setLimit(ctx context.Context, name, unit, args string, get func(EvalLimits) int64, set func(*EvalLimits, int64)) error {
	lm, ok := r.ev.(Limiter)
	if !ok {
		return fmt.Errorf(".%s: this evaluator has no per-input limits", name)
	}
	lim := lm.EvalLimits()
	switch {
	case args == "":
		if v := get(lim); v > 0 {
			fmt.Fprintf(r.out, "%s: %d %s\n", name, v, unit)
		} else {
			fmt.Fprintf(r.out, "%s: the default (.%s %s sets one)\n", name, name, strings.ToUpper(unit))
		}
		return nil
	case args == "off":
		set(&lim, 0)
	default:
		v, err := strconv.ParseInt(args, 10, 32)
		if err != nil || v <= 0 {
			return fmt.Errorf("%w: .%s takes a whole number of %s above 0, or off; got %q", ErrUsage, name, unit, args)
		}
		set(&lim, v)
	}
	return r.call(ctx, func(ctx context.Context) error { return lm.SetEvalLimits(ctx, lim) })
}

// evalHint is the daemon's hint for raising an EVAL's limit, which a REPL
// user did not type; withLimitHint puts the dot-command in its place.
var evalHint = regexp.MustCompile(`raise it for this call with EVAL(?:\.TYPED)? ns script \[arg\] (TIMEOUT ms|MEMORY mib)`)

// withLimitHint makes a timeout or memory-limit error of an input name the
// dot-command that raises the limit: .timeout MS or .memory MIB.
func withLimitHint(err error) error {
	var se *ScriptError
	if !errors.As(err, &se) {
		return err
	}
	cmd := map[string]string{"timeout": ".timeout MS", "memory limit": ".memory MIB"}[se.Kind]
	if cmd == "" {
		return err
	}
	if m := evalHint.FindStringSubmatchIndex(se.Msg); m != nil {
		se.Msg = se.Msg[:m[0]] + "raise it with " + cmd + se.Msg[m[1]:]
	} else if !strings.Contains(se.Msg, "raise it") {
		se.Msg += " (raise it with " + cmd + ")"
	}
	return err
}

func onOff(name, args string) (bool, error) {
	switch args {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, usage(name)
}

func (r *session) cmdTime(_ context.Context, args string) (err error) {
	r.timing, err = onOff("time", args)
	return err
}

func (r *session) cmdJSON(_ context.Context, args string) (err error) {
	r.jsonMode, err = onOff("json", args)
	return err
}

// printTable prints rows (or, in JSON mode, one JSON line).
func (r *session) printTable(rows []map[string]any, cols ...string) {
	arr := make([]jvalue, len(rows))
	for i, row := range rows {
		o := &jobject{keys: cols, vals: map[string]jvalue{}}
		for _, c := range cols {
			switch v := row[c].(type) {
			case int:
				o.vals[c] = jsonNumber(v)
			default:
				o.vals[c] = v
			}
		}
		arr[i] = o
	}
	var b strings.Builder
	if t, ok := table(arr); ok && !r.jsonMode {
		fmt.Fprintln(r.out, t)
		return
	}
	writeJSON(&b, arr, "", "")
	fmt.Fprintln(r.out, b.String())
}
