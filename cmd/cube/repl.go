package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/repl"
)

// replCommand is "cube" with no arguments and "cube repl": the JavaScript
// REPL (package repl), on the embedded store or on a daemon.
type replCommand struct{ *env }

func replCmd(e *env) *cobra.Command {
	c := &replCommand{e}
	return &cobra.Command{
		Use:   "repl [-s SOCKET] [-n NS] [--data DIR]",
		Short: "The JavaScript REPL (also plain \"cube\")",
		Long: `The JavaScript REPL with the cube API that programs see. Without -s it opens
the data directory (--data, $CUBE_DATA or ./cube.data) in-process, making a
store there if there is none; with -s SOCKET (or $CUBE_SOCKET) it evaluates
on that daemon through EVAL, in a session of its own. .help inside lists the
dot-commands.

It starts in NS, or in the only namespace there is; without one plain
JavaScript runs and the cube API asks for one (.ns NAME picks it). On a
terminal Ctrl-C stops the running input (on a daemon its session starts over)
and Ctrl-D leaves. From a pipe every input runs; the exit status is 1 if any
failed, and each error names its input and line; Ctrl-C ends it with 1.`,
		Example: `  cube --data world.data -n world
  cube repl -s world.data/cube.sock
  echo 'cube.get([1, 2])' | cube -n world`,
		Args:        noArgs,
		Annotations: map[string]string{ownCtrlC: "the REPL"},
		RunE:        func(cmd *cobra.Command, args []string) error { return c.Run(cmd.Context()) },
	}
}

// Run runs the REPL until its input ends. It decides itself what Ctrl-C
// does: on a terminal it stops the running input, from a pipe it ends
// the REPL.
func (c *replCommand) Run(ctx context.Context) error {
	sock := c.socket
	if sock == "" {
		sock = c.getenv("CUBE_SOCKET")
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
	o := repl.Options{In: c.stdin, Out: c.stdout, Err: c.stderr, Namespace: c.namespace}
	if sock != "" {
		o.Socket = sock
		o.Auth = c.getenv("CUBE_AUTH")
		return replErr(parent, ctx, repl.Run(ctx, o))
	}
	dir := c.dataDir()
	// Interactive work is bounded by Ctrl-C, not by the 1 s default that
	// protects a daemon from runaway programs.
	db, err := c.openStore(dir, cube.Options{Limits: cube.Limits{Timeout: -1}}, mayCreate)
	if err != nil {
		if errors.Is(err, cube.ErrLocked) {
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
