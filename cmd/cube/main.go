// Command cube is cube's one binary: the daemon (cube serve), a client for
// every daemon command (cube -s SOCKET <verb> ...), the REPL, and tools
// (import, export, verify, stats, demo, stress). Run "cube help" for the
// list. The command tree is built with cobra (root.go); each verb is a
// file of its own.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/cubelinux/cube"
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
		// its parent, on its standard input and output. It bypasses the
		// command tree, so that no flag, environment variable or help
		// text can change what a daemon's worker does.
		if err := cube.ServeJSWorker(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "cube:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// SIGTERM ends every verb. Ctrl-C (SIGINT) ends every verb but the
	// REPL on a terminal, which catches it itself to stop the running input
	// and keep the session (see conventions in root.go).
	// go-redis logs its own failed dials ("redis: ... connection pool:
	// failed to dial after 5 attempts") before the error cube reports
	// with what to do: one message is enough.
	redis.SetLogger(silentRedis{})
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, ctrlC: func(ctx context.Context) (context.Context, context.CancelFunc) {
		return signal.NotifyContext(ctx, os.Interrupt)
	}}
	code := run(ctx, os.Args[1:], e)
	stop()
	os.Exit(code)
}

type silentRedis struct{}

func (silentRedis) Printf(context.Context, string, ...any) {}

// env is what a verb may touch of the process: its streams, its
// environment and the global flags.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string

	socket    string // -s: talk to this daemon
	namespace string // -n: the namespace of the verbs that need one
	data      string // --data: the data directory
	json      bool   // --json: machine-readable output
	keyFile   string // --key-file: the store's encryption key (keys.go)

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

// usageError makes the process exit with 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// run runs the command line args and maps its error to an exit code: 0
// success, 1 command error, 2 usage error. Either error is printed once,
// as "cube: ..."; a usage error of a verb adds the verb's usage line.
func run(ctx context.Context, args []string, e *env) int {
	if args == nil {
		args = []string{} // cobra reads os.Args when given nil
	}
	root := newRoot(e)
	root.SetArgs(args)
	var cmd *cobra.Command
	err := singleDashLong(root, args)
	if err == nil {
		cmd, err = root.ExecuteContextC(ctx)
	}
	if err == nil {
		return 0
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(e.stderr, "cube: %s\n", ue.msg)
		if cmd != nil && cmd != root {
			fmt.Fprintf(e.stderr, "usage: %s (more: %s -h)\n", cmd.UseLine(), cmd.CommandPath())
		}
		return 2
	}
	fmt.Fprintf(e.stderr, "cube: %s\n", err)
	return 1
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

// ns is -n, $CUBE_NAMESPACE, or an error that says how to give one.
func (e *env) ns(verb string) (string, error) {
	if e.namespace != "" {
		return e.namespace, nil
	}
	if n := e.getenv("CUBE_NAMESPACE"); n != "" {
		return n, nil
	}
	return "", noNamespace(verb)
}

func noNamespace(verb string) error {
	return usagef("%s needs a namespace: give it with -n NS (cube %s -n NS ...; cube ns.list lists them), or set CUBE_NAMESPACE", verb, verb)
}
