package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"
)

// config sizes one run.
type config struct {
	seed    uint64
	world   int32 // coordinates are in [0, world) on every axis
	points  int   // 3-D points
	flat    int   // 2-D points
	nodes   int   // graph nodes
	queries int   // queries of each kind per repetition
	gets    int   // point gets per repetition
	reps    int   // repetitions; the table shows their median and range
	sides   []int32
	radii   []float64 // 3-D radius queries
	flatR   []float64 // 2-D radius queries
	k       int
	hops    int // walk depth
	maxHops int // path bound
	stores  []string
	dir     string    // where the stores live (a temporary directory)
	log     io.Writer // progress

	cpuProfile string // -cpuprofile: where main writes the run's CPU profile
}

// workload is one row of the table: a kind of query with its parameter.
type workload struct {
	id      string // stable name, used in the table and plots
	label   string
	side    int32 // box side, for the plot against side; 0 otherwise
	perOp   int   // operations per query, when a query is a group (gets)
	queries []query
	// run asks the store one query; false if the store has no such query.
	run func(ctx context.Context, s store, q *query) (handled bool, err error)
}

type query struct {
	lo, hi point
	c      point
	r      float64
	from   int32
	to     int32
	ref    answer
	refNN  []int64
	refW   walkAnswer
	refPW  float64
	refOK  bool
	result int // what the store returned, for the plot against count
}

// timing is one store's measurement of one workload.
type timing struct {
	medians []time.Duration // per repetition: the median query
	samples []sample        // the last repetition's queries
	results float64         // mean results per query
}

type sample struct {
	d time.Duration
	n int
}

// result is a whole run: per workload, per store.
type result struct {
	cfg       config
	workloads []*workload
	stores    []string
	t         map[string]map[string]*timing
	loads     map[string]time.Duration
	phases    map[string]string // a store's load, part by part
	started   time.Time
	elapsed   time.Duration
}

func (r *result) add(w, s string, t *timing) {
	if r.t[w] == nil {
		r.t[w] = map[string]*timing{}
	}
	r.t[w][s] = t
}

func logf(cfg config, format string, args ...any) {
	if cfg.log != nil {
		fmt.Fprintf(cfg.log, format+"\n", args...)
	}
}

// run builds the data once, loads each store in turn, asks it every
// query it supports, checks every answer against the references, and
// closes it before the next store loads.
func run(ctx context.Context, cfg config) (*result, error) {
	res := &result{cfg: cfg, t: map[string]map[string]*timing{}, loads: map[string]time.Duration{}, phases: map[string]string{}, started: time.Now()}
	t0 := time.Now()
	d := makeDataset(cfg.seed, cfg.world, cfg.points, cfg.flat, cfg.nodes)
	res.workloads = workloads(cfg, d)
	logf(cfg, "data and references: %v", time.Since(t0).Round(time.Millisecond))
	for _, name := range cfg.stores {
		dir := filepath.Join(cfg.dir, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		s, err := newStore(name, dir)
		if err != nil {
			return nil, err
		}
		if s == nil {
			logf(cfg, "%s: skipped (not available here)", name)
			continue
		}
		res.stores = append(res.stores, s.name())
		err = measureStore(ctx, cfg, d, s, res)
		if cerr := s.close(); err == nil {
			err = cerr
		}
		os.RemoveAll(dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name(), err)
		}
	}
	res.elapsed = time.Since(res.started)
	return res, nil
}

