package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
)

// runCommand is "cube run -n NS NAME [ARG]".
type runCommand struct{ *env }

func runCmd(e *env) *cobra.Command {
	c := &runCommand{e}
	return &cobra.Command{
		Use:   "run -n NS NAME [ARG]",
		Short: "Run a program and print its output",
		Long: `Runs the program NAME of namespace NS with ARG (bytes; "-" reads standard
input) and prints its output. What the program logged (cube.log, cube_log,
its standard output and error) goes to standard error, one line each,
before the output; when the run fails, the end of its log is in the error.
An ARG that starts with "-" goes after "--": cube run -n NS NAME -- -1,2.`,
		Example: `  cube run -n world nearby 2.35,48.85,0.1
  echo 2.35,48.85,0.1 | cube run -n world nearby -`,
		Args: withNamespace(e, argCount(1, 2, "NAME [ARG]")),
		RunE: func(cmd *cobra.Command, args []string) error { return c.Run(cmd.Context(), args) },
	}
}

func (c *runCommand) Run(ctx context.Context, args []string) error {
	ns, err := c.ns("run")
	if err != nil {
		return err
	}
	cmd := []any{"RUN.TYPED", ns, args[0]}
	if len(args) == 2 {
		arg := args[1]
		if arg == "-" {
			b, err := readAll(c.stdin)
			if err != nil {
				return err
			}
			arg = string(b)
		}
		cmd = append(cmd, arg)
	}
	cl, done, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer done()
	v, err := c.do(ctx, cl, cmd...)
	if err != nil && strings.Contains(strings.ToLower(err.Error()), "unknown command") {
		// A daemon older than RUN.TYPED: the program did not run; RUN
		// runs it, without its log.
		cmd[0] = "RUN"
		v, err = cl.Do(ctx, cmd...).Result()
		if errors.Is(err, redis.Nil) {
			v, err = nil, nil
		}
		if err != nil {
			return err
		}
		return c.printOutput(v)
	}
	if err != nil {
		return err
	}
	a, ok := v.([]any)
	if !ok || len(a) != 4 {
		return fmt.Errorf("run: unexpected reply from the daemon: %v", v)
	}
	logs, _ := a[3].([]any)
	for _, l := range logs {
		fmt.Fprintln(c.stderr, l)
	}
	return c.printOutput(a[2])
}

// printOutput prints the program's output: text with a newline after it
// (unless it ends with one), bytes that are not UTF-8 as they are, so
// that `cube run ... > file` keeps them intact.
func (c *runCommand) printOutput(v any) error {
	s, ok := v.(string)
	if !ok || c.json {
		return (&verbCommand{c.env}).print(v)
	}
	if !utf8.ValidString(s) {
		_, err := fmt.Fprint(c.stdout, s)
		return err
	}
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	_, err := fmt.Fprint(c.stdout, s)
	return err
}
