package repl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/peterh/liner"

	"github.com/cubelinux/cube"
)

// DefaultHistoryFile is where a terminal session keeps its history, under
// the user's home directory.
const DefaultHistoryFile = ".cube_history"

// Options configure Run. Exactly one of DB, Remote and Socket says what
// the REPL evaluates against.
type Options struct {
	// In is read without a terminal; nil means os.Stdin. On a terminal the
	// line editor reads os.Stdin and writes os.Stdout (liner works on the
	// process's terminal, not on arbitrary streams).
	In io.Reader
	// Out receives results; Err receives errors. Nil means os.Stdout and
	// os.Stderr.
	Out, Err io.Writer

	// DB is an embedded store; the REPL evaluates in-process.
	DB *cube.DB
	// Remote is an evaluator to use as it is (a Remote from Dial, or any
	// other). Run does not close it.
	Remote Evaluator
	// Socket is a daemon's Unix socket path (or "tcp://HOST:PORT") to dial
	// when Remote is nil; Auth is the token sent with AUTH, if any.
	Socket string
	Auth   string

	// Namespace is the namespace to start in. Empty selects the only
	// namespace if there is exactly one.
	Namespace string
	// HistoryFile keeps the terminal's history; empty means
	// ~/.cube_history, "-" keeps none. Without a terminal no history is
	// read or written.
	HistoryFile string
	// Terminal forces the line editor on; false detects whether standard
	// input is a terminal.
	Terminal bool
	// Echo, without a terminal, writes each input after a prompt before
	// its result, so that the output reads as a transcript.
	Echo bool
}