func measureStore(ctx context.Context, cfg config, d *dataset, s store, res *result) error {
	t0 := time.Now()
	if err := s.load(ctx, d); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	res.loads[s.name()] = time.Since(t0)
	// At rest: collect the load's garbage before measuring, for every
	// store alike. Otherwise the queries run while the heap grows to the
	// collector's next goal, each allocation on pages never touched
	// (a 47 KiB walk answer cost 12 page faults, ~150 us on this machine).
	runtime.GC()
	logf(cfg, "%s: loaded in %v", s.name(), res.loads[s.name()].Round(time.Millisecond))
	if p, ok := s.(interface{ loadPhases() string }); ok {
		res.phases[s.name()] = p.loadPhases()
		logf(cfg, "%s: load:%s", s.name(), p.loadPhases())
	}
	for _, w := range res.workloads {
		t := &timing{}
		for rep := range cfg.reps {
			lat := make([]time.Duration, 0, len(w.queries))
			total := 0
			for i := range w.queries {
				q := &w.queries[i]
				start := time.Now()
				ok, err := w.run(ctx, s, q)
				el := time.Since(start)
				if w.perOp > 1 {
					el /= time.Duration(w.perOp)
				}
				if err != nil {
					return fmt.Errorf("%s, query %d: %w", w.label, i, err)
				}
				if !ok {
					break
				}
				lat = append(lat, el)
				total += q.result
				if rep == cfg.reps-1 {
					t.samples = append(t.samples, sample{el, q.result})
				}
			}
			if len(lat) == 0 {
				t = nil
				break
			}
			t.medians = append(t.medians, median(lat))
			t.results = float64(total) / float64(len(lat))
		}
		if t != nil {
			res.add(w.id, s.name(), t)
			logf(cfg, "%s: %s: %v (%.0f results)", s.name(), w.label, median(t.medians), t.results)
		}
	}
	return nil
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// mismatch is a wrong answer: the run stops on it.
func mismatch(w string, q *query, format string, args ...any) error {
	return fmt.Errorf("WRONG ANSWER: %s at %v/%v c=%v r=%v from=%d to=%d: %s", w, q.lo, q.hi, q.c, q.r, q.from, q.to, fmt.Sprintf(format, args...))
}

// workloads draws the queries (from their own seed, so that every store
// gets the same ones) and computes their references by brute force.
func workloads(cfg config, d *dataset) []*workload {
	r := rand.New(rand.NewPCG(cfg.seed+1, 7))
	world := cfg.world
	anyPoint := func() point { return point{r.Int32N(world), r.Int32N(world), r.Int32N(world)} }
	var ws []*workload
	for _, side := range cfg.sides {
		w := &workload{id: fmt.Sprintf("box%d", side), label: fmt.Sprintf("box side %d", side), side: side}
		for range cfg.queries {
			lo := point{r.Int32N(world - side + 1), r.Int32N(world - side + 1), r.Int32N(world - side + 1)}
			hi := point{lo[0] + side - 1, lo[1] + side - 1, lo[2] + side - 1}
			w.queries = append(w.queries, query{lo: lo, hi: hi, ref: refBox(d.pts, lo, hi)})
		}
		w.run = func(ctx context.Context, s store, q *query) (bool, error) {
			b, ok := s.(boxer)
			if !ok {
				return false, nil
			}
			var a answer
			if err := b.box(ctx, q.lo, q.hi, &a); err != nil {
				return true, err
			}
			q.result = a.n
			if !a.matches(q.ref) {
				return true, mismatch(w.label, q, "%d points (%d bad values), want %d", a.n, a.bad, q.ref.n)
			}
			return true, nil
		}
		ws = append(ws, w)
	}
	{
		// Point gets, timed in groups: one query is cfg.gets/100 gets, so
		// that the clock's cost stays out of a 1 µs read.
		w := &workload{id: "get", label: "point get"}
		per := max(1, cfg.gets/100)
		for range cfg.gets / per {
			q := query{from: int32(r.IntN(len(d.pts)))}
			w.queries = append(w.queries, q)
		}
		w.run = func(ctx context.Context, s store, q *query) (bool, error) {
			g, ok := s.(getter)
			if !ok {
				return false, nil
			}
			var a answer
			for i := range per {
				if err := g.get(ctx, d.pts[(int(q.from)+i*7919)%len(d.pts)], &a); err != nil {
					return true, err
				}
			}
			if a.n != per || a.bad != 0 {
				return true, mismatch(w.label, q, "%d values, %d bad", a.n, a.bad)
			}
			q.result = 1
			return true, nil
		}
		w.label = fmt.Sprintf("point get (per get, %d a sample)", per)
		w.perOp = per
		ws = append(ws, w)
	}
	nearest := func(id, label string, pts []point, flat bool) {
		w := &workload{id: id, label: label}
		for range cfg.queries {
			c := anyPoint()
			if flat {
				c[2] = 0
			}
			w.queries = append(w.queries, query{c: c, refNN: refNearest(pts, c, cfg.k)})
		}
		out := make([]point, 0, cfg.k)
		w.run = func(ctx context.Context, s store, q *query) (bool, error) {
			var a answer
			var err error
			if n, ok := s.(nearester); ok && !flat {
				out, err = n.nearest(ctx, q.c, cfg.k, out[:0], &a)
			} else if n, ok := s.(flatNearester); ok && flat {
				out, err = n.flatNearest(ctx, q.c, cfg.k, out[:0], &a)
			} else {
				return false, nil
			}
			if err != nil {
				return true, err
			}
			q.result = len(out)
			got := make([]int64, len(out))
			var tags uint64
			for i, p := range out {
				got[i] = dist2(p, q.c)
				tags += tag(p)
			}
			if !slices.IsSorted(got) || !slices.Equal(got, q.refNN) {
				return true, mismatch(w.label, q, "squared distances %v, want %v", got, q.refNN)
			}
			if a.bad != 0 || !a.noVal && a.tags != tags {
				return true, mismatch(w.label, q, "values do not match the points")
			}
			return true, nil
		}
		ws = append(ws, w)
	}
	within := func(id, label string, pts []point, radius float64, flat bool) {
		w := &workload{id: id, label: label}
		for range cfg.queries {
			c := anyPoint()
			if flat {
				c[2] = 0
			}
			w.queries = append(w.queries, query{c: c, r: radius, ref: refWithin(pts, c, radius)})
		}
		w.run = func(ctx context.Context, s store, q *query) (bool, error) {
			var a answer
			var err error
			if n, ok := s.(withiner); ok && !flat {
				err = n.within(ctx, q.c, q.r, &a)
			} else if n, ok := s.(flatWithiner); ok && flat {
				err = n.flatWithin(ctx, q.c, q.r, &a)
			} else {
				return false, nil
			}
			if err != nil {
				return true, err
			}
			q.result = a.n
			if !a.matches(q.ref) {
				return true, mismatch(w.label, q, "%d points, want %d", a.n, q.ref.n)
			}
			return true, nil
		}
		ws = append(ws, w)
	}
	nearest("knn", fmt.Sprintf("%d nearest", cfg.k), d.pts, false)
	for _, rad := range cfg.radii {
		within(fmt.Sprintf("within%g", rad), fmt.Sprintf("within radius %g", rad), d.pts, rad, false)
	}
	nearest("knn2d", fmt.Sprintf("%d nearest, 2-D", cfg.k), d.flat, true)
	for _, rad := range cfg.flatR {
		within(fmt.Sprintf("within2d%g", rad), fmt.Sprintf("within radius %g, 2-D", rad), d.flat, rad, true)
	}
	if d.nodes > outDegree {
		w := &workload{id: "walk", label: fmt.Sprintf("%d-hop walk", cfg.hops)}
		for range cfg.queries {
			s := r.Int32N(int32(d.nodes))
			w.queries = append(w.queries, query{from: s, refW: refWalk(d, s, cfg.hops)})
		}
		w.run = func(ctx context.Context, s store, q *query) (bool, error) {
			wk, ok := s.(walker)
			if !ok {
				return false, nil
			}
			a, err := wk.walk(ctx, d.pts[q.from], cfg.hops)
			if err != nil {
				return true, err
			}
			q.result = a.n
			if a != q.refW {
				return true, mismatch(w.label, q, "%+v, want %+v", a, q.refW)
			}
			return true, nil
		}
		ws = append(ws, w)
		p := &workload{id: "path", label: fmt.Sprintf("shortest path <= %d hops", cfg.maxHops)}
		for range cfg.queries {
			from := r.Int32N(int32(d.nodes))
			to := from
			for range cfg.maxHops {
				es := d.adj[to]
				to = es[r.IntN(len(es))].to
			}
			q := query{from: from, to: to}
			q.refPW, q.refOK = refPath(d, from, to, cfg.maxHops)
			p.queries = append(p.queries, q)
		}
		p.run = func(ctx context.Context, s store, q *query) (bool, error) {
			pt, ok := s.(pather)
			if !ok {
				return false, nil
			}
			coords, weight, found, err := pt.path(ctx, d.pts[q.from], d.pts[q.to], cfg.maxHops)
			if err != nil {
				return true, err
			}
			q.result = len(coords)
			if found != q.refOK || found && !sameWeight(weight, q.refPW) {
				return true, mismatch(p.label, q, "found %v weight %v, want %v %v", found, weight, q.refOK, q.refPW)
			}
			if found && !checkPath(d, coords, q.from, q.to, cfg.maxHops, weight) {
				return true, mismatch(p.label, q, "path %v is not a path of the graph of weight %v", coords, weight)
			}
			return true, nil
		}
		ws = append(ws, p)
	}
	return ws
}
