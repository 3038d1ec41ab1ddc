package main

import "bytes"

// cursor is what the skip-scan needs of an ordered key-value store: seek
// to the first key >= k, step to the next one. Both return nil at the end.
type cursor interface {
	seek(k []byte) (key, val []byte)
	next() (key, val []byte)
}

// skipScan visits every point in the box [lo, hi] over keys ordered by x,
// then y, then z: inside a (x, y) row it reads keys in order; a key
// outside the box's y or z range makes it seek straight to the next row
// that can hold one, so it touches one key per occupied row of the box
// plus the points themselves, not every (x, y) pair.
func skipScan(c cursor, lo, hi point, visit func(p point, v []byte)) {
	var target [12]byte
	putKey(target[:], lo)
	k, v := c.seek(target[:])
	for k != nil {
		p := getKey(k)
		switch {
		case p[0] > hi[0]:
			return
		case p[0] < lo[0]:
			putKey(target[:], point{lo[0], lo[1], lo[2]})
		case p[1] < lo[1]:
			putKey(target[:], point{p[0], lo[1], lo[2]})
		case p[1] > hi[1]:
			if p[0] == hi[0] {
				return
			}
			putKey(target[:], point{p[0] + 1, lo[1], lo[2]})
		case p[2] < lo[2]:
			putKey(target[:], point{p[0], p[1], lo[2]})
		case p[2] > hi[2]:
			if p[1] == hi[1] {
				if p[0] == hi[0] {
					return
				}
				putKey(target[:], point{p[0] + 1, lo[1], lo[2]})
			} else {
				putKey(target[:], point{p[0], p[1] + 1, lo[2]})
			}
		default:
			visit(p, v)
			k, v = c.next()
			continue
		}
		if bytes.Compare(target[:], k) <= 0 {
			// Cannot happen for a key outside the box (each target is
			// past it), but a wrong target must not loop forever.
			panic("skipScan: seek target not past the key")
		}
		k, v = c.seek(target[:])
	}
}

// hasPrefix reports whether k starts with p.
func hasPrefix(k, p []byte) bool { return len(k) >= len(p) && bytes.Equal(k[:len(p)], p) }
