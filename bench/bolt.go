package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// boltStore is bbolt with the 12-byte keys in bucket "p" and the edges in
// bucket "e" under from|to keys (24 bytes) with the weight as value: a
// node's out-edges are one prefix.
type boltStore struct {
	dir string
	db  *bolt.DB
}

var (
	boltPoints = []byte("p")
	boltEdges  = []byte("e")
)

func (s *boltStore) name() string { return "bbolt" }

func (s *boltStore) load(ctx context.Context, d *dataset) (err error) {
	s.db, err = bolt.Open(filepath.Join(s.dir, "bolt.db"), 0o600, &bolt.Options{NoSync: true, NoFreelistSync: true})
	if err != nil {
		return err
	}
	// Keys in order, pages filled: bbolt's best case for a bulk load.
	keys := make([][]byte, len(d.pts))
	for i, p := range d.pts {
		keys[i] = key3(p)
	}
	slices.SortFunc(keys, func(a, b []byte) int { return bytesCompare(a, b) })
	const batch = 10000
	for i := 0; i < len(keys); i += batch {
		err := s.db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(boltPoints)
			if err != nil {
				return err
			}
			b.FillPercent = 1
			for _, k := range keys[i:min(i+batch, len(keys))] {
				if err := b.Put(k, value(getKey(k))); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	ekeys := edgeKeys(d)
	for i := 0; i < len(ekeys); i += batch {
		err := s.db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(boltEdges)
			if err != nil {
				return err
			}
			b.FillPercent = 1
			for _, kv := range ekeys[i:min(i+batch, len(ekeys))] {
				if err := b.Put(kv[0], kv[1]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return s.db.Sync()
}

// edgeKeys are the graph's edges as sorted from|to keys with the weight
// (float64 bits, big-endian) as value.
func edgeKeys(d *dataset) [][2][]byte {
	var kv [][2][]byte
	for u, es := range d.adj {
		for _, e := range es {
			k := append(key3(d.pts[u]), key3(d.pts[e.to])...)
			kv = append(kv, [2][]byte{k, binary.BigEndian.AppendUint64(nil, math.Float64bits(e.w))})
		}
	}
	slices.SortFunc(kv, func(a, b [2][]byte) int { return bytesCompare(a[0], b[0]) })
	return kv
}

func (s *boltStore) close() error {
	if s.db == nil {
		return nil
	}
	return s.db.Close()
}

type boltCursor struct{ c *bolt.Cursor }

func (c boltCursor) seek(k []byte) ([]byte, []byte) { return c.c.Seek(k) }
func (c boltCursor) next() ([]byte, []byte)         { return c.c.Next() }

func (s *boltStore) box(ctx context.Context, lo, hi point, a *answer) error {
	return s.db.View(func(tx *bolt.Tx) error {
		skipScan(boltCursor{tx.Bucket(boltPoints).Cursor()}, lo, hi, a.add)
		return nil
	})
}

func (s *boltStore) within(ctx context.Context, c point, r float64, a *answer) error {
	lo, hi := around(c, r)
	r2 := int64(math.Floor(r * r))
	return s.db.View(func(tx *bolt.Tx) error {
		skipScan(boltCursor{tx.Bucket(boltPoints).Cursor()}, lo, hi, func(p point, v []byte) {
			if dist2(p, c) <= r2 {
				a.add(p, v)
			}
		})
		return nil
	})
}

func (s *boltStore) get(ctx context.Context, p point, a *answer) error {
	var k [12]byte
	putKey(k[:], p)
	return s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(boltPoints).Get(k[:])
		if v == nil {
			return fmt.Errorf("bbolt: %v not found", p)
		}
		a.add(p, v)
		return nil
	})
}

// boltEdgesOf is a node's out-edges read from one cursor.
func boltEdgesOf(c *bolt.Cursor) func(from point, visit func(to point, w float64)) {
	var prefix [12]byte
	return func(from point, visit func(point, float64)) {
		putKey(prefix[:], from)
		for k, v := c.Seek(prefix[:]); k != nil && hasPrefix(k, prefix[:]); k, v = c.Next() {
			visit(getKey(k[12:]), math.Float64frombits(binary.BigEndian.Uint64(v)))
		}
	}
}

func (s *boltStore) walk(ctx context.Context, start point, hops int) (a walkAnswer, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		a = bfs(boltEdgesOf(tx.Bucket(boltEdges).Cursor()), start, hops)
		return nil
	})
	return a, err
}

func (s *boltStore) path(ctx context.Context, from, to point, hops int) (p []point, w float64, ok bool, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		p, w, ok = boundedPath(boltEdgesOf(tx.Bucket(boltEdges).Cursor()), from, to, hops)
		return nil
	})
	return p, w, ok, err
}
