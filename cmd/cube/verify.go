package main

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/spf13/cobra"

	"github.com/cubelinux/cube"
)

// verifyCommand is "cube verify DIR".
type verifyCommand struct {
	*env
	repair bool
}

func verifyCmd(e *env) *cobra.Command {
	c := &verifyCommand{env: e}
	cmd := &cobra.Command{
		Use: "verify DIR",

		Short: "Check a data directory: recovery, every value and edge",
		Long: `Opens the data directory the way the daemon does (recovery included: a torn
log tail is cut, as at any start), reports what recovery found, and reads
every value and edge back, checking the counts. Exits 1 on corruption,
naming the file and offset, and when DIR holds no store (it creates
nothing). The daemon must not be running on DIR. Without DIR, --data names it.

Damage in the log (a flipped byte, a bad record before the tail) is
refused, naming the place; --repair cuts the log there instead, keeping a
copy of what it cut beside the log, and reports the writes lost with it.
Damage anywhere else (a checkpoint, the manifest) --repair cannot mend:
restore the directory from a backup.`,
		Example: "  cube verify world.data\n  cube verify --repair world.data",
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
	cmd.Flags().BoolVar(&c.repair, "repair", false, "cut damage in the log out (a copy is kept) instead of refusing the store")
	return cmd
}

func (c *verifyCommand) Run(ctx context.Context, dir string) error {
	db, err := c.openStoreOnly(dir, cube.Options{Sync: cube.SyncAlways, CheckpointInterval: -1, Repair: c.repair})
	if err != nil {
		var ce *cube.CorruptionError
		switch {
		case errors.Is(err, cube.ErrNoStore):
			return noStoreError(dir, "the path")
		case errors.As(err, &ce) && errors.Is(err, cube.ErrRepairable):
			return fmt.Errorf("verify: %s is damaged: %s at byte %d: %s (cube serve refuses it too; 'cube verify --repair %s' cuts the log there, keeping a copy, and loses the writes from there on)", dir, ce.File, ce.Offset, ce.Reason, dir)
		case errors.As(err, &ce):
			return fmt.Errorf("verify: %s is damaged: %s at byte %d: %s (cube serve refuses it too; it is not in the log, which is all --repair can cut: restore the data directory from a backup)", dir, ce.File, ce.Offset, ce.Reason)
		case errors.Is(err, cube.ErrLocked):
			return fmt.Errorf("verify: %s is in use (a daemon?); stop it first", dir)
		}
		return fmt.Errorf("verify: %w", err)
	}
	defer db.Close()
	st := db.StoreInfo()
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
			es, err := ns.Edges(ctx, coord, cube.Out, "")
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
