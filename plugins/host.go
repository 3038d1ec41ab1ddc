package plugins

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/vm"
)

// cursorBatch is how many points or edges a cursor takes from the engine
// per resumption of its iterator: a region scan pays one coroutine switch
// per batch, not per point.
const cursorBatch = 256

// txHost is vm.Host over one engine transaction: a snapshot for read-only
// programs, the Update's transaction for read-write ones. It reaches the
// transaction's namespace and nothing else.
type txHost struct {
	tx      *engine.Tx
	dims    int
	geo     bool
	cursors []interface{ Close() }
}

var _ vm.Host = (*txHost)(nil)

func newHost(tx *engine.Tx) *txHost {
	ns := tx.Namespace()
	return &txHost{tx: tx, dims: ns.Dims(), geo: ns.Geo()}
}

// close closes every cursor the program left open, so no iterator
// outlives its transaction.
func (h *txHost) close() {
	for _, c := range h.cursors {
		c.Close()
	}
	h.cursors = nil
}

// hostErr maps engine errors to what the vm contract expects: a write
// refused as read-only wraps vm.ErrReadOnly.
func hostErr(err error) error {
	if errors.Is(err, engine.ErrReadOnly) {
		return fmt.Errorf("%w: %w", vm.ErrReadOnly, err)
	}
	return err
}

func (h *txHost) Dims() int { return h.dims }

func (h *txHost) Geo() bool { return h.geo }

func (h *txHost) Get(_ context.Context, c []int32) ([]byte, bool, error) {
	v, err := h.tx.Get(c)
	if err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return v, true, nil
}

func (h *txHost) Put(_ context.Context, c []int32, value []byte) error {
	return hostErr(h.tx.Put(c, value))
}

func (h *txHost) Delete(_ context.Context, c []int32) (bool, error) {
	ok, err := h.tx.Delete(c)
	return ok, hostErr(err)
}

func (h *txHost) Region(ctx context.Context, lo, hi []int32) vm.Cursor[vm.Point] {
	seq, err := h.tx.RegionSpans(lo, hi)
	return h.pointCursor(ctx, seq, err)
}

func (h *txHost) Within(ctx context.Context, c []int32, r float64) vm.Cursor[vm.Point] {
	seq, err := h.tx.Within(c, r, engine.WithinOptions{})
	return h.pointCursor(ctx, single(seq), err)
}

// single turns a scan of points into a scan of one-point stretches.
func single(seq iter.Seq2[[]int32, []byte]) iter.Seq2[[]int32, [][]byte] {
	return func(yield func([]int32, [][]byte) bool) {
		if seq == nil {
			return
		}
		var one [1][]byte
		for c, v := range seq {
			one[0] = v
			if !yield(c, one[:]) {
				return
			}
		}
	}
}

func (h *txHost) Nearby(ctx context.Context, c []int32, k int, maxDist float64) ([]vm.Neighbor, error) {
	ns, err := h.tx.Nearby(ctx, c, k, engine.NearbyOptions{MaxDist: maxDist})
	if err != nil {
		return nil, err
	}
	out := make([]vm.Neighbor, len(ns))
	for i, n := range ns {
		out[i] = vm.Neighbor(n)
	}
	return out, nil
}

// spanMin: a stretch of at least this many points (engine.RegionSpans)
// is handed to the consumer as the engine's own slices; shorter ones are
// copied into a batch of up to cursorBatch points, so that a scan of
// scattered points still costs one coroutine switch per batch.
const spanMin = 32

