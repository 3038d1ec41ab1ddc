// Command cube is cube's one binary: the daemon (cube serve), a client for
// every daemon command (cube -s SOCKET <verb> ...), the REPL, and tools
// (import, export, verify, stats, demo, stress). Run "cube help" for the
// list.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/cubelinux/cube/vm/jsproc"
)

// jsWorkerVerb starts a JavaScript worker process; cube serve runs its own
// executable with it. It is not in help: people never type it.
const jsWorkerVerb = "__js-worker"

// jsWorkerCommand is the command a daemon gives cube.Options.JSWorker.
func jsWorkerCommand() ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find cube's own executable for JavaScript workers: %w", err)
	}
	return []string{exe, jsWorkerVerb}, nil
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == jsWorkerVerb {
		// A JavaScript worker of a daemon (vm/jsproc): it speaks only to
		// its parent, on its standard input and output.
		if err := jsproc.Serve(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "cube:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// SIGTERM ends every verb. Ctrl-C (SIGINT) ends every verb but the
	// REPL on a terminal, which catches it itself to stop the running input
	// and keep the session (see dispatch).
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, ctrlC: func(ctx context.Context) (context.Context, context.CancelFunc) {
		return signal.NotifyContext(ctx, os.Interrupt)
	}}
	code := run(ctx, os.Args[1:], e)
	stop()
	os.Exit(code)
}

// env is what a subcommand may touch of the process: its streams, its
// environment and the global flags.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string

	socket    string // -s: talk to this daemon
	namespace string // -n: default namespace for verbs that need one
	data      string // --data: the data directory
	json      bool   // --json: machine-readable output

	// ctrlC, when set, makes Ctrl-C cancel the context it returns; nil
	// (tests that call run) leaves the signal alone.
	ctrlC func(context.Context) (context.Context, context.CancelFunc)
}

// onCtrlC is ctx cancelled by Ctrl-C too, if the process asked for that.
func (e *env) onCtrlC(ctx context.Context) (context.Context, context.CancelFunc) {
	if e.ctrlC == nil {
		return ctx, func() {}
	}
	return e.ctrlC(ctx)
}

// subcommand is one verb of the CLI: one file each.
type subcommand interface {
	Run(ctx context.Context, args []string) error
	Usage() string
}

// usageError makes the process exit with 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

func (e *env) subcommands() map[string]subcommand {
	return map[string]subcommand{
		"serve":   &serveCommand{e},
		"repl":    &replCommand{e},
		"prog":    &progCommand{e},
		"run":     &runCommand{e},
		"stats":   &statsCommand{e},
		"import":  &importCommand{e},
		"export":  &exportCommand{e},
		"verify":  &verifyCommand{e},
		"version": &versionCommand{e},
		"demo":    &demoCommand{e},
		"stress":  &stressCommand{e},
		"help":    &helpCommand{e},
	}
}

// run parses the global flags, runs a verb and maps its error to an exit
// code: 0 success, 1 command error, 2 usage error.
func run(ctx context.Context, args []string, e *env) int {
	args, err := e.globalFlags(args)
	if err == nil {
		err = e.dispatch(ctx, args)
	}
	if err == nil {
		return 0
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(e.stderr, "cube: %s\n", ue.msg)
		return 2
	}
	fmt.Fprintf(e.stderr, "cube: %s\n", err)
	return 1
}

func (e *env) globalFlags(args []string) ([]string, error) {
	for len(args) > 0 {
		a := args[0]
		name, val, hasVal := strings.Cut(a, "=")
		take := func() (string, error) {
			if hasVal {
				args = args[1:]
				return val, nil
			}
			if len(args) < 2 {
				return "", usagef("%s needs a value", name)
			}
			v := args[1]
			args = args[2:]
			return v, nil
		}
		var err error
		switch name {
		case "-s", "--socket":
			e.socket, err = take()
		case "-n", "--namespace":
			e.namespace, err = take()
		case "--data", "-d":
			e.data, err = take()
		case "--json":
			e.json = true
			args = args[1:]
		case "-h", "--help":
			return []string{"help"}, nil
		default:
			return args, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return args, nil
}

func (e *env) dispatch(ctx context.Context, args []string) error {
	if len(args) == 0 {
		// The REPL decides what Ctrl-C does (replCommand.Run).
		return (&replCommand{e}).Run(ctx, nil)
	}
	verb := args[0]
	if verb != "repl" {
		var cancel context.CancelFunc
		ctx, cancel = e.onCtrlC(ctx)
		defer cancel()
	}
	if sc, ok := e.subcommands()[verb]; ok {
		if len(args) > 1 && (args[1] == "-h" || args[1] == "--help") {
			fmt.Fprint(e.stdout, sc.Usage())
			return nil
		}
		return sc.Run(ctx, args[1:])
	}
	if isServerVerb(verb) {
		return (&verbCommand{e}).Run(ctx, args)
	}
	return usagef("unknown command %q; run 'cube help'", verb)
}

// dataDir is --data, $CUBE_DATA or ./cube.data.
func (e *env) dataDir() string {
	if e.data != "" {
		return e.data
	}
	if d := e.getenv("CUBE_DATA"); d != "" {
		return d
	}
	return "cube.data"
}

// ns is -n, $CUBE_NAMESPACE, or an error naming the verb.
func (e *env) ns(verb string) (string, error) {
	if e.namespace != "" {
		return e.namespace, nil
	}
	if n := e.getenv("CUBE_NAMESPACE"); n != "" {
		return n, nil
	}
	return "", usagef("%s needs a namespace: cube -n NS %s ... (or set CUBE_NAMESPACE)", verb, verb)
}
