package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// progCommand: cube -n NS prog NAME FILE [RO] [TIMEOUT ms] [MEMORY mib].
type progCommand struct{ *env }

func (c *progCommand) Usage() string {
	return `usage: cube -n NS prog NAME FILE [RO] [TIMEOUT ms] [MEMORY mib]

Registers the program in FILE under NAME in namespace NS and prints its
version hash. The kind comes from the extension: .wasm or .js.
`
}

func (c *progCommand) Run(ctx context.Context, args []string) error {
	if len(args) < 2 {
		return usagef("prog needs NAME FILE\n%s", c.Usage())
	}
	ns, err := c.ns("prog")
	if err != nil {
		return err
	}
	var kind string
	switch strings.ToLower(filepath.Ext(args[1])) {
	case ".wasm":
		kind = "WASM"
	case ".js", ".mjs":
		kind = "JS"
	default:
		return usagef("prog: cannot tell the kind of %s: name it .wasm or .js", args[1])
	}
	code, err := os.ReadFile(args[1])
	if err != nil {
		return fmt.Errorf("prog: %w", err)
	}
	cmd := []string{"PROG", ns, args[0], kind, string(code)}
	cmd = append(cmd, args[2:]...)
	return (&verbCommand{c.env}).Run(ctx, cmd)
}
