package jsproc

import (
	"context"
	"errors"

	"github.com/cubelinux/cube/vm"
)

// errWorkerGone ends a host call when the pool stopped answering.
var errWorkerGone = errors.New("jsproc: the pool closed the worker's input")

// remoteHost is vm.Host in the worker: each method is a call answered by
// the pool from the run's real host.
type remoteHost struct {
	s       *server
	dims    int
	geo     bool
	cursors map[uint32]bool
}

var _ vm.Host = (*remoteHost)(nil)

func (h *remoteHost) do(c *call) (*reply, error) {
	if err := h.s.send(&message{Call: c}); err != nil {
		return nil, err
	}
	// The pool sends nothing but the reply while a run waits on one.
	var req request
	if err := h.s.dec.Decode(&req); err != nil || req.Op != opReply || req.Reply == nil {
		return nil, errWorkerGone
	}
	return req.Reply, req.Reply.Err.err()
}

func (h *remoteHost) Dims() int { return h.dims }

func (h *remoteHost) Geo() bool { return h.geo }

func (h *remoteHost) Get(ctx context.Context, c []int32) ([]byte, bool, error) {
	r, err := h.do(&call{Method: mGet, A: c})
	if err != nil {
		return nil, false, err
	}
	return r.Value, r.OK, nil
}

func (h *remoteHost) Put(ctx context.Context, c []int32, value []byte) error {
	_, err := h.do(&call{Method: mPut, A: c, Value: value})
	return err
}

func (h *remoteHost) Delete(ctx context.Context, c []int32) (bool, error) {
	r, err := h.do(&call{Method: mDelete, A: c})
	if err != nil {
		return false, err
	}
	return r.OK, nil
}

func (h *remoteHost) Link(ctx context.Context, e vm.Edge) error {
	_, err := h.do(&call{Method: mLink, A: e.From, B: e.To, Label: e.Label, Weight: e.Weight, Value: e.Value})
	return err
}

func (h *remoteHost) Unlink(ctx context.Context, from, to []int32, label string) (bool, error) {
	r, err := h.do(&call{Method: mUnlink, A: from, B: to, Label: label})
	if err != nil {
		return false, err
	}
	return r.OK, nil
}

func (h *remoteHost) Walk(ctx context.Context, start []int32, o vm.WalkOptions) ([]vm.WalkStep, error) {
	r, err := h.do(&call{Method: mWalk, A: start, Walk: o})
	if err != nil {
		return nil, err
	}
	return r.Steps, nil
}

func (h *remoteHost) ShortestPath(ctx context.Context, from, to []int32, o vm.PathOptions) (vm.Path, bool, error) {
	r, err := h.do(&call{Method: mPath, A: from, B: to, Path: o})
	if err != nil {
		return vm.Path{}, false, err
	}
	return r.Path, r.OK, nil
}

func (h *remoteHost) Region(ctx context.Context, min, max []int32) vm.Cursor[vm.Point] {
	c := &remoteCursor[vm.Point]{h: h}
	c.open(&call{Method: mRegionOpen, A: min, B: max}, func(r *reply) []vm.Point { return r.Points })
	return c
}

func (h *remoteHost) Nearby(ctx context.Context, c []int32, k int, maxDist float64) ([]vm.Neighbor, error) {
	r, err := h.do(&call{Method: mNearby, A: c, K: k, Dist: maxDist})
	if err != nil {
		return nil, err
	}
	return r.Near, nil
}

func (h *remoteHost) Within(ctx context.Context, c []int32, r float64) vm.Cursor[vm.Point] {
	cur := &remoteCursor[vm.Point]{h: h}
	cur.open(&call{Method: mWithinOpen, A: c, Dist: r}, func(r *reply) []vm.Point { return r.Points })
	return cur
}

func (h *remoteHost) Edges(ctx context.Context, c []int32, dir vm.Direction, label string) vm.Cursor[vm.Edge] {
	cur := &remoteCursor[vm.Edge]{h: h}
	cur.open(&call{Method: mEdgesOpen, A: c, Dir: dir, Label: label}, func(r *reply) []vm.Edge { return r.Edges })
	return cur
}

// closeAll forgets the run's cursors; the pool closes its side when the
// run ends.
func (h *remoteHost) closeAll() { h.cursors = nil }

// remoteCursor fetches a cursor's items in batches.
type remoteCursor[T any] struct {
	h     *remoteHost
	id    uint32
	items func(*reply) []T
	buf   []T
	i     int
	last  bool
	err   error
	done  bool
}

func (c *remoteCursor[T]) open(cl *call, items func(*reply) []T) {
	c.items = items
	r, err := c.h.do(cl)
	if err != nil {
		c.err, c.done = err, true
		return
	}
	c.id = r.Cursor
	c.take(r)
}

func (c *remoteCursor[T]) take(r *reply) {
	c.buf, c.i, c.last = c.items(r), 0, r.Done
}

func (c *remoteCursor[T]) Next() (T, bool) {
	var zero T
	for !c.done {
		if c.i < len(c.buf) {
			c.i++
			return c.buf[c.i-1], true
		}
		if c.last {
			c.done = true
			break
		}
		r, err := c.h.do(&call{Method: mNext, Cursor: c.id})
		if err != nil {
			c.err, c.done = err, true
			break
		}
		c.take(r)
	}
	return zero, false
}

func (c *remoteCursor[T]) Err() error { return c.err }

func (c *remoteCursor[T]) Close() {
	if c.done {
		return
	}
	c.done = true
	if !c.last {
		_, _ = c.h.do(&call{Method: mCloseCursor, Cursor: c.id})
	}
}
