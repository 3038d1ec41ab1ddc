package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cubelinux/cube/server"
)

// statsCommand is "cube stats [-n NS] [--json]".
type statsCommand struct{ *env }

func statsCmd(e *env) *cobra.Command {
	c := &statsCommand{e}
	return &cobra.Command{
		Use:   "stats [-n NS] [--json]",
		Short: "The daemon's and the store's statistics",
		Long: `The daemon's and the store's statistics as tables: namespaces, commands
(calls, errors, latency in µs), log and fsyncs, programs. With -n NS, those
of one namespace and its programs (NS may also be the argument, as STATS
takes it; $CUBE_NAMESPACE is not read: without -n every namespace shows).
--json prints STATS's JSON: snake_case fields, each time with its unit in
its name (latency_p50_us, fsync_max_us, duration_ms, uptime_s), sizes in
_bytes.`,
		Example: `  cube stats
  cube stats -n world --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			names := args
			if e.namespace != "" {
				names = append([]string{e.namespace}, args...)
			}
			if len(names) > 1 {
				return usagef("stats shows one namespace, given with -n NS, not %s", strings.Join(names, " and "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ns := e.namespace
			if len(args) == 1 {
				ns = args[0]
			}
			return c.Run(cmd.Context(), ns)
		},
	}
}

func (c *statsCommand) Run(ctx context.Context, ns string) error {
	cl, done, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer done()
	cmd := []any{"STATS"}
	if ns != "" {
		cmd = append(cmd, ns)
	}
	js, err := cl.Do(ctx, cmd...).Text()
	if err != nil {
		return err
	}
	if c.json {
		fmt.Fprintln(c.stdout, js)
		return nil
	}
	if ns != "" {
		var v server.NamespaceReply
		if err := json.Unmarshal([]byte(js), &v); err != nil {
			return fmt.Errorf("stats: the daemon's STATS reply is not what this cube reads (%v); is the daemon another version?", err)
		}
		n := v.Namespace
		tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "namespace\t%s\n", n.Name)
		fmt.Fprintf(tw, "dims\t%d\n", n.Dims)
		fmt.Fprintf(tw, "curve\t%s\n", n.Curve)
		fmt.Fprintf(tw, "values\t%d (%s)\n", n.Values, sizeIEC(n.ValueBytes))
		fmt.Fprintf(tw, "edges\t%d\n", n.Edges)
		fmt.Fprintf(tw, "largest value allowed\t%s\n", sizeIEC(int64(n.MaxValueBytes)))
		fmt.Fprintf(tw, "last write\tlog record %d\n", n.LastLSN)
		tw.Flush()
		printProgs(c.stdout, v.Programs)
		return nil
	}
	var st server.Stats
	if err := json.Unmarshal([]byte(js), &st); err != nil {
		return fmt.Errorf("stats: the daemon's STATS reply is not what this cube reads (%v); is the daemon another version?", err)
	}
	w := c.stdout
	fmt.Fprintf(w, "daemon %s  pid %d  up %s  clients %d  commands %d (%d cancelled by their client)  heap %s\n\n",
		st.Server.Version, st.Server.PID, (time.Duration(st.Server.UptimeS) * time.Second).String(),
		st.Server.Clients, st.Server.CommandsProcessed, st.Server.Cancelled, sizeIEC(int64(st.Server.HeapBytes)))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "namespace\tdims\tcurve\tvalues\tvalue bytes\tedges\t")
	for _, n := range st.Store.Namespaces {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\t\n", n.Name, n.Dims, n.Curve, n.Values, n.ValueBytes, n.Edges)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nlog: sync mode %s, %d records durable, %s on disk, %d fsyncs (p50 %s, p99 %s, max %s), %d recent checkpoints\n",
		st.Store.SyncMode, st.Store.SyncedLSN, sizeIEC(st.Store.LogBytes), st.Store.Fsyncs,
		fmtUS(st.Store.FsyncP50US), fmtUS(st.Store.FsyncP99US), fmtUS(st.Store.FsyncMaxUS),
		len(st.Store.Checkpoints))
	if st.Store.Error != "" {
		fmt.Fprintf(w, "STORE FAILED (read-only): %s\n", st.Store.Error)
	}
	names := make([]string, 0, len(st.Commands))
	for n := range st.Commands {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "command\tcalls\terrors\tmean µs\tp50 µs\tp99 µs\tmax µs\t")
	for _, n := range names {
		s := st.Commands[n]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t\n", n, s.Calls, s.Errors, s.MeanUS, s.P50US, s.P99US, s.MaxUS)
	}
	tw.Flush()
	printProgs(w, st.Programs)
	return nil
}

// sizeIEC is n bytes for a person: "512 B", "1.5 KiB", "73.2 MiB".
func sizeIEC(n int64) string {
	const k = 1024
	if n < k {
		return fmt.Sprintf("%d B", n)
	}
	f, u := float64(n)/k, "KiB"
	for _, next := range []string{"MiB", "GiB", "TiB"} {
		if f < k {
			break
		}
		f, u = f/k, next
	}
	return fmt.Sprintf("%.1f %s", f, u)
}

// fmtUS is a time in microseconds for a person, in the unit that suits
// it: "850µs", "12.3ms", "1.2s".
func fmtUS(us float64) string {
	switch {
	case us < 1000:
		return fmt.Sprintf("%.0fµs", us)
	case us < 1e6:
		return fmt.Sprintf("%.1fms", us/1e3)
	}
	return fmt.Sprintf("%.2fs", us/1e6)
}

func printProgs(w io.Writer, ps []server.ProgramStats) {
	if len(ps) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "program\tkind\tversion\truns\terrors\tp50 µs\tp99 µs\tmax µs\t")
	for _, p := range ps {
		var errs int64
		for _, n := range p.Errors {
			errs += n
		}
		fmt.Fprintf(tw, "%s/%s\t%s\t%.12s\t%d\t%d\t%.1f\t%.1f\t%.1f\t\n", p.Namespace, p.Name, p.Kind, p.Version,
			p.Runs, errs, p.LatencyP50US, p.LatencyP99US, p.LatencyMaxUS)
	}
	tw.Flush()
}
