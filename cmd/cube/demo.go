package main

import "context"

type demoCommand struct{ *env }

func (c *demoCommand) Usage() string { return "usage: cube demo\n" }

func (c *demoCommand) Run(ctx context.Context, args []string) error {
	return usagef("demo: not written yet")
}
