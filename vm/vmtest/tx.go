package vmtest

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/cubelinux/cube/vm"
)

// Tx is a transaction over a Host: a vm.Host whose writes stay private
// until Commit. It starts from the parent's contents at Begin (copied
// lazily, on its first write) and inherits the parent's read-only flag and
// injected error.
type Tx struct {
	*Host
	parent *Host
	base   uint64
	done   bool
}

// Begin starts a transaction on h. Transactions nest: a Tx's Host can Begin
// its own.
func (h *Host) Begin() *Tx {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.st.shared.Store(true)
	return &Tx{
		Host:   &Host{dims: h.dims, geo: h.geo, st: h.st, readOnly: h.readOnly, fail: h.fail},
		parent: h,
		base:   h.version,
	}
}

// Commit makes the transaction's writes visible in the parent, all at
// once. It fails with ErrTxConflict, changing nothing, if the parent was
// written after Begin (one writer at a time is the model).
func (t *Tx) Commit() error {
	if t.done {
		return ErrTxDone
	}
	t.done = true
	t.Host.mu.Lock()
	defer t.Host.mu.Unlock()
	p := t.parent
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.version != t.base {
		return ErrTxConflict
	}
	if t.Host.version == 0 {
		return nil // read only: nothing to publish
	}
	t.Host.st.shared.Store(true)
	p.st = t.Host.st
	p.version++
	return nil
}

// Rollback discards the transaction's writes.
func (t *Tx) Rollback() error {
	if t.done {
		return ErrTxDone
	}
	t.done = true
	return nil
}

// Snapshot is the whole contents of a Host in canonical order: points by
// coordinate, edges by (from, to, label). Two hosts hold the same data iff
// their Snapshots are reflect.DeepEqual.
type Snapshot struct {
	Points []vm.Point
	Edges  []vm.Edge
}

// Snapshot returns a copy of h's contents.
func (h *Host) Snapshot() Snapshot {
	h.mu.RLock()
	defer h.mu.RUnlock()
	var s Snapshot
	for _, k := range h.st.sortedKeys() {
		s.Points = append(s.Points, vm.Point{Coord: decode(k), Value: bytes.Clone(h.st.values[k])})
	}
	ek := make([]edgeKey, 0, len(h.st.edges))
	for e := range h.st.edges {
		ek = append(ek, e)
	}
	sort.Slice(ek, func(i, j int) bool {
		a, b := ek[i], ek[j]
		if a.from != b.from {
			return a.from < b.from
		}
		if a.to != b.to {
			return a.to < b.to
		}
		return a.label < b.label
	})
	for _, e := range ek {
		v := h.st.edges[e]
		s.Edges = append(s.Edges, vm.Edge{From: decode(e.from), To: decode(e.to), Label: e.label, Weight: v.weight, Value: bytes.Clone(v.value)})
	}
	return s
}

// String renders the snapshot one point or edge per line, for test
// failure messages.
func (s Snapshot) String() string {
	var b strings.Builder
	for _, p := range s.Points {
		fmt.Fprintf(&b, "%v = %q\n", p.Coord, p.Value)
	}
	for _, e := range s.Edges {
		fmt.Fprintf(&b, "%v -[%s %g]-> %v = %q\n", e.From, e.Label, e.Weight, e.To, e.Value)
	}
	return b.String()
}

// Clone returns an independent host with h's contents and flags.
func (h *Host) Clone() *Host {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.st.shared.Store(true)
	return &Host{dims: h.dims, st: h.st, readOnly: h.readOnly, fail: h.fail}
}
