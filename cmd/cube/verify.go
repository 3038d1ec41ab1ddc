package main

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/spf13/cobra"

	"github.com/cubelinux/cube/engine"
)

// verifyCommand is "cube verify DIR".
type verifyCommand struct{ *env }

func verifyCmd(e *env) *cobra.Command {
	c := &verifyCommand{e}
	return &cobra.Command{
		Use: "verify DIR",

		Short: "Check a data directory: recovery, every value and edge",
		Long: `Opens the data directory the way the daemon does (recovery included: a torn
log tail is cut, as at any start), reports what recovery found, and reads
every value and edge back, checking the counts. Exits 1 on corruption,
naming the file and offset, and when DIR holds no store (it creates
nothing). The daemon must not be running on DIR. Without DIR, --data names it.`,
		Example: "  cube verify world.data",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && e.data != "" {
				return nil
			}
			return argCount(1, 1, "one DIR (or --data DIR)")(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := e.data
			if len(args) == 1 {
				dir = args[0]
			}
			return c.Run(cmd.Context(), dir)
		},
	}
}

func (c *verifyCommand) Run(ctx context.Context, dir string) error {
	db, err := c.openEngine(dir, engine.Options{Sync: engine.SyncAlways, CheckpointInterval: -1})
	if err != nil {
		var ce *engine.CorruptionError
		switch {
		case errors.Is(err, engine.ErrNoStore):
			return noStoreError(dir, "the path")
		case errors.As(err, &ce):
			return fmt.Errorf("verify: %s is damaged: %s at byte %d: %s (cube serve refuses it too; engine.Options.Repair cuts the damage out)", dir, ce.File, ce.Offset, ce.Reason)
		case errors.Is(err, engine.ErrLocked):
			return fmt.Errorf("verify: %s is in use (a daemon?); stop it first", dir)
		}
		return fmt.Errorf("verify: %w", err)
	}
	defer db.Close()
	st := db.Stats()
	fmt.Fprintf(c.stdout, "recovery: %s\n", st.Recovery.String())
	bad := 0
	for _, info := range db.Namespaces() {
		ns, err := db.Namespace(info.Name)
		if err != nil {
			return err
		}
		lo, hi := make([]int32, info.Dims), make([]int32, info.Dims)
		for i := range lo {
			lo[i], hi[i] = math.MinInt32, math.MaxInt32
		}
		seq, err := ns.Region(ctx, lo, hi, 0)
		if err != nil {
			return err
		}
		values, edges := 0, 0
		var bytes int64
		for coord, v := range seq {
			values++
			bytes += int64(len(v))
			es, err := ns.Edges(ctx, coord, engine.Out, "")
			if err != nil {
				return err
			}
			edges += len(es)
		}
		status := "ok"
		if values != info.Values || bytes != info.ValueBytes {
			status = fmt.Sprintf("MISMATCH: counted %d values (%d bytes), the index says %d (%d bytes)", values, bytes, info.Values, info.ValueBytes)
			bad++
		}
		fmt.Fprintf(c.stdout, "namespace %s: %d dims, %s, %d values, %d edges from valued coordinates (%d in all): %s\n",
			info.Name, info.Dims, info.Curve, values, edges, info.Edges, status)
	}
	if bad > 0 {
		return fmt.Errorf("verify: %d namespace(s) inconsistent", bad)
	}
	fmt.Fprintf(c.stdout, "%s: ok\n", dir)
	return nil
}
