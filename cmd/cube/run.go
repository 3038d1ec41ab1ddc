package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"
)

// runCommand: cube -n NS run NAME [ARG].
type runCommand struct{ *env }

func (c *runCommand) Usage() string {
	return `usage: cube -n NS run NAME [ARG]

Runs the program NAME of namespace NS with ARG (bytes; "-" reads standard
input) and prints its output. What the program logged (cube.log, cube_log,
its standard output and error) goes to standard error, one line each,
before the output; when the run fails, the end of its log is in the error.
`
}

func (c *runCommand) Run(ctx context.Context, args []string) error {
	if len(args) < 1 || len(args) > 2 {
		return usagef("run needs NAME [ARG]\n%s", c.Usage())
	}
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
	v, err := cl.Do(ctx, cmd...).Result()
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
