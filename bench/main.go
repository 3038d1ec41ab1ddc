// Command bench loads the same seeded data into cube and its peers
// (bbolt, Pebble, SQLite with R*Tree, Redis GEO), asks each the same
// queries, checks every answer against a brute-force reference, and
// writes a markdown table and plots to -out.
//
//	go run . -out results            # the full size (task bench:peers)
//	go run . -points 20000 -out /tmp/b  # a smoke run
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
)

func main() {
	cfg, out, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	if cfg.cpuProfile != "" {
		f, err := os.Create(cfg.cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	if err := runAndReport(context.Background(), cfg, out); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (config, string, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	cfg := config{log: os.Stderr}
	fs.Uint64Var(&cfg.seed, "seed", 1, "seed of the data and the queries")
	world := fs.Int("world", 1024, "coordinates are in [0,world) on every axis")
	fs.IntVar(&cfg.points, "points", 1_000_000, "3-D points in [0,world)^3")
	fs.IntVar(&cfg.flat, "flat", 250_000, "2-D points in [0,world)^2 (for Redis GEO and cube's 2-D namespace)")
	fs.IntVar(&cfg.nodes, "nodes", 100_000, "graph nodes (the first points), 8 out-edges each")
	fs.IntVar(&cfg.queries, "queries", 100, "queries of each kind per repetition")
	fs.IntVar(&cfg.gets, "gets", 10_000, "point gets per repetition")
	fs.IntVar(&cfg.reps, "reps", 3, "repetitions (the table shows their median and range)")
	fs.IntVar(&cfg.k, "k", 10, "k of the nearest-neighbour queries")
	fs.IntVar(&cfg.hops, "hops", 3, "depth of the walks")
	fs.IntVar(&cfg.maxHops, "maxhops", 4, "bound on the paths' edges")
	sides := fs.String("sides", "16,32,64,128", "box sides")
	radii := fs.String("radii", "32", "radii of the 3-D radius queries")
	flatR := fs.String("flat-radii", "16,64", "radii of the 2-D radius queries")
	stores := fs.String("stores", "cube,bbolt,pebble,sqlite,redis", "stores to measure")
	out := fs.String("out", "results", "directory for the table and plots")
	fs.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
	tmp := fs.String("dir", "", "directory for the stores' files (default: a new temporary one)")
	if err := fs.Parse(args); err != nil {
		return cfg, "", err
	}
	if *world < 2 || *world > 1<<20 {
		return cfg, "", fmt.Errorf("bad world %d", *world)
	}
	cfg.world = int32(*world)
	if int64(cfg.points) > int64(cfg.world)*int64(cfg.world)*int64(cfg.world)/2 || int64(cfg.flat) > int64(cfg.world)*int64(cfg.world)/2 {
		return cfg, "", fmt.Errorf("too many points for a world of side %d", cfg.world)
	}
	for _, s := range strings.Split(*sides, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v < 1 || v > int(cfg.world) {
			return cfg, "", fmt.Errorf("bad side %q", s)
		}
		cfg.sides = append(cfg.sides, int32(v))
	}
	for _, l := range []struct {
		s   string
		dst *[]float64
	}{{*radii, &cfg.radii}, {*flatR, &cfg.flatR}} {
		for _, s := range strings.Split(l.s, ",") {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || v < 0 {
				return cfg, "", fmt.Errorf("bad radius %q", s)
			}
			*l.dst = append(*l.dst, v)
		}
	}
	cfg.stores = strings.Split(*stores, ",")
	cfg.dir = *tmp
	return cfg, *out, nil
}

func runAndReport(ctx context.Context, cfg config, out string) error {
	if cfg.dir == "" {
		dir, err := os.MkdirTemp("", "cube-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cfg.dir = dir
	}
	res, err := run(ctx, cfg)
	if err != nil {
		return err
	}
	return writeReport(res, out)
}

// newStore makes the named store in dir; nil (no error) when it cannot
// run here (Redis without redis-server).
func newStore(name, dir string) (store, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "cube":
		return newCube(dir), nil
	case "bbolt", "bolt":
		return &boltStore{dir: dir}, nil
	case "pebble":
		return &pebbleStore{dir: dir}, nil
	case "sqlite":
		if s := newSQLite(dir); s != nil {
			return s, nil
		}
		return nil, nil
	case "redis":
		if !redisAvailable() {
			return nil, nil
		}
		return &redisStore{dir: dir}, nil
	}
	return nil, fmt.Errorf("unknown store %q", name)
}
