package server

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cubelinux/cube"
)

// PROG ns name WASM|JS code [RO] [TIMEOUT ms] [MEMORY mib]
func cmdProg(cl *call) error {
	if _, err := cl.ns(cl.args[1]); err != nil {
		return err
	}
	var kind cube.Kind
	switch strings.ToUpper(string(cl.args[3])) {
	case "WASM":
		kind = cube.WASM
	case "JS":
		kind = cube.JS
	default:
		return usageErr("PROG: kind must be WASM or JS, got '%s'; usage: %s", clip(cl.args[3]), cl.cmd.Synopsis)
	}
	var o cube.ProgOptions
	err := cl.options(5, map[string]int{"RO": 0, "TIMEOUT": 1, "MEMORY": 1}, func(key string, v [][]byte) error {
		switch key {
		case "RO":
			o.ReadOnly = true
		case "TIMEOUT":
			ms, err := parseCount(v[0], "TIMEOUT (milliseconds)")
			if err != nil {
				return err
			}
			if ms == 0 {
				return usageErr("TIMEOUT must be at least 1 ms")
			}
			o.Limits.Timeout = time.Duration(ms) * time.Millisecond
		case "MEMORY":
			mib, err := parseCount(v[0], "MEMORY (MiB)")
			if err != nil {
				return err
			}
			if mib == 0 || mib > 4096 {
				return usageErr("MEMORY must be 1 to 4096 MiB, got %d", mib)
			}
			o.Limits.MemoryBytes = int64(mib) << 20
		}
		return nil
	})
	if err != nil {
		return err
	}
	info, err := cl.s.db.Prog(cl.ctx, string(cl.args[1]), string(cl.args[2]), kind, cl.args[4], o)
	if err != nil {
		return progErr(cl, "register", err)
	}
	cl.w.BulkString(info.Version)
	return nil
}

// PROGS ns
func cmdProgs(cl *call) error {
	if _, err := cl.ns(cl.args[1]); err != nil {
		return err
	}
	progs, err := cl.s.db.Progs(string(cl.args[1]))
	if err != nil {
		return err
	}
	w := cl.w
	w.Array(len(progs))
	for _, p := range progs {
		lim := p.Limits
		w.Map(10)
		w.BulkString("name")
		w.BulkString(p.Name)
		w.BulkString("kind")
		w.BulkString(string(p.Kind))
		w.BulkString("version")
		w.BulkString(p.Version)
		w.BulkString("readonly")
		w.Bool(p.ReadOnly)
		w.BulkString("code_size")
		w.Int(int64(p.CodeSize))
		w.BulkString("timeout_ms")
		w.Int(lim.Timeout.Milliseconds())
		w.BulkString("memory_bytes")
		w.Int(lim.MemoryBytes)
		w.BulkString("runs")
		w.Int(p.Telemetry.Runs)
		var errs int64
		for _, n := range p.Telemetry.Errors {
			errs += n
		}
		w.BulkString("errors")
		w.Int(errs)
		w.BulkString("p50_us")
		w.Int(p.Telemetry.Latency.P50.Microseconds())
	}
	return nil
}

// UNPROG ns name
func cmdUnprog(cl *call) error {
	if _, err := cl.ns(cl.args[1]); err != nil {
		return err
	}
	err := cl.s.db.Unprog(cl.ctx, string(cl.args[1]), string(cl.args[2]))
	switch {
	case errors.Is(err, cube.ErrNoProgram):
		cl.w.Int(0)
	case err != nil:
		return err
	default:
		cl.w.Int(1)
	}
	return nil
}

// RUN ns name [arg]
func cmdRun(cl *call) error {
	res, err := runProgram(cl)
	if err != nil {
		return err
	}
	cl.w.Bulk(res.Output)
	return nil
}

// RUN.TYPED ns name [arg]
//
// RUN with what the program logged, in EVAL.TYPED's shape so that one
// client parser reads both: [type, json, output, logs], where type is
// always "bytes" and json 0 (a program's output is bytes to the daemon),
// and logs are the lines it passed to cube.log / cube_log and wrote to
// standard output or error.
func cmdRunTyped(cl *call) error {
	res, err := runProgram(cl)
	if err != nil {
		return err
	}
	typedReply(cl, cube.Completion{Result: res, Type: "bytes"})
	return nil
}

func runProgram(cl *call) (cube.Result, error) {
	if len(cl.args) > 4 {
		return cube.Result{}, cl.cmd.arityError()
	}
	if _, err := cl.ns(cl.args[1]); err != nil {
		return cube.Result{}, err
	}
	var arg []byte
	if len(cl.args) == 4 {
		arg = cl.args[3]
	}
	cl.s.stats.progRuns.WithLabelValues("run").Inc()
	res, err := cl.s.db.Run(cl.ctx, string(cl.args[1]), string(cl.args[2]), arg)
	if err != nil {
		pe := progErr(cl, "run", err)
		if e, ok := pe.(*progError); ok {
			e.logs = logTail(res.Logs)
		}
		return cube.Result{}, pe
	}
	return res, nil
}

