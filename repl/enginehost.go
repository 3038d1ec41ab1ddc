package repl

import (
	"context"
	"errors"
	"iter"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/vm"
)

// txHost is the namespace as a REPL input sees it: vm.Host over one engine
// transaction. It stands in until package cube offers sessions of its own.
type txHost struct{ tx *engine.Tx }

var _ vm.Host = txHost{}

func (h txHost) Dims() int { return h.tx.Namespace().Dims() }

func (h txHost) Get(_ context.Context, c []int32) ([]byte, bool, error) {
	v, err := h.tx.Get(c)
	if errors.Is(err, engine.ErrNotFound) {
		return nil, false, nil
	}
	return v, err == nil, err
}

func (h txHost) Put(_ context.Context, c []int32, v []byte) error { return h.tx.Put(c, v) }

func (h txHost) Delete(_ context.Context, c []int32) (bool, error) { return h.tx.Delete(c) }

func (h txHost) Region(_ context.Context, min, max []int32) vm.Cursor[vm.Point] {
	seq, err := h.tx.Region(min, max, 0)
	if err != nil {
		return &pullCursor[vm.Point]{err: err}
	}
	next, stop := iter.Pull2(seq)
	return &pullCursor[vm.Point]{
		next: func() (vm.Point, bool) {
			c, v, ok := next()
			return vm.Point{Coord: c, Value: v}, ok
		},
		stop: stop,
	}
}

func (h txHost) Edges(_ context.Context, c []int32, dir vm.Direction, label string) vm.Cursor[vm.Edge] {
	seq, err := h.tx.Edges(c, engine.Direction(dir), label)
	if err != nil {
		return &pullCursor[vm.Edge]{err: err}
	}
	next, stop := iter.Pull(seq)
	return &pullCursor[vm.Edge]{
		next: func() (vm.Edge, bool) {
			e, ok := next()
			return vm.Edge{From: e.From, To: e.To, Label: e.Label, Weight: e.Weight, Value: e.Value}, ok
		},
		stop: stop,
	}
}

func (h txHost) Link(_ context.Context, e vm.Edge) error {
	return h.tx.Link(e.From, e.To, e.Label, e.Weight, e.Value)
}

func (h txHost) Unlink(_ context.Context, from, to []int32, label string) (bool, error) {
	return h.tx.Unlink(from, to, label)
}

func (h txHost) Walk(ctx context.Context, start []int32, o vm.WalkOptions) ([]vm.WalkStep, error) {
	steps, err := h.tx.Walk(ctx, start, engine.WalkOptions{
		Order: engine.Order(o.Order), MaxDepth: o.MaxDepth, Label: o.Label,
		Direction: engine.Direction(o.Direction), Limit: o.Limit,
	})
	if err != nil {
		return nil, err
	}
	out := make([]vm.WalkStep, len(steps))
	for i, s := range steps {
		out[i] = vm.WalkStep{Coord: s.Coord, Depth: s.Depth, From: s.From}
	}
	return out, nil
}

func (h txHost) ShortestPath(ctx context.Context, from, to []int32, label string, dir vm.Direction) (vm.Path, bool, error) {
	p, ok, err := h.tx.ShortestPath(ctx, from, to, label, engine.Direction(dir))
	return vm.Path{Coords: p.Coords, Weight: p.Weight}, ok, err
}

// pullCursor adapts a pull iterator to vm.Cursor.
type pullCursor[T any] struct {
	next func() (T, bool)
	stop func()
	err  error
}

func (c *pullCursor[T]) Next() (T, bool) {
	var zero T
	if c.next == nil {
		return zero, false
	}
	v, ok := c.next()
	if !ok {
		c.Close()
	}
	return v, ok
}

func (c *pullCursor[T]) Err() error { return c.err }

func (c *pullCursor[T]) Close() {
	if c.stop != nil {
		c.stop()
	}
	c.next, c.stop = nil, nil
}
