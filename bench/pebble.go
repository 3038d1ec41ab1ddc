package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"

	"github.com/cockroachdb/pebble"
)

// pebbleStore is Pebble with the same 12-byte keys as bbolt after a
// prefix byte: 'p' for points, 'e' for edges (from|to, weight as value).
type pebbleStore struct {
	dir string
	db  *pebble.DB
}

func (s *pebbleStore) name() string { return "Pebble" }

func pkey(prefix byte, p point) []byte {
	k := make([]byte, 13)
	k[0] = prefix
	putKey(k[1:], p)
	return k
}

func (s *pebbleStore) load(ctx context.Context, d *dataset) (err error) {
	// A block cache that holds the whole data set (~150 MB), as bbolt's
	// memory map and cube's memory do; the default 8 MB makes every
	// query decompress blocks again.
	cache := pebble.NewCache(512 << 20)
	defer cache.Unref()
	s.db, err = pebble.Open(filepath.Join(s.dir, "pebble"), &pebble.Options{Cache: cache})
	if err != nil {
		return err
	}
	const batch = 100000
	for i := 0; i < len(d.pts); i += batch {
		b := s.db.NewBatch()
		for _, p := range d.pts[i:min(i+batch, len(d.pts))] {
			if err := b.Set(pkey('p', p), value(p), nil); err != nil {
				return err
			}
		}
		if err := b.Commit(pebble.NoSync); err != nil {
			return err
		}
	}
	ekeys := edgeKeys(d)
	for i := 0; i < len(ekeys); i += batch {
		b := s.db.NewBatch()
		for _, kv := range ekeys[i:min(i+batch, len(ekeys))] {
			if err := b.Set(append([]byte{'e'}, kv[0]...), kv[1], nil); err != nil {
				return err
			}
		}
		if err := b.Commit(pebble.NoSync); err != nil {
			return err
		}
	}
	// At rest: the memtable flushed and the tree compacted, so that no
	// background work runs during the queries.
	if err := s.db.Flush(); err != nil {
		return err
	}
	return s.db.Compact([]byte{'a'}, []byte{'z'}, true)
}

func (s *pebbleStore) close() error {
	if s.db == nil {
		return nil
	}
	return s.db.Close()
}

// pebbleCursor hides the prefix byte from the skip-scan.
type pebbleCursor struct {
	it  *pebble.Iterator
	buf [13]byte
}

func (c *pebbleCursor) at(ok bool) ([]byte, []byte) {
	if !ok {
		return nil, nil
	}
	return c.it.Key()[1:], c.it.Value()
}

func (c *pebbleCursor) seek(k []byte) ([]byte, []byte) {
	c.buf[0] = 'p'
	copy(c.buf[1:], k)
	return c.at(c.it.SeekGE(c.buf[:]))
}

func (c *pebbleCursor) next() ([]byte, []byte) { return c.at(c.it.Next()) }

func (s *pebbleStore) scan(lo, hi point, visit func(point, []byte)) error {
	it, err := s.db.NewIter(&pebble.IterOptions{
		LowerBound: pkey('p', lo),
		UpperBound: pkey('p', point{hi[0] + 1, math.MinInt32, math.MinInt32}),
	})
	if err != nil {
		return err
	}
	skipScan(&pebbleCursor{it: it}, lo, hi, visit)
	return it.Close()
}

func (s *pebbleStore) box(ctx context.Context, lo, hi point, a *answer) error {
	return s.scan(lo, hi, a.add)
}

func (s *pebbleStore) within(ctx context.Context, c point, r float64, a *answer) error {
	lo, hi := around(c, r)
	r2 := int64(math.Floor(r * r))
	return s.scan(lo, hi, func(p point, v []byte) {
		if dist2(p, c) <= r2 {
			a.add(p, v)
		}
	})
}

func (s *pebbleStore) get(ctx context.Context, p point, a *answer) error {
	var k [13]byte
	k[0] = 'p'
	putKey(k[1:], p)
	v, closer, err := s.db.Get(k[:])
	if err != nil {
		return fmt.Errorf("pebble: get %v: %w", p, err)
	}
	a.add(p, v)
	return closer.Close()
}

func (s *pebbleStore) edges() (edgesFunc, func() error, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{'e'}, UpperBound: []byte{'f'}})
	if err != nil {
		return nil, nil, err
	}
	var prefix [13]byte
	prefix[0] = 'e'
	return func(from point, visit func(point, float64)) {
		putKey(prefix[1:], from)
		for ok := it.SeekGE(prefix[:]); ok && hasPrefix(it.Key(), prefix[:]); ok = it.Next() {
			visit(getKey(it.Key()[13:]), math.Float64frombits(binary.BigEndian.Uint64(it.Value())))
		}
	}, it.Close, nil
}

func (s *pebbleStore) walk(ctx context.Context, start point, hops int) (walkAnswer, error) {
	edges, done, err := s.edges()
	if err != nil {
		return walkAnswer{}, err
	}
	a := bfs(edges, start, hops)
	return a, done()
}

func (s *pebbleStore) path(ctx context.Context, from, to point, hops int) ([]point, float64, bool, error) {
	edges, done, err := s.edges()
	if err != nil {
		return nil, 0, false, err
	}
	p, w, ok := boundedPath(edges, from, to, hops)
	return p, w, ok, done()
}