// pointCursor turns a scan of points in stretches (Region's, or
// Within's one point at a time) into a cursor.
func (h *txHost) pointCursor(ctx context.Context, seq iter.Seq2[[]int32, [][]byte], err error) vm.Cursor[vm.Point] {
	if err != nil {
		return &regionCursor{err: err, done: true}
	}
	c := &regionCursor{ctx: ctx, dims: h.dims}
	// Each resumption of the producer hands over one stretch in coords
	// and vals: a long one of the engine's as it is (valid while the
	// producer waits inside the engine's callback, which is until the
	// consumer has read it all and resumes it), or a batch of short ones
	// copied into bc and bv. The consumer has finished with a stretch
	// before it resumes the producer, so both batches are reused.
	c.next, c.stop = iter.Pull(func(yield func(struct{}) bool) {
		bc := make([]int32, 0, cursorBatch*h.dims)
		bv := make([][]byte, 0, cursorBatch)
		hand := func(cs []int32, vs [][]byte) bool {
			c.coords, c.vals, c.i = cs, vs, 0
			return yield(struct{}{})
		}
		for cs, vs := range seq {
			if len(vs) < spanMin {
				bc, bv = append(bc, cs...), append(bv, vs...)
				if len(bv) >= cursorBatch {
					if !hand(bc, bv) {
						return
					}
					bc, bv = bc[:0], bv[:0]
				}
				continue
			}
			if len(bv) > 0 {
				if !hand(bc, bv) {
					return
				}
				bc, bv = bc[:0], bv[:0]
			}
			if !hand(cs, vs) {
				return
			}
		}
		if len(bv) > 0 {
			hand(bc, bv)
		}
	})
	h.cursors = append(h.cursors, c)
	return c
}

// regionCursor is the region scan as a vm.Cursor, a vm.PointFiller and a
// vm.ColumnFiller: the engine's push iterator runs in a coroutine
// (iter.Pull) that hands over a stretch of points per switch, which Next
// reads a point at a time, FillPoints packs as records and FillColumns
// copies as columns, the coordinates of a stretch in one loop.
type regionCursor struct {
	ctx    context.Context
	dims   int
	coords []int32  // the current stretch: dims per point
	vals   [][]byte // its values
	i      int      // the next point of the stretch
	next   func() (struct{}, bool)
	stop   func()
	err    error
	done   bool
}

var (
	_ vm.PointFiller  = (*regionCursor)(nil)
	_ vm.ColumnFiller = (*regionCursor)(nil)
)

func (c *regionCursor) Next() (vm.Point, bool) {
	if c.i >= len(c.vals) && !c.resume() {
		return vm.Point{}, false
	}
	i, d := c.i, c.dims
	c.i++
	return vm.Point{Coord: c.coords[i*d : (i+1)*d : (i+1)*d], Value: c.vals[i]}, true
}

// resume runs the producer once and reports whether it handed over a
// stretch of points.
func (c *regionCursor) resume() bool {
	if c.done {
		return false
	}
	if err := c.ctx.Err(); err != nil {
		c.err = err
		c.Close()
		return false
	}
	c.coords, c.vals, c.i = nil, nil, 0
	if _, ok := c.next(); !ok || len(c.vals) == 0 {
		c.Close()
		return false
	}
	return true
}

// FillPoints implements vm.PointFiller.
func (c *regionCursor) FillPoints(buf []byte) (n, used, need int) {
	for {
		if c.i >= len(c.vals) && !c.resume() {
			return n, used, 0
		}
		for ; c.i < len(c.vals); c.i++ {
			k, v := c.coords[c.i*c.dims:(c.i+1)*c.dims], c.vals[c.i]
			size := vm.PointRecordSize(c.dims, len(v))
			if used+size > len(buf) {
				if n == 0 {
					need = size
				}
				return n, used, need
			}
			used += vm.PackPoint(buf[used:], k, v)
			n++
		}
	}
}

// FillColumns implements vm.ColumnFiller. The coordinates of the points
// taken from a stretch are copied in one loop after their values, which
// go one by one, as they are separate slices.
func (c *regionCursor) FillColumns(coords, lens, vals []byte) (n, used int, stuck bool, need int) {
	room, d := len(lens)/4, c.dims
	for n < room || n == 0 {
		if c.i >= len(c.vals) && !c.resume() {
			break
		}
		if room == 0 {
			return 0, 0, true, len(c.vals[c.i])
		}
		vs := c.vals[c.i:min(len(c.vals), c.i+room-n)]
		ls := lens[4*n : 4*(n+len(vs))]
		k := 0
		for ; k < len(vs); k++ {
			v := vs[k]
			if len(v) > len(vals)-used {
				break
			}
			binary.LittleEndian.PutUint32(ls[4*k:], uint32(len(v)))
			used += copy(vals[used:], v)
		}
		putCoords(coords[4*d*n:], c.coords[c.i*d:(c.i+k)*d])
		n, c.i = n+k, c.i+k
		if k < len(vs) {
			if n == 0 {
				return 0, 0, true, len(vs[k])
			}
			break
		}
	}
	return n, used, false, 0
}

