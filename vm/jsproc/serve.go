package jsproc

import (
	"context"
	"fmt"

	"github.com/cubelinux/cube/vm"
)

// Batches of cursor items sent per host call: enough to amortise the
// round trip, small enough to bound what one reply holds.
const (
	batchItems = 256
	batchBytes = 256 << 10
	maxCursors = 1024 // open cursors per run
)

// cursors are a run's open cursors on the pool's side.
type cursors map[uint32]any

func (c cursors) closeAll() {
	for id, cur := range c {
		closeCursor(cur)
		delete(c, id)
	}
}

func closeCursor(cur any) {
	switch x := cur.(type) {
	case vm.Cursor[vm.Point]:
		x.Close()
	case vm.Cursor[vm.Edge]:
		x.Close()
	}
}

// serve answers one host call of a run from its real host. The worker's
// messages are checked as any client's: a coordinate of the wrong length
// is refused, not passed on.
func serve(ctx context.Context, h vm.Host, c *call, cur cursors) *reply {
	fail := func(err error) *reply { return &reply{Err: toWire(err)} }
	if h == nil {
		return fail(fmt.Errorf("jsproc: no host: cube is only usable while a program runs"))
	}
	dims := h.Dims()
	need := func(cs ...[]int32) error {
		for _, x := range cs {
			if len(x) != dims {
				return fmt.Errorf("jsproc: a coordinate of %d axes in a namespace of %d", len(x), dims)
			}
		}
		return nil
	}
	switch c.Method {
	case mGet:
		if err := need(c.A); err != nil {
			return fail(err)
		}
		v, ok, err := h.Get(ctx, c.A)
		if err != nil {
			return fail(err)
		}
		return &reply{Value: v, OK: ok}
	case mPut:
		if err := need(c.A); err != nil {
			return fail(err)
		}
		return fail(h.Put(ctx, c.A, c.Value))
	case mDelete:
		if err := need(c.A); err != nil {
			return fail(err)
		}
		ok, err := h.Delete(ctx, c.A)
		if err != nil {
			return fail(err)
		}
		return &reply{OK: ok}
	case mLink:
		if err := need(c.A, c.B); err != nil {
			return fail(err)
		}
		return fail(h.Link(ctx, vm.Edge{From: c.A, To: c.B, Label: c.Label, Weight: c.Weight, Value: c.Value}))
	case mUnlink:
		if err := need(c.A, c.B); err != nil {
			return fail(err)
		}
		ok, err := h.Unlink(ctx, c.A, c.B, c.Label)
		if err != nil {
			return fail(err)
		}
		return &reply{OK: ok}
	case mWalk:
		if err := need(c.A); err != nil {
			return fail(err)
		}
		steps, err := h.Walk(ctx, c.A, c.Walk)
		if err != nil {
			return fail(err)
		}
		return &reply{Steps: steps}
	case mPath:
		if err := need(c.A, c.B); err != nil {
			return fail(err)
		}
		p, ok, err := h.ShortestPath(ctx, c.A, c.B, c.Path)
		if err != nil {
			return fail(err)
		}
		return &reply{Path: p, OK: ok}
	case mNearby:
		if err := need(c.A); err != nil {
			return fail(err)
		}
		near, err := h.Nearby(ctx, c.A, c.K, c.Dist)
		if err != nil {
			return fail(err)
		}
		return &reply{Near: near}
	case mRegionOpen, mEdgesOpen, mWithinOpen:
		if len(cur) >= maxCursors {
			return fail(&vm.Error{Kind: vm.KindHostCallLimit, Msg: fmt.Sprintf("more than %d cursors open at once; close the ones you are done with", maxCursors)})
		}
		var x any
		switch c.Method {
		case mRegionOpen:
			if err := need(c.A, c.B); err != nil {
				return fail(err)
			}
			x = h.Region(ctx, c.A, c.B)
		case mWithinOpen:
			if err := need(c.A); err != nil {
				return fail(err)
			}
			x = h.Within(ctx, c.A, c.Dist)
		default:
			if err := need(c.A); err != nil {
				return fail(err)
			}
			x = h.Edges(ctx, c.A, c.Dir, c.Label)
		}
		id := uint32(len(cur)) + 1
		for cur[id] != nil {
			id++
		}
		cur[id] = x
		r := next(cur, id)
		r.Cursor = id
		return r
	case mNext:
		if cur[c.Cursor] == nil {
			return fail(fmt.Errorf("jsproc: no open cursor %d", c.Cursor))
		}
		return next(cur, c.Cursor)
	case mCloseCursor:
		if x := cur[c.Cursor]; x != nil {
			closeCursor(x)
			delete(cur, c.Cursor)
		}
		return &reply{}
	}
	return fail(fmt.Errorf("jsproc: unknown host call %d", c.Method))
}

// next fills a batch from cursor id; an exhausted cursor is closed.
func next(cur cursors, id uint32) *reply {
	r := &reply{}
	var err error
	switch x := cur[id].(type) {
	case vm.Cursor[vm.Point]:
		size := 0
		for len(r.Points) < batchItems && size < batchBytes {
			p, ok := x.Next()
			if !ok {
				r.Done, err = true, x.Err()
				break
			}
			c := append([]int32(nil), p.Coord...)
			v := append([]byte(nil), p.Value...)
			r.Points = append(r.Points, vm.Point{Coord: c, Value: v})
			size += 4*len(c) + len(v) + 32
		}
	case vm.Cursor[vm.Edge]:
		size := 0
		for len(r.Edges) < batchItems && size < batchBytes {
			e, ok := x.Next()
			if !ok {
				r.Done, err = true, x.Err()
				break
			}
			e.From = append([]int32(nil), e.From...)
			e.To = append([]int32(nil), e.To...)
			e.Value = append([]byte(nil), e.Value...)
			r.Edges = append(r.Edges, e)
			size += 8*len(e.From) + len(e.Label) + len(e.Value) + 48
		}
	}
	if r.Done {
		closeCursor(cur[id])
		delete(cur, id)
	}
	r.Err = toWire(err)
	return r
}
