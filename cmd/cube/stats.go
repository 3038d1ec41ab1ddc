package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/cubelinux/cube/server"
)

// statsCommand: cube stats [--json] [NS].
type statsCommand struct{ *env }

func (c *statsCommand) Usage() string {
	return `usage: cube stats [--json] [NS]

The daemon's and the store's statistics as tables: namespaces, commands
(calls, errors, latency), log and fsyncs, programs. --json prints STATS's JSON.
`
}

func (c *statsCommand) Run(ctx context.Context, args []string) error {
	var ns string
	for _, a := range args {
		switch {
		case a == "--json":
			c.json = true
		case ns == "" && a[0] != '-':
			ns = a
		default:
			return usagef("stats: unexpected %q\n%s", a, c.Usage())
		}
	}
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
		var v struct {
			Namespace map[string]any `json:"namespace"`
			Programs  []progStat     `json:"programs"`
		}
		if err := json.Unmarshal([]byte(js), &v); err != nil {
			return err
		}
		tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		keys := make([]string, 0, len(v.Namespace))
		for k := range v.Namespace {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(tw, "%s\t%v\n", k, v.Namespace[k])
		}
		tw.Flush()
		printProgs(c.stdout, v.Programs)
		return nil
	}
	var st struct {
		Server   server.ServerStats            `json:"server"`
		Commands map[string]server.CommandStat `json:"commands"`
		Store    storeStats                    `json:"store"`
		Programs []progStat                    `json:"programs"`
	}
	if err := json.Unmarshal([]byte(js), &st); err != nil {
		return err
	}
	w := c.stdout
	fmt.Fprintf(w, "daemon %s  pid %d  up %s  clients %d  commands %d (%d cancelled by their client)  heap %.1f MiB\n\n",
		st.Server.Version, st.Server.PID, (time.Duration(st.Server.UptimeS) * time.Second).String(),
		st.Server.Clients, st.Server.CommandsProcessed, st.Server.Cancelled, float64(st.Server.HeapBytes)/(1<<20))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "namespace\tdims\tcurve\tvalues\tbytes\tedges\t")
	for _, n := range st.Store.Namespaces {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\t\n", n.Name, n.Dims, n.Curve, n.Values, n.ValueBytes, n.Edges)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nlog: sync %s, %d records durable, %d bytes, %d fsyncs (p50 %s, p99 %s, max %s), %d checkpoints\n",
		st.Store.Sync, st.Store.SyncedLSN, st.Store.LogBytes, st.Store.Syncs,
		time.Duration(st.Store.SyncLatency.P50), time.Duration(st.Store.SyncLatency.P99), time.Duration(st.Store.SyncLatency.Max),
		len(st.Store.Checkpoints))
	if st.Store.Err != "" {
		fmt.Fprintf(w, "STORE FAILED: %s\n", st.Store.Err)
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

type storeStats struct {
	Namespaces []struct {
		Name       string
		Dims       int
		Curve      string
		Values     int
		ValueBytes int64
		Edges      int
	}
	Sync        string
	SyncedLSN   uint64
	LogBytes    int64
	Syncs       int64
	SyncLatency struct{ Count, P50, P99, Max int64 }
	Checkpoints []any
	Err         string
}

type progStat struct {
	Namespace, Name, Kind, Version string
	ReadOnly                       bool
	CodeSize                       int
	Telemetry                      struct {
		Runs    int64
		Errors  map[string]int64
		Latency struct{ Count, P50, P99, Max int64 }
	}
}

func printProgs(w io.Writer, ps []progStat) {
	if len(ps) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "program\tkind\tversion\truns\terrors\tp50\tp99\tmax\t")
	for _, p := range ps {
		var errs int64
		for _, n := range p.Telemetry.Errors {
			errs += n
		}
		l := p.Telemetry.Latency
		fmt.Fprintf(tw, "%s/%s\t%s\t%.12s\t%d\t%d\t%s\t%s\t%s\t\n", p.Namespace, p.Name, p.Kind, p.Version,
			p.Telemetry.Runs, errs, time.Duration(l.P50), time.Duration(l.P99), time.Duration(l.Max))
	}
	tw.Flush()
}
