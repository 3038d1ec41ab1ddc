package vmtest

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/cubelinux/cube/vm"
)

// Host is an in-memory vm.Host. The zero value is not usable; call NewHost.
type Host struct {
	dims int
	geo  bool

	mu       sync.RWMutex
	st       *state
	version  uint64 // bumped by every write, so Commit can detect conflicts
	readOnly bool
	fail     error
}

var _ vm.Host = (*Host)(nil)

// NewHost returns an empty host with dims dimensions (1–8; other values
// are clamped into that range, since a test passing 0 almost always means 1).
func NewHost(dims int) *Host {
	dims = max(1, min(dims, 8))
	return &Host{dims: dims, st: newState()}
}

// NewGeoHost returns an empty geographic host: 2 dimensions, (longitude,
// latitude) in units of 1e-7 degree, writes refused outside [-180, 180] ×
// [-90, 90], and Nearby and Within in metres on the sphere (haversine,
// computed as the engine does, to the bit).
func NewGeoHost() *Host {
	return &Host{dims: 2, geo: true, st: newState()}
}

// SetReadOnly makes every later write fail with an error wrapping
// vm.ErrReadOnly (or lifts that).
func (h *Host) SetReadOnly(ro bool) {
	h.mu.Lock()
	h.readOnly = ro
	h.mu.Unlock()
}

// SetError makes every later method except Dims fail with err (nil lifts
// it), so tests can check how a sandbox reports a failing host.
func (h *Host) SetError(err error) {
	h.mu.Lock()
	h.fail = err
	h.mu.Unlock()
}

// Dims implements vm.Host.
func (h *Host) Dims() int { return h.dims }

// Geo implements vm.Host.
func (h *Host) Geo() bool { return h.geo }

func (h *Host) check(op string, cs ...[]int32) error {
	if h.fail != nil {
		return h.fail
	}
	for _, c := range cs {
		if len(c) != h.dims {
			return fmt.Errorf("%s: %w: got %d, want %d", op, ErrBadCoord, len(c), h.dims)
		}
	}
	return nil
}

// writable checks a write and makes h's state private to h.
func (h *Host) writable(op string, cs ...[]int32) error {
	if err := h.check(op, cs...); err != nil {
		return err
	}
	if h.readOnly {
		return fmt.Errorf("vmtest: %s: %w", op, vm.ErrReadOnly)
	}
	if h.geo {
		for _, c := range cs {
			if !geoInRange(c) {
				return fmt.Errorf("vmtest: %s: %w: (%d, %d) is outside longitude [-180, 180] / latitude [-90, 90] (units of 1e-7 degree)", op, ErrBadCoord, c[0], c[1])
			}
		}
	}
	if h.st.shared.Load() {
		h.st = h.st.clone()
	}
	h.version++
	return nil
}

// Get implements vm.Host.
func (h *Host) Get(_ context.Context, c []int32) ([]byte, bool, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if err := h.check("get", c); err != nil {
		return nil, false, err
	}
	v, ok := h.st.values[key(c)]
	return v, ok, nil
}

// Put implements vm.Host. The value is copied.
func (h *Host) Put(_ context.Context, c []int32, value []byte) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.writable("put", c); err != nil {
		return err
	}
	h.st.put(key(c), value)
	return nil
}

// Delete implements vm.Host.
func (h *Host) Delete(_ context.Context, c []int32) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.writable("delete", c); err != nil {
		return false, err
	}
	return h.st.del(key(c)), nil
}

// Region implements vm.Host. It iterates in lexicographic coordinate order
// over the contents as they were when Region was called.
func (h *Host) Region(ctx context.Context, lo, hi []int32) vm.Cursor[vm.Point] {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if err := h.check("region", lo, hi); err != nil {
		return &sliceCursor[vm.Point]{err: err}
	}
	keys := h.st.sortedKeys()
	start := sort.SearchStrings(keys, key(lo))
	var pts []vm.Point
	for _, k := range keys[start:] {
		c := decode(k)
		if c[0] > hi[0] {
			break
		}
		if inBox(c, lo, hi) {
			pts = append(pts, vm.Point{Coord: c, Value: h.st.values[k]})
		}
	}
	return &sliceCursor[vm.Point]{ctx: ctx, items: pts}
}

func inBox(c, lo, hi []int32) bool {
	for i := range c {
		if c[i] < lo[i] || c[i] > hi[i] {
			return false
		}
	}
	return true
}

// Len returns the number of values.
func (h *Host) Len() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.st.values)
}

// sliceCursor is a vm.Cursor over a precomputed slice. It checks ctx on
// every Next, as the engine's cursors do, so cancellation tests see an
// error from a long scan.
type sliceCursor[T any] struct {
	ctx   context.Context
	items []T
	i     int
	err   error
	done  bool
}

func (c *sliceCursor[T]) Next() (T, bool) {
	var zero T
	if c.done || c.err != nil {
		return zero, false
	}
	if c.ctx != nil {
		if err := c.ctx.Err(); err != nil {
			c.err = err
			return zero, false
		}
	}
	if c.i >= len(c.items) {
		c.done = true
		return zero, false
	}
	c.i++
	return c.items[c.i-1], true
}

func (c *sliceCursor[T]) Err() error { return c.err }

func (c *sliceCursor[T]) Close() { c.done = true }
