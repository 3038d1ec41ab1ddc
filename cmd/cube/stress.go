package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/server"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
)

// stressCommand is "cube stress [--duration D] [--clients N] [-s SOCKET | --embedded]".
type stressCommand struct {
	*env
	dur                        time.Duration
	writes, sameCode, embedded bool
	clients                    int
}

func stressCmd(e *env) *cobra.Command {
	c := &stressCommand{env: e}
	cmd := &cobra.Command{
		Use:   "stress [--duration D] [--clients N] [--same-code] [--writes] [-s SOCKET | --embedded [--data DIR]] [--json]",
		Short: "Load test the daemon and report latencies",
		Long: `Drives the daemon with the ancestor's gate mix: each client registers a
program (PROG) and runs it (RUN) in a loop, and asks for STATS every 100
pairs. Each PROG sends new code (a counter in its text), so the daemon
compiles it and writes the registration durably every time; with
--same-code every PROG sends the same code, and all but a client's first
are a hash compare that compiles and writes nothing. The program reads
(RO); with --writes it also writes, and each run then waits for its log
sync. Prints the code mode, commands serviced, pairs/s, how many PROGs
registered a new version, per-command latency (mean, p50, p99, max)
measured by the clients and by the daemon, errors, and the daemon's heap
after warm-up and at the end. --embedded serves a fresh store from this
process, in a temporary directory unless --data (a --data without a store
gets a new one, and cube says so). Exits 1 if any command failed.`,
		Example: `  cube stress -s world.data/cube.sock --duration 30s --clients 16
  cube stress --embedded --duration 5s --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return c.Run(cmd.Context()) },
	}
	f := cmd.Flags()
	f.DurationVar(&c.dur, "duration", 10*time.Second, "how long to run")
	f.BoolVar(&c.writes, "writes", false, "programs write (each run then waits for a log sync)")
	f.BoolVar(&c.sameCode, "same-code", false, "send identical code with every PROG (after a client's first, a hash compare)")
	f.IntVar(&c.clients, "clients", 8, "concurrent clients")
	f.BoolVar(&c.embedded, "embedded", false, "serve a fresh store from this process (in --data DIR, else a temporary one)")
	return cmd
}

type stressReport struct {
	Duration    float64                       `json:"duration_s"`
	Clients     int                           `json:"clients"`
	Mode        string                        `json:"mode"`
	NewVersions int64                         `json:"prog_new_versions"`
	Commands    int64                         `json:"commands"`
	Pairs       int64                         `json:"pairs"`
	PairsPerSec float64                       `json:"pairs_per_s"`
	Errors      int64                         `json:"errors"`
	FirstError  string                        `json:"first_error,omitempty"`
	Client      map[string]latencyStat        `json:"client"`
	Server      map[string]server.CommandStat `json:"server"`
	HeapWarm    uint64                        `json:"heap_after_warmup_bytes"`
	HeapEnd     uint64                        `json:"heap_end_bytes"`
	HeapGrowth  float64                       `json:"heap_growth_pct"`
}

// The report's mode: what each PROG of the run cost the daemon.
const (
	modeDistinct = "distinct code per PROG: each PROG compiles and writes"
	modeSame     = "identical code: PROG after the first is a hash compare"
)

type latencyStat struct {
	Calls  int64   `json:"calls"`
	MeanUS float64 `json:"mean_us"`
	P50US  float64 `json:"p50_us"`
	P99US  float64 `json:"p99_us"`
	MaxUS  float64 `json:"max_us"`
}

func (c *stressCommand) Run(ctx context.Context) error {
	sock, data := c.socket, c.data
	if c.clients < 1 || c.dur <= 0 {
		return usagef("stress: --clients and --duration must be positive")
	}
	if c.embedded == (sock != "") {
		return usagef("stress: give exactly one of -s SOCKET and --embedded")
	}
	var srv *server.Server
	if c.embedded {
		dir := data
		if dir == "" {
			tmp, err := os.MkdirTemp("", "cube-stress-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(tmp)
			dir = filepath.Join(tmp, "data")
		}
		use := mayCreate
		if data == "" {
			use = scratch
		}
		db, err := c.openStore(dir, cube.Options{}, use)
		if err != nil {
			return fmt.Errorf("stress: %w", err)
		}
		defer db.Close()
		sdir, err := os.MkdirTemp("", "cube-stress-sock-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(sdir)
		sock = filepath.Join(sdir, "cube.sock")
		srv, err = server.New(db, server.Options{Socket: sock, Version: version()})
		if err != nil {
			return fmt.Errorf("stress: %w", err)
		}
		sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		served := make(chan error, 1)
		go func() { served <- srv.Serve(sctx) }()
		defer func() { cancel(); <-served }()
	}

	ctl := newClient(sock)
	defer ctl.Close()
	if err := ctl.Do(ctx, "NS.CREATE", "stress", "DIMS", 2).Err(); err != nil && !strings.HasPrefix(err.Error(), "EXISTS") {
		return fmt.Errorf("stress: %w", err)
	}
	heap := func() uint64 {
		if srv != nil {
			runtime.GC()
		}
		js, err := ctl.Do(ctx, "STATS").Text()
		if err != nil {
			return 0
		}
		var st server.Stats
		json.Unmarshal([]byte(js), &st)
		return st.Server.HeapBytes
	}
	before := map[string]server.CommandStat{}
	if js, err := ctl.Do(ctx, "STATS").Text(); err == nil {
		var st server.Stats
		json.Unmarshal([]byte(js), &st)
		before = st.Commands
	}

	type clientStats struct {
		hist  map[string]*hdrhistogram.Histogram
		nanos map[string]int64
	}
	var (
		commands, pairs, errCount atomic.Int64
		newVersions               atomic.Int64
		firstErr                  atomic.Value
		wg                        sync.WaitGroup
		per                       = make([]clientStats, c.clients)
	)
	runCtx, stop := context.WithTimeout(ctx, c.dur)
	defer stop()
	start := time.Now()
	for i := range c.clients {
		per[i] = clientStats{hist: map[string]*hdrhistogram.Histogram{}, nanos: map[string]int64{}}
		wg.Go(func() {
			cs := per[i]
			cl := newClient(sock)
			defer cl.Close()
			name := "p" + strconv.Itoa(i)
			code := fmt.Sprintf(`function run(a) { return cube.get([%d, 0]) + ":" + a }`, i)
			opt := []any{"RO"}
			if c.writes {
				code = fmt.Sprintf(`function run(a) { const c = [%d, +a %% 1000]; cube.put(c, a); return cube.get(c) }`, i)
				opt = nil
			}
			if err := cl.Do(ctx, "PUT", "stress", i, 0, "v"+strconv.Itoa(i)).Err(); err != nil {
				errCount.Add(1)
				firstErr.CompareAndSwap(nil, "setup: "+err.Error())
				return
			}
			do := func(kind string, a ...any) *redis.Cmd {
				t0 := time.Now()
				cmd := cl.Do(context.WithoutCancel(runCtx), a...)
				err := cmd.Err()
				d := time.Since(t0)
				commands.Add(1)
				if err != nil && !errors.Is(err, redis.Nil) {
					errCount.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Sprintf("%s: %v", kind, err))
				}
				h := cs.hist[kind]
				if h == nil {
					h = hdrhistogram.New(1, int64(time.Minute), 2)
					cs.hist[kind] = h
				}
				h.RecordValue(max(int64(d), 1))
				cs.nanos[kind] += int64(d)
				return cmd
			}
			var version string
			for n := 0; runCtx.Err() == nil; n++ {
				src := code
				if !c.sameCode {
					// A counter in the text: a new version to compile and log.
					src = fmt.Sprintf("const generation = %d\n%s", n, code)
				}
				if v, err := do("prog", append([]any{"PROG", "stress", name, "JS", src}, opt...)...).Text(); err == nil && v != version {
					newVersions.Add(1)
					version = v
				}
				do("run", "RUN", "stress", name, strconv.Itoa(n))
				pairs.Add(1)
				if n%100 == 99 {
					do("stats", "STATS")
				}
			}
		})
	}
	var heapWarm uint64
	warmed := make(chan struct{})
	warm := time.AfterFunc(c.dur/10, func() { heapWarm = heap(); close(warmed) })
	wg.Wait()
	if !warm.Stop() {
		<-warmed // it ran: its STATS may still be on the way
	}
	elapsed := time.Since(start)
	rep := stressReport{
		Duration: elapsed.Seconds(), Clients: c.clients, Mode: modeDistinct, NewVersions: newVersions.Load(),
		Commands: commands.Load(), Pairs: pairs.Load(),
		PairsPerSec: float64(pairs.Load()) / elapsed.Seconds(), Errors: errCount.Load(),
		Client: map[string]latencyStat{}, Server: map[string]server.CommandStat{},
		HeapWarm: heapWarm, HeapEnd: heap(),
	}
	if c.sameCode {
		rep.Mode = modeSame
	}
	if v := firstErr.Load(); v != nil {
		rep.FirstError = v.(string)
	}
	if rep.HeapWarm > 0 {
		rep.HeapGrowth = 100 * (float64(rep.HeapEnd) - float64(rep.HeapWarm)) / float64(rep.HeapWarm)
	}
	for _, kind := range []string{"prog", "run", "stats"} {
		h := hdrhistogram.New(1, int64(time.Minute), 2)
		var nanos int64
		for _, cs := range per {
			if ch := cs.hist[kind]; ch != nil {
				h.Merge(ch)
				nanos += cs.nanos[kind]
			}
		}
		if n := h.TotalCount(); n > 0 {
			rep.Client[kind] = latencyStat{Calls: n, MeanUS: float64(nanos) / float64(n) / 1e3,
				P50US: float64(h.ValueAtQuantile(50)) / 1e3, P99US: float64(h.ValueAtQuantile(99)) / 1e3, MaxUS: float64(h.Max()) / 1e3}
		}
	}
	if js, err := ctl.Do(ctx, "STATS").Text(); err == nil {
		var st server.Stats
		json.Unmarshal([]byte(js), &st)
		for _, kind := range []string{"prog", "run", "stats"} {
			s := st.Commands[kind]
			s.Calls -= before[kind].Calls
			s.Errors -= before[kind].Errors
			rep.Server[kind] = s
		}
	}
	if c.json {
		b, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintln(c.stdout, string(b))
	} else {
		c.print(rep, srv == nil)
	}
	if rep.Errors > 0 {
		return fmt.Errorf("stress: %d commands failed; first: %s", rep.Errors, rep.FirstError)
	}
	return nil
}

func (c *stressCommand) print(r stressReport, sinceStart bool) {
	w := c.stdout
	fmt.Fprintf(w, "cube stress: %d clients for %.1fs, %s\n", r.Clients, r.Duration, r.Mode)
	fmt.Fprintf(w, "commands serviced: %d   prog+run pairs: %d   pairs/s: %.0f   errors: %d\n", r.Commands, r.Pairs, r.PairsPerSec, r.Errors)
	fmt.Fprintf(w, "PROGs that registered a new version: %d of %d\n", r.NewVersions, r.Client["prog"].Calls)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "command\tside\tcalls\tmean µs\tp50 µs\tp99 µs\tmax µs\t")
	kinds := []string{"prog", "run", "stats"}
	sort.Strings(kinds)
	for _, k := range kinds {
		if l, ok := r.Client[k]; ok {
			fmt.Fprintf(tw, "%s\tclient\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t\n", k, l.Calls, l.MeanUS, l.P50US, l.P99US, l.MaxUS)
		}
		if s, ok := r.Server[k]; ok && s.Calls > 0 {
			fmt.Fprintf(tw, "%s\tserver\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t\n", k, s.Calls, s.MeanUS, s.P50US, s.P99US, s.MaxUS)
		}
	}
	tw.Flush()
	if sinceStart {
		fmt.Fprintln(w, "(server percentiles cover the daemon's whole life; its means and calls cover this run)")
	}
	fmt.Fprintf(w, "daemon heap: %.1f MiB after warm-up, %.1f MiB at the end (%+.1f%%)\n",
		float64(r.HeapWarm)/(1<<20), float64(r.HeapEnd)/(1<<20), r.HeapGrowth)
	if r.FirstError != "" {
		fmt.Fprintf(w, "first error: %s\n", r.FirstError)
	}
}