// EVAL ns script [arg] [TIMEOUT ms] [MEMORY mib]
//
// The script runs in the connection's session, whose globals persist
// between EVALs (the REPL's remote mode); cube.args holds arg for this
// call only ("" without one). TIMEOUT and MEMORY raise (or lower) the
// store's default limits for this call, up to the daemon's maximum.
func cmdEval(cl *call) error {
	c, err := evalInSession(cl)
	if err != nil {
		return err
	}
	cl.w.Bulk(c.Output)
	return nil
}

// EVAL.TYPED ns script [arg] [TIMEOUT ms] [MEMORY mib]
//
// EVAL for REPLs and tools: the reply is [type, json, output, logs] — the
// completion value's JavaScript type ("string", "number", "object", ...),
// 1 if output is JSON text, the output as EVAL gives it, and the lines the
// script passed to cube.log — so a client can print "42" and 42 apart and
// show what the script logged.
func cmdEvalTyped(cl *call) error {
	c, err := evalInSession(cl)
	if err != nil {
		return err
	}
	typedReply(cl, c)
	return nil
}

// typedReply writes [type, json, output, logs].
func typedReply(cl *call, c cube.Completion) {
	cl.w.Array(4)
	cl.w.BulkString(c.Type)
	json := int64(0)
	if c.JSON {
		json = 1
	}
	cl.w.Int(json)
	cl.w.Bulk(c.Output)
	cl.w.Array(len(c.Logs))
	for _, l := range c.Logs {
		cl.w.BulkString(l)
	}
}

// evalArgs splits EVAL's words after the script: an odd count starts
// with arg, the rest are TIMEOUT / MEMORY pairs. It returns arg and the
// limits asked for (zero fields: the store's defaults).
func evalArgs(cl *call) ([]byte, cube.Limits, error) {
	var arg []byte
	var lim cube.Limits
	i := 3
	if (len(cl.args)-i)%2 == 1 {
		arg = cl.args[i]
		i++
		// A lone TIMEOUT or MEMORY is an option missing its value far
		// more often than an argument that is that word.
		if w := strings.ToUpper(string(arg)); i == len(cl.args) && (w == "TIMEOUT" || w == "MEMORY") {
			unit := "ms"
			if w == "MEMORY" {
				unit = "MiB"
			}
			return nil, cube.Limits{}, usageErr("%s: %s needs a value in %s: %s ns script [arg] [TIMEOUT ms] [MEMORY mib] (to pass the word %s as arg, follow it with a limit: %s ns script %s TIMEOUT 1000)", cl.cmd.Name, w, unit, cl.cmd.Name, arg, cl.cmd.Name, arg)
		}
	}
	maxT, maxM := cl.s.o.MaxEvalTimeout, cl.s.o.MaxEvalMemory
	err := cl.options(i, map[string]int{"TIMEOUT": 1, "MEMORY": 1}, func(key string, v [][]byte) error {
		switch key {
		case "TIMEOUT":
			ms, err := parseCount(v[0], "TIMEOUT (milliseconds)")
			if err != nil {
				return err
			}
			if ms == 0 || int64(ms) > maxT.Milliseconds() {
				return usageErr("%s: TIMEOUT must be 1 to %d ms on this daemon, got %d (its maximum is set by cube serve --max-eval-timeout)", cl.cmd.Name, maxT.Milliseconds(), ms)
			}
			lim.Timeout = time.Duration(ms) * time.Millisecond
		case "MEMORY":
			mib, err := parseCount(v[0], "MEMORY (MiB)")
			if err != nil {
				return err
			}
			if mib == 0 || int64(mib) > maxM>>20 {
				return usageErr("%s: MEMORY must be 1 to %d MiB on this daemon, got %d (its maximum is set by cube serve --max-eval-memory)", cl.cmd.Name, maxM>>20, mib)
			}
			lim.MemoryBytes = int64(mib) << 20
		}
		return nil
	})
	return arg, lim, err
}

// evalInSession runs EVAL's script in the connection's session.
func evalInSession(cl *call) (cube.Completion, error) {
	ns := string(cl.args[1])
	// ns "" runs plain JavaScript outside any namespace (a REPL before one
	// is picked); cube's calls then fail saying so.
	if _, err := cl.ns(cl.args[1]); err != nil && ns != "" {
		return cube.Completion{}, err
	}
	arg, lim, err := evalArgs(cl)
	if err != nil {
		return cube.Completion{}, err
	}
	cl.s.stats.progRuns.WithLabelValues("eval").Inc()
	s, _ := cl.c.session.(*cube.Session)
	if s == nil {
		s = cl.s.db.Session(ns)
		cl.c.session = s
	}
	s.Use(ns)
	c, err := s.EvalWith(cl.ctx, string(cl.args[2]), arg, lim)
	if err != nil {
		return cube.Completion{}, progErr(cl, "eval", err)
	}
	return c, nil
}