func (c *regionCursor) Err() error { return c.err }

func (c *regionCursor) Close() {
	if c.stop != nil {
		c.stop()
		c.stop = nil
	}
	c.done = true
	c.coords, c.vals, c.i = nil, nil, 0
}

func (h *txHost) Edges(ctx context.Context, c []int32, dir vm.Direction, label string) vm.Cursor[vm.Edge] {
	seq, err := h.tx.Edges(c, engine.Direction(dir), label)
	if err != nil {
		return &batchCursor[vm.Edge]{err: err, done: true}
	}
	batches := func(yield func([]vm.Edge) bool) {
		es := make([]vm.Edge, 0, cursorBatch)
		for e := range seq {
			es = append(es, vm.Edge(e))
			if len(es) == cursorBatch {
				if !yield(es) {
					return
				}
				es = es[:0]
			}
		}
		if len(es) > 0 {
			yield(es)
		}
	}
	cur := newBatchCursor(ctx, batches)
	h.cursors = append(h.cursors, cur)
	return cur
}

func (h *txHost) Link(_ context.Context, e vm.Edge) error {
	return hostErr(h.tx.Link(e.From, e.To, e.Label, e.Weight, e.Value))
}

func (h *txHost) Unlink(_ context.Context, from, to []int32, label string) (bool, error) {
	ok, err := h.tx.Unlink(from, to, label)
	return ok, hostErr(err)
}

func (h *txHost) Walk(ctx context.Context, start []int32, o vm.WalkOptions) ([]vm.WalkStep, error) {
	steps, err := h.tx.Walk(ctx, start, engine.WalkOptions{
		Order:     engine.Order(o.Order),
		MaxDepth:  o.MaxDepth,
		Label:     o.Label,
		Direction: engine.Direction(o.Direction),
		Limit:     o.Limit,
	})
	if err != nil {
		return nil, err
	}
	out := make([]vm.WalkStep, len(steps))
	for i, s := range steps {
		out[i] = vm.WalkStep(s)
	}
	return out, nil
}

func (h *txHost) ShortestPath(ctx context.Context, from, to []int32, o vm.PathOptions) (vm.Path, bool, error) {
	p, ok, err := h.tx.ShortestPathWith(ctx, from, to, engine.PathOptions{Label: o.Label, Direction: engine.Direction(o.Direction), MaxHops: o.MaxHops})
	return vm.Path(p), ok, err
}

// batchCursor is a vm.Cursor over an iterator of batches, pulled one batch
// at a time (iter.Pull), so the engine's push iterator becomes a pull
// cursor at one coroutine switch per batch.
type batchCursor[T any] struct {
	ctx  context.Context
	next func() ([]T, bool)
	stop func()
	buf  []T
	i    int
	err  error
	done bool
}

func newBatchCursor[T any](ctx context.Context, seq iter.Seq[[]T]) *batchCursor[T] {
	next, stop := iter.Pull(seq)
	return &batchCursor[T]{ctx: ctx, next: next, stop: stop}
}

func (c *batchCursor[T]) Next() (T, bool) {
	if c.i < len(c.buf) {
		v := c.buf[c.i]
		c.i++
		return v, true
	}
	var zero T
	if c.done {
		return zero, false
	}
	if err := c.ctx.Err(); err != nil {
		c.err = err
		c.Close()
		return zero, false
	}
	b, ok := c.next()
	if !ok || len(b) == 0 {
		c.Close()
		return zero, false
	}
	c.buf, c.i = b, 1
	return b[0], true
}

func (c *batchCursor[T]) Err() error { return c.err }

func (c *batchCursor[T]) Close() {
	if c.stop != nil {
		c.stop()
		c.stop = nil
	}
	c.done = true
	c.buf = nil
}

// noNamespace is the host of a session's script when the session has no
// namespace (a REPL before one is picked): plain JavaScript and cube.log
// work, and every other cube call fails saying that the script has no
// namespace (vm/js reads a host of no dimensions so). Its other methods
// are never called.
type noNamespace struct{ vm.Host }

func (noNamespace) Dims() int { return 0 }

func (noNamespace) Geo() bool { return false }