// Run reads inputs and evaluates them until Ctrl-D, .exit, the end of the
// input or ctx ends. Without a terminal it returns an error wrapping
// ErrInputFailed if any input failed.
func Run(ctx context.Context, o Options) error {
	if o.In == nil {
		o.In = os.Stdin
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	if o.Err == nil {
		o.Err = os.Stderr
	}
	ev := o.Remote
	switch {
	case ev != nil:
	case o.Socket != "":
		rem, err := Dial(ctx, o.Socket, DialOptions{Auth: o.Auth})
		if err != nil {
			return err
		}
		defer rem.Close()
		ev = rem
	case o.DB != nil:
		emb := NewEmbedded(o.DB)
		defer emb.Close()
		ev = emb
	default:
		return ErrNoEvaluator
	}

	r := &session{ev: ev, out: o.Out, errw: o.Err, ns: o.Namespace, echo: o.Echo}
	r.comp = &completer{ev: ev, ns: func() string { return r.ns }}
	r.term = o.Terminal || (o.In == os.Stdin && stdinIsTerminal())
	if r.ns == "" {
		// The same on a terminal and in a script, embedded or on a daemon:
		// the only namespace, or none. Without one plain JavaScript runs
		// and the cube API says how to pick one; opening a REPL never
		// creates a namespace.
		if nss, err := ev.Namespaces(ctx); err == nil && len(nss) == 1 {
			r.ns = nss[0].Name
		}
	}
	if r.term {
		return r.runTerminal(ctx, o)
	}
	return r.runPiped(ctx, bufio.NewReader(o.In))
}

func stdinIsTerminal() bool {
	_, err := liner.TerminalMode()
	return err == nil
}

// session is one REPL's state.
type session struct {
	ev        Evaluator
	out, errw io.Writer
	ns        string
	term      bool
	echo      bool
	jsonMode  bool
	timing    bool
	failures  int
	inputs    int
	line      int      // lines read so far
	start     int      // the line the current input starts on
	failed    []string // without a terminal: which inputs failed
	comp      *completer
	// interrupt, when set, is how a running input learns of Ctrl-C.
	interrupt func(cancel context.CancelFunc) (stop func())
}

func (r *session) prompt() string {
	if r.ns == "" {
		return "cube> "
	}
	return r.ns + "> "
}

const contPrompt = "... "

// reader yields lines; ErrPromptAborted means Ctrl-C, io.EOF the end.
type reader func(prompt string) (string, error)

// loop is the read-eval-print loop shared by terminals and pipes.
func (r *session) loop(ctx context.Context, read reader, remember func(string)) error {
	var buf []string
	for ctx.Err() == nil {
		p := r.prompt()
		if len(buf) > 0 {
			p = contPrompt
		}
		line, err := read(p)
		if errors.Is(err, liner.ErrPromptAborted) {
			if len(buf) == 0 {
				fmt.Fprintln(r.out, "(To exit, press Ctrl-D or type .exit)")
			}
			buf = nil
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		eof := errors.Is(err, io.EOF)
		if !eof || line != "" {
			r.line++
			if len(buf) == 0 {
				r.start = r.line
			}
		}
		if eof && line == "" {
			if len(buf) > 0 {
				// The input ended inside an open bracket: run what there
				// is, so that the engine says what is missing.
				r.eval(ctx, strings.Join(buf, "\n"))
			}
			return nil
		}
		if r.echo && !r.term {
			fmt.Fprintf(r.out, "%s%s\n", p, line)
		}
		if len(buf) == 0 && isDotCommand(line) {
			if remember != nil {
				remember(line)
			}
			if r.command(ctx, line) {
				return nil
			}
			continue
		}
		if remember != nil && strings.TrimSpace(line) != "" {
			remember(line)
		}
		buf = append(buf, line)
		src := strings.Join(buf, "\n")
		st := scanInput(src)
		if st.open && !eof {
			continue
		}
		buf = nil
		if !st.empty {
			r.eval(ctx, src)
		}
		if eof {
			return nil
		}
	}
	return ctx.Err()
}

// runPiped reads inputs from in without a terminal.
func (r *session) runPiped(ctx context.Context, in *bufio.Reader) error {
	read := func(string) (string, error) {
		line, err := in.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if err == io.EOF && line != "" {
			// The last line without a newline is still a line.
			return line, nil
		}
		return line, err
	}
	if err := r.loop(ctx, read, nil); err != nil {
		return err
	}
	if r.failures > 0 {
		which := r.failed
		if len(which) > 5 {
			which = append(which[:5:5], "...")
		}
		return fmt.Errorf("%w: %d of %d: %s", ErrInputFailed, r.failures, r.inputs, strings.Join(which, ", "))
	}
	return nil
}

// runTerminal runs the line editor on the process's terminal.
func (r *session) runTerminal(ctx context.Context, o Options) error {
	ln := liner.NewLiner()
	defer ln.Close()
	ln.SetCtrlCAborts(true)
	ln.SetTabCompletionStyle(liner.TabPrints)
	ln.SetWordCompleter(func(line string, pos int) (string, []string, string) {
		return r.comp.complete(ctx, line, pos)
	})
	// At the prompt the line editor reads Ctrl-C as a key; while an input
	// runs the terminal is in its normal mode and Ctrl-C is SIGINT. The
	// session catches SIGINT for as long as it lasts: a signal stops the
	// running input, if any, and never ends the process.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	defer signal.Stop(sig)
	var mu sync.Mutex
	var running context.CancelFunc
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-sig:
				mu.Lock()
				if running != nil {
					running()
				}
				mu.Unlock()
			case <-done:
				return
			}
		}
	}()
	r.interrupt = func(cancel context.CancelFunc) func() {
		mu.Lock()
		running = cancel
		mu.Unlock()
		return func() {
			mu.Lock()
			running = nil
			mu.Unlock()
		}
	}

	hist := historyPath(o.HistoryFile)
	if hist != "" {
		if f, err := os.Open(hist); err == nil {
			ln.ReadHistory(f)
			f.Close()
		}
	}
	fmt.Fprintln(r.out, "cube REPL: JavaScript with the cube API. .help for commands, Ctrl-D to leave.")
	if r.ns == "" {
		fmt.Fprintln(r.out, "No namespace selected: JavaScript runs, the cube API needs one: "+pickNamespace+".")
	}
	err := r.loop(ctx, ln.Prompt, ln.AppendHistory)
	if hist != "" {
		if f, herr := os.OpenFile(hist, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600); herr == nil {
			ln.WriteHistory(f)
			f.Close()
		} else {
			fmt.Fprintf(r.errw, "cannot save history in %s: %v\n", hist, herr)
		}
	}
	return err
}

// historyPath resolves Options.HistoryFile.
func historyPath(p string) string {
	switch p {
	case "-":
		return ""
	case "":
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		return filepath.Join(home, DefaultHistoryFile)
	}
	return p
}

