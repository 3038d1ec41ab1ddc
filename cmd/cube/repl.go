package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"golang.org/x/term"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/repl"
	"github.com/cubelinux/cube/vm"
)

// replCommand is "cube" with no arguments and "cube repl": the JavaScript
// REPL (package repl), on the embedded store or on a daemon.
type replCommand struct{ *env }

func (c *replCommand) Usage() string {
	return `usage: cube [repl] [-s SOCKET] [-n NS] [--data DIR]

The JavaScript REPL with the cube API that programs see. Without -s it opens
the data directory (--data, $CUBE_DATA or ./cube.data) in-process; with -s
SOCKET (or $CUBE_SOCKET) it evaluates on that daemon through EVAL, in a session
of its own. .help inside lists the dot-commands.

It starts in NS, or in the only namespace there is; without one plain
JavaScript runs and the cube API asks for one (.ns NAME picks it). On a
terminal Ctrl-C stops the running input (on a daemon its session starts over)
and Ctrl-D leaves. From a pipe every input runs; the exit status is 1 if any
failed, and each error names its input and line; Ctrl-C ends it with 1.
`
}

func (c *replCommand) Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("repl", flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.Usage = func() { fmt.Fprint(c.stderr, c.Usage()) }
	sock := fs.String("s", c.socket, "daemon socket")
	ns := fs.String("n", c.namespace, "namespace to start in")
	if err := fs.Parse(args); err != nil {
		return usagef("repl: %v", err)
	}
	if *sock == "" {
		*sock = c.getenv("CUBE_SOCKET")
	}
	parent := ctx
	if f, ok := c.stdin.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
		// A script (piped input) ends at Ctrl-C like any verb; on a
		// terminal the REPL catches Ctrl-C itself: it stops the running
		// input and the session goes on.
		var cancel context.CancelFunc
		ctx, cancel = c.onCtrlC(ctx)
		defer cancel()
	}
	o := repl.Options{In: c.stdin, Out: c.stdout, Err: c.stderr, Namespace: *ns}
	if *sock != "" {
		o.Socket = *sock
		o.Auth = c.getenv("CUBE_AUTH")
		return replErr(parent, ctx, repl.Run(ctx, o))
	}
	dir := c.dataDir()
	// Interactive work is bounded by Ctrl-C, not by the 1 s default that
	// protects a daemon from runaway programs.
	db, err := c.openStore(dir, cube.Options{Limits: vm.Limits{Timeout: -1}}, true)
	if err != nil {
		if errors.Is(err, engine.ErrLocked) {
			return fmt.Errorf("repl: %s is in use by another process; if a daemon serves it, use cube repl -s %s/cube.sock", dir, dir)
		}
		return fmt.Errorf("repl: open %s: %w", dir, err)
	}
	o.DB = db
	err = repl.Run(ctx, o)
	if cerr := db.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return replErr(parent, ctx, err)
}

// replErr is the REPL's outcome: ended by SIGTERM is no failure; a script
// stopped by Ctrl-C is, so that whoever ran it does not take it for
// done.
func replErr(parent, ctx context.Context, err error) error {
	if errors.Is(err, context.Canceled) {
		if ctx.Err() != nil && parent.Err() == nil {
			return errors.New("repl: stopped by Ctrl-C before the end of its input")
		}
		return nil
	}
	return err
}
