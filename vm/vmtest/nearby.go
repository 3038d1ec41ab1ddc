package vmtest

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"slices"

	"github.com/cubelinux/cube/vm"
)

// The in-memory host answers Nearby and Within by brute force, with exact
// squared distances (math/big). Its curve order is its coordinate order
// (lexicographic), as Region's is.

// dist2 returns the exact squared distance between a and b.
func dist2(a, b []int32) *big.Int {
	s := new(big.Int)
	for i := range a {
		d := big.NewInt(int64(a[i]) - int64(b[i]))
		s.Add(s, d.Mul(d, d))
	}
	return s
}

// within reports whether squared distance d2 is at most r; r is exact as
// a float64, and its square exact in 256 bits.
func within(d2 *big.Int, r float64) bool {
	if math.IsInf(r, 1) {
		return true
	}
	rr := new(big.Float).SetPrec(256).SetFloat64(r)
	rr.Mul(rr, rr)
	return new(big.Float).SetPrec(256).SetInt(d2).Cmp(rr) <= 0
}

// Nearby implements vm.Host.
func (h *Host) Nearby(_ context.Context, c []int32, k int, maxDist float64) ([]vm.Neighbor, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if err := h.check("nearby", c); err != nil {
		return nil, err
	}
	if k < 1 || !(maxDist >= 0) {
		return nil, fmt.Errorf("vmtest: nearby: k must be >= 1 and maxDist a number >= 0, got %d and %v", k, maxDist)
	}
	type cand struct {
		n  vm.Neighbor
		d2 *big.Int
	}
	if h.geo {
		return h.geoNearby(c, k, maxDist), nil
	}
	var all []cand
	for _, key := range h.st.sortedKeys() {
		p := decode(key)
		d2 := dist2(p, c)
		if maxDist > 0 && !within(d2, maxDist) {
			continue
		}
		f, _ := new(big.Float).SetInt(d2).Float64()
		all = append(all, cand{vm.Neighbor{Coord: p, Value: h.st.values[key], Dist: math.Sqrt(f)}, d2})
	}
	// Stable: equal distances keep the coordinate order.
	slices.SortStableFunc(all, func(a, b cand) int { return a.d2.Cmp(b.d2) })
	out := make([]vm.Neighbor, 0, min(k, len(all)))
	for _, x := range all[:min(k, len(all))] {
		out = append(out, x.n)
	}
	return out, nil
}

// Within implements vm.Host, over the contents as they were when Within
// was called.
func (h *Host) Within(ctx context.Context, c []int32, r float64) vm.Cursor[vm.Point] {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if err := h.check("within", c); err != nil {
		return &sliceCursor[vm.Point]{err: err}
	}
	if !(r >= 0) {
		return &sliceCursor[vm.Point]{err: fmt.Errorf("vmtest: within: r must be a number >= 0, got %v", r)}
	}
	var pts []vm.Point
	for _, key := range h.st.sortedKeys() {
		p := decode(key)
		if h.geo && geoDist(c, p) <= r || !h.geo && within(dist2(p, c), r) {
			pts = append(pts, vm.Point{Coord: p, Value: h.st.values[key]})
		}
	}
	return &sliceCursor[vm.Point]{ctx: ctx, items: pts}
}
