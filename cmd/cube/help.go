package main

import (
	"context"
	"fmt"
)

type helpCommand struct{ *env }

func (c *helpCommand) Usage() string {
	return `usage: cube [-s SOCKET] [-n NS] [--data DIR] [--json] <command> [args]

  cube                      the JavaScript REPL on the embedded store ($CUBE_DATA or ./cube.data)
  cube repl [-s SOCKET]     the REPL, embedded or on a daemon
  cube serve [flags]        run the daemon (cube serve --help)
  cube demo                 load the world's cities, query regions, walk roads, time it
  cube <daemon command>     any daemon command: put, get, del, region, link, walk, path,
                            ns.create, ns.list, ... (cube help commands lists them)
  cube -n NS prog NAME FILE register a program (.wasm or .js)
  cube -n NS run NAME [ARG] run it and print its output
  cube stats [--json] [NS]  statistics as a table
  cube -n NS import FILE    load CSV (c1,...,cd,value) or JSON lines ({"c":[...],"v":...})
  cube -n NS export         print every value as JSON lines
  cube verify DIR           open a data directory, check it, report what recovery found
  cube stress [flags]       load test the daemon (cube stress --help)
  cube version

Verbs talk to the daemon at -s SOCKET (or $CUBE_SOCKET). Without one they use
the daemon at DIR/cube.sock if it runs, else open DIR themselves.
-n NS (or $CUBE_NAMESPACE) names the namespace for prog, run, import, export.
Exit status: 0 success, 1 command failed, 2 usage error.
`
}

func (c *helpCommand) Run(ctx context.Context, args []string) error {
	if len(args) == 1 && args[0] == "commands" {
		fmt.Fprint(c.stdout, (&verbCommand{c.env}).Usage())
		return nil
	}
	if len(args) == 1 {
		if sc, ok := c.subcommands()[args[0]]; ok {
			fmt.Fprint(c.stdout, sc.Usage())
			return nil
		}
	}
	fmt.Fprint(c.stdout, c.Usage())
	return nil
}
