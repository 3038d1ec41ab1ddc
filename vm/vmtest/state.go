package vmtest

import (
	"encoding/binary"
	"sort"
	"sync"
	"sync/atomic"
)

// key encodes a coordinate so that byte order equals lexicographic
// coordinate order: each axis big-endian with the sign bit flipped.
func key(c []int32) string {
	b := make([]byte, 4*len(c))
	for i, v := range c {
		binary.BigEndian.PutUint32(b[4*i:], uint32(v)^0x80000000)
	}
	return string(b)
}

func decode(k string) []int32 {
	c := make([]int32, len(k)/4)
	for i := range c {
		c[i] = int32(binary.BigEndian.Uint32([]byte(k[4*i:4*i+4])) ^ 0x80000000)
	}
	return c
}

type edgeKey struct{ from, to, label string }

type edgeVal struct {
	weight float64
	value  []byte
}

// state is the contents of a host. It is immutable once shared: a host
// that wants to write a shared state clones it first (copy on write), which
// makes Begin cheap for transactions that only read.
type state struct {
	values map[string][]byte
	edges  map[edgeKey]edgeVal
	out    map[string]map[edgeKey]struct{}
	in     map[string]map[edgeKey]struct{}
	shared atomic.Bool

	mu     sync.Mutex // guards sorted, which readers build lazily
	sorted []string   // keys of values in order; nil = stale
}

func newState() *state {
	return &state{
		values: map[string][]byte{},
		edges:  map[edgeKey]edgeVal{},
		out:    map[string]map[edgeKey]struct{}{},
		in:     map[string]map[edgeKey]struct{}{},
	}
}

func (s *state) clone() *state {
	n := newState()
	for k, v := range s.values {
		n.values[k] = v // values are never mutated in place
	}
	for k, v := range s.edges {
		n.edges[k] = v
	}
	for _, idx := range []struct {
		dst, src map[string]map[edgeKey]struct{}
	}{{n.out, s.out}, {n.in, s.in}} {
		for k, set := range idx.src {
			m := make(map[edgeKey]struct{}, len(set))
			for e := range set {
				m[e] = struct{}{}
			}
			idx.dst[k] = m
		}
	}
	return n
}

func (s *state) sortedKeys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sorted == nil {
		ks := make([]string, 0, len(s.values))
		for k := range s.values {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		s.sorted = ks
	}
	return s.sorted
}

func (s *state) invalidate() {
	s.mu.Lock()
	s.sorted = nil
	s.mu.Unlock()
}

func (s *state) put(k string, v []byte) {
	if _, ok := s.values[k]; !ok {
		s.invalidate()
	}
	s.values[k] = append([]byte{}, v...)
}

func (s *state) del(k string) bool {
	if _, ok := s.values[k]; !ok {
		return false
	}
	delete(s.values, k)
	s.invalidate()
	return true
}

func (s *state) link(e edgeKey, v edgeVal) {
	s.edges[e] = v
	add := func(idx map[string]map[edgeKey]struct{}, k string) {
		m := idx[k]
		if m == nil {
			m = map[edgeKey]struct{}{}
			idx[k] = m
		}
		m[e] = struct{}{}
	}
	add(s.out, e.from)
	add(s.in, e.to)
}

func (s *state) unlink(e edgeKey) bool {
	if _, ok := s.edges[e]; !ok {
		return false
	}
	delete(s.edges, e)
	rm := func(idx map[string]map[edgeKey]struct{}, k string) {
		delete(idx[k], e)
		if len(idx[k]) == 0 {
			delete(idx, k)
		}
	}
	rm(s.out, e.from)
	rm(s.in, e.to)
	return true
}
