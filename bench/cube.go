package main

import (
	"context"
	"fmt"
	"time"

	"github.com/cubelinux/cube"
)

// cubeStore is cube embedded through its root package, the way a Go
// program uses it: the points in a 3-D namespace with the graph's edges,
// the 2-D set in a namespace of its own.
type cubeStore struct {
	dir       string
	db        *cube.DB
	pts, flat *cube.Namespace
	lo, hi    []int32 // reused query corners
	c3, c2    []int32
	from, to  []int32
	phases    string // how long each part of the load took
}

func newCube(dir string) *cubeStore {
	return &cubeStore{dir: dir, lo: make([]int32, 3), hi: make([]int32, 3), c3: make([]int32, 3), c2: make([]int32, 2),
		from: make([]int32, 3), to: make([]int32, 3)}
}

func (s *cubeStore) name() string { return "cube" }

func (s *cubeStore) open() (err error) {
	s.db, err = cube.Open(s.dir, cube.Options{Sync: cube.SyncNone, CheckpointInterval: -1, TelemetryInterval: -1})
	return err
}

func (s *cubeStore) load(ctx context.Context, d *dataset) error {
	if err := s.open(); err != nil {
		return err
	}
	pts, err := s.db.CreateNamespace(ctx, "pts", cube.NamespaceOptions{Dims: 3})
	if err != nil {
		return err
	}
	flat, err := s.db.CreateNamespace(ctx, "flat", cube.NamespaceOptions{Dims: 2})
	if err != nil {
		return err
	}
	t0 := time.Now()
	phase := func(name string) {
		s.phases += fmt.Sprintf(" %s %v", name, time.Since(t0).Round(time.Millisecond))
		t0 = time.Now()
	}
	const batch = 10000
	for i := 0; i < len(d.pts); i += batch {
		err := pts.Update(ctx, func(tx *cube.Tx) error {
			for _, p := range d.pts[i:min(i+batch, len(d.pts))] {
				if err := tx.Put(p[:], value(p)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	phase("points")
	for i := 0; i < len(d.flat); i += batch {
		err := flat.Update(ctx, func(tx *cube.Tx) error {
			for _, p := range d.flat[i:min(i+batch, len(d.flat))] {
				if err := tx.Put(p[:2], value(p)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	phase("2-D points")
	for i := 0; i < len(d.adj); i += batch / outDegree {
		err := pts.Update(ctx, func(tx *cube.Tx) error {
			for u := i; u < min(i+batch/outDegree, len(d.adj)); u++ {
				for _, e := range d.adj[u] {
					if err := tx.Link(d.pts[u][:], d.pts[e.to][:], "to", e.w, nil); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	phase("edges")
	// At rest: checkpointed, closed, and opened again from the checkpoint.
	if _, err := s.db.Checkpoint(ctx); err != nil {
		return err
	}
	phase("checkpoint")
	if err := s.db.Close(); err != nil {
		return err
	}
	if err := s.open(); err != nil {
		return err
	}
	phase("close and open")
	if s.pts, err = s.db.Namespace("pts"); err != nil {
		return err
	}
	if s.flat, err = s.db.Namespace("flat"); err != nil {
		return err
	}
	if got := s.pts.Info().Values; got != len(d.pts) {
		return fmt.Errorf("cube: %d points after reopening, want %d", got, len(d.pts))
	}
	return nil
}

func (s *cubeStore) loadPhases() string { return s.phases }

func (s *cubeStore) close() error {
	if s.db == nil {
		return nil
	}
	return s.db.Close()
}

func (s *cubeStore) box(ctx context.Context, lo, hi point, a *answer) error {
	copy(s.lo, lo[:])
	copy(s.hi, hi[:])
	seq, err := s.pts.Region(ctx, s.lo, s.hi, 0)
	if err != nil {
		return err
	}
	for c, v := range seq {
		a.add(point{c[0], c[1], c[2]}, v)
	}
	return nil
}

func (s *cubeStore) get(ctx context.Context, p point, a *answer) error {
	copy(s.c3, p[:])
	v, err := s.pts.Get(ctx, s.c3)
	if err != nil {
		return err
	}
	a.add(p, v)
	return nil
}

func (s *cubeStore) nearest(ctx context.Context, c point, k int, out []point, a *answer) ([]point, error) {
	copy(s.c3, c[:])
	ns, err := s.pts.Nearby(ctx, s.c3, k, cube.NearbyOptions{})
	for _, n := range ns {
		p := point{n.Coord[0], n.Coord[1], n.Coord[2]}
		out = append(out, p)
		a.add(p, n.Value)
	}
	return out, err
}

func (s *cubeStore) within(ctx context.Context, c point, r float64, a *answer) error {
	copy(s.c3, c[:])
	seq, err := s.pts.Within(ctx, s.c3, r, cube.WithinOptions{})
	if err != nil {
		return err
	}
	for c, v := range seq {
		a.add(point{c[0], c[1], c[2]}, v)
	}
	return nil
}

func (s *cubeStore) flatNearest(ctx context.Context, c point, k int, out []point, a *answer) ([]point, error) {
	copy(s.c2, c[:2])
	ns, err := s.flat.Nearby(ctx, s.c2, k, cube.NearbyOptions{})
	for _, n := range ns {
		p := point{n.Coord[0], n.Coord[1], 0}
		out = append(out, p)
		a.add(p, n.Value)
	}
	return out, err
}

func (s *cubeStore) flatWithin(ctx context.Context, c point, r float64, a *answer) error {
	copy(s.c2, c[:2])
	seq, err := s.flat.Within(ctx, s.c2, r, cube.WithinOptions{})
	if err != nil {
		return err
	}
	for c, v := range seq {
		a.add(point{c[0], c[1], 0}, v)
	}
	return nil
}

func (s *cubeStore) walk(ctx context.Context, start point, hops int) (walkAnswer, error) {
	copy(s.from, start[:])
	steps, err := s.pts.WalkSeq(ctx, s.from, cube.WalkOptions{Order: cube.BFS, MaxDepth: hops, Direction: cube.Out})
	var a walkAnswer
	if err != nil {
		return a, err
	}
	for st := range steps {
		a.add(st)
	}
	return a, err
}

func (s *cubeStore) path(ctx context.Context, from, to point, hops int) ([]point, float64, bool, error) {
	copy(s.from, from[:])
	copy(s.to, to[:])
	p, ok, err := s.pts.ShortestPathWith(ctx, s.from, s.to, cube.PathOptions{Direction: cube.Out, MaxHops: hops})
	if err != nil || !ok {
		return nil, 0, ok, err
	}
	out := make([]point, 0, len(p.Coords))
	for _, c := range p.Coords {
		out = append(out, point(c))
	}
	return out, p.Weight, true, nil
}

// add counts one of cube's walk steps into the answer.
func (a *walkAnswer) add(st cube.Step) {
	a.n++
	a.fp += fingerprint(point{st.Coord[0], st.Coord[1], st.Coord[2]})
	a.depths += st.Depth
}