// progError is a program that failed to register or run.
type progError struct {
	what, name string
	hint       string // what raises the limit it hit, or ""
	logs       string // the end of a failed run's log, on one line, or ""
	err        error
}

// logTail puts the last lines of a failed run's log on one line for its
// error reply (where a store error's reason is, docs/ABI.md §2), at most
// about 1 KiB of them.
func logTail(lines []string) string {
	const most = 1 << 10
	var out []string
	n := 0
	for i := len(lines) - 1; i >= 0 && n < most; i-- {
		l := strings.Join(strings.Fields(lines[i]), " ")
		if len(l) > most-n {
			l = "..." + l[len(l)-(most-n):]
		}
		out = append([]string{l}, out...)
		n += len(l) + 3
	}
	if len(out) < len(lines) {
		out = append([]string{"..."}, out...)
	}
	return strings.ToValidUTF8(strings.Join(out, " | "), "?")
}

func (e *progError) Error() string { return e.err.Error() }
func (e *progError) Unwrap() error { return e.err }

func progErr(cl *call, what string, err error) error {
	if what != "register" {
		reason := "store"
		if k := cube.KindOf(err); k != 0 {
			reason = k.String()
		} else if errors.Is(err, cube.ErrNoProgram) {
			reason = "no program"
		}
		cl.s.stats.progErrors.WithLabelValues(lowerName(cl.cmd.Name), reason).Inc()
	}
	name := ""
	if len(cl.args) > 2 {
		name = string(cl.args[2])
	}
	if what == "eval" {
		name = ""
	}
	return &progError{what: what, name: name, hint: limitHint(cl, what, err), err: err}
}

// limitHint names the command that raises the limit err hit: PROG for a
// program's own limits (they are part of its registration), EVAL's
// options for a script's, within the daemon's maximum. Limits no command
// raises say what to do instead.
func limitHint(cl *call, what string, err error) string {
	k := cube.KindOf(err)
	var opt, unit string
	switch k {
	case cube.KindTimeout:
		opt, unit = "TIMEOUT", "ms"
	case cube.KindMemoryLimit, cube.KindStackLimit:
		opt, unit = "MEMORY", "mib"
	case cube.KindOutputLimit:
		return "a fixed limit of every run: return less, or PUT the data and read it with GET or REGION"
	case cube.KindWriteLimit:
		return "a fixed limit of every run: split the work into several runs"
	case cube.KindHostCallLimit:
		if strings.Contains(err.Error(), "host calls") {
			return "a fixed limit of every run: split the work into several runs"
		}
		return ""
	default:
		return ""
	}
	if what != "eval" {
		return fmt.Sprintf("raise it by registering the program again with PROG ... %s %s", opt, unit)
	}
	max := fmt.Sprintf("%d ms", cl.s.o.MaxEvalTimeout.Milliseconds())
	flag := "--max-eval-timeout"
	if opt == "MEMORY" {
		max, flag = fmt.Sprintf("%d MiB", cl.s.o.MaxEvalMemory>>20), "--max-eval-memory"
	}
	return fmt.Sprintf("raise it for this call with %s ns script [arg] %s %s, up to this daemon's %s, set by cube serve %s", cl.cmd.Name, opt, unit, max, flag)
}

// progErrorText words a program failure: PROGERR and what happened, or
// NOPROG for a program that is not there.
func progErrorText(err error) (string, bool) {
	var pe *progError
	if !errors.As(err, &pe) {
		return "", false
	}
	if errors.Is(err, cube.ErrNoProgram) {
		return fmt.Sprintf("NOPROG no program '%s' in this namespace; register it with PROG", pe.name), true
	}
	msg := strings.TrimPrefix(trim(pe.err), "vm: ")
	msg = strings.ReplaceAll(msg, "plugins: ", "")
	if pe.hint != "" {
		msg += " (" + pe.hint + ")"
	}
	if pe.logs != "" {
		msg += "; its log: " + pe.logs
	}
	subject := "program '" + pe.name + "'"
	if pe.name == "" {
		subject = "script"
	}
	switch pe.what {
	case "register":
		return fmt.Sprintf("PROGERR cannot register %s: %s", subject, msg), true
	default:
		return fmt.Sprintf("PROGERR %s failed: %s", subject, msg), true
	}
}

func (s *Server) programStats(ns string) any {
	if ns != "" {
		p, err := s.db.Progs(ns)
		if err != nil || len(p) == 0 {
			return nil
		}
		return p
	}
	p := s.db.Stats().Programs
	if len(p) == 0 {
		return nil
	}
	return p
}
