package main

import "context"

// runCommand: cube -n NS run NAME [ARG].
type runCommand struct{ *env }

func (c *runCommand) Usage() string {
	return `usage: cube -n NS run NAME [ARG]

Runs the program NAME of namespace NS with ARG (bytes; "-" reads standard
input) and prints its output.
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
	cmd := []string{"RUN", ns, args[0]}
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
	return (&verbCommand{c.env}).Run(ctx, cmd)
}
