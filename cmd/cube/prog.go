package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// progCommand is "cube prog -n NS NAME FILE [RO] [TIMEOUT ms] [MEMORY mib]".
type progCommand struct{ *env }

func progCmd(e *env) *cobra.Command {
	c := &progCommand{e}
	return &cobra.Command{
		Use:   "prog -n NS NAME FILE [RO] [TIMEOUT ms] [MEMORY mib]",
		Short: "Register a program (.wasm or .js) in a namespace",
		Long: `Registers the program in FILE under NAME in namespace NS and prints its
version hash. The kind comes from the extension: .wasm or .js. RO makes it
read-only; TIMEOUT and MEMORY set the limits of each of its runs.`,
		Example: `  cube prog -n world nearby nearby.js
  cube prog -n world walk walk.wasm RO TIMEOUT 5000 MEMORY 128`,
		Args: withNamespace(e, argCount(2, -1, "NAME FILE")),
		RunE: func(cmd *cobra.Command, args []string) error { return c.Run(cmd.Context(), args) },
	}
}

func (c *progCommand) Run(ctx context.Context, args []string) error {
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