// call runs f with a context that Ctrl-C cancels (on a terminal).
func (r *session) call(ctx context.Context, f func(ctx context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if r.interrupt != nil {
		stop := r.interrupt(cancel)
		defer stop()
	}
	err := f(ctx)
	if err != nil && ctx.Err() != nil {
		if errors.Is(err, ErrSessionReset) {
			return fmt.Errorf("%w (Ctrl-C): none of its writes were kept; the daemon's session starts over", ErrInterrupted)
		}
		return fmt.Errorf("%w (Ctrl-C): none of its writes were kept", ErrInterrupted)
	}
	return err
}

// eval runs one input and prints its result or error.
func (r *session) eval(ctx context.Context, src string) {
	r.inputs++
	start := time.Now()
	var res Result
	err := r.call(ctx, func(ctx context.Context) error {
		var err error
		res, err = r.ev.Eval(ctx, r.ns, src)
		return err
	})
	took := time.Since(start)
	if errors.Is(err, ErrSessionReset) && (res.Type != "" || res.Output != nil) {
		fmt.Fprintf(r.errw, "note: %v\n", err)
		err = nil
	}
	if err == nil {
		r.comp.learn(src)
	}
	if err != nil {
		r.fail(err, src)
	} else {
		for _, l := range res.Logs {
			fmt.Fprintln(r.out, l)
		}
		fmt.Fprintln(r.out, formatResult(res, r.jsonMode))
	}
	if r.timing {
		fmt.Fprintf(r.out, "(%s)\n", roundDuration(took))
	}
}

// noNamespaceRe is the sandbox's refusal of a cube call outside any
// namespace.
var noNamespaceRe = regexp.MustCompile(`(cube\.\w+): (?:no host: )?cube is only usable while a program runs`)

// fail prints an error; a script error with a position also shows the
// line it points at.
func (r *session) fail(err error, src string) {
	r.failures++
	lead := "error: "
	offset := 0 // script lines before this input's first
	if !r.term {
		// A script's reader needs to know which of its inputs failed.
		// (An echoed transcript shows the input right above its error.)
		where := fmt.Sprintf("input %d (line %d)", r.inputs, r.start)
		if !r.echo {
			lead = "error in " + where + ": "
			offset = r.start - 1
		}
		r.failed = append(r.failed, where)
	}
	var se *ScriptError
	if !errors.As(err, &se) {
		fmt.Fprintf(r.errw, "%s%v\n", lead, err)
		return
	}
	msg := se.Msg
	if m := noNamespaceRe.FindStringSubmatch(msg); m != nil && r.ns == "" {
		msg = m[1] + " needs a namespace and none is selected: " + pickNamespace
		se = &ScriptError{Kind: "", Msg: msg, Line: se.Line, Column: se.Column}
	}
	if m, ok := strings.CutPrefix(msg, "syntax error: "); ok && se.Kind == "bad module" {
		msg = "SyntaxError: " + m
	} else if se.Kind != "" && se.Kind != "guest error" {
		msg = se.Kind + ": " + msg
	}
	if se.Line <= 0 {
		fmt.Fprintf(r.errw, "%s%s\n", lead, msg)
		return
	}
	fmt.Fprintf(r.errw, "%s%s\n  at line %d, column %d\n", lead, msg, se.Line+offset, se.Column)
	lines := strings.Split(src, "\n")
	if se.Line > len(lines) {
		return
	}
	l := lines[se.Line-1]
	num := fmt.Sprint(se.Line + offset)
	fmt.Fprintf(r.errw, "  %s | %s\n", num, l)
	if se.Column > 0 && se.Column <= len(l)+1 {
		pad := []byte(l[:se.Column-1])
		for i, b := range pad {
			if b != '\t' {
				pad[i] = ' '
			}
		}
		fmt.Fprintf(r.errw, "  %s | %s^\n", strings.Repeat(" ", len(num)), pad)
	}
}

func roundDuration(d time.Duration) time.Duration {
	switch {
	case d > time.Second:
		return d.Round(time.Millisecond)
	case d > time.Millisecond:
		return d.Round(time.Microsecond)
	}
	return d
}
