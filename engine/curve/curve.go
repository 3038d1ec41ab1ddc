package curve

import (
	"fmt"
	"sync"
)

// MaxDims is the largest number of dimensions a Curve supports.
const MaxDims = 8

// signBit maps int32 to uint32 preserving order: MinInt32 -> 0, -1 ->
// 0x7fffffff, 0 -> 0x80000000, MaxInt32 -> 0xffffffff.
const signBit = 0x80000000

// Curve maps points of dims signed 32-bit coordinates to Keys and back.
// A Curve is immutable and safe for concurrent use.
type Curve struct {
	kind  Kind
	dims  int
	n     uint // dims, as a shift count
	nbits uint // 32 * dims: used bits of a Key
	m     *hmachine
	tab   *htable // nil where dims has no Hilbert table
	pool  sync.Pool
}

// New returns the curve of the given kind over dims axes.
//
// # Errors
//
// dims outside 1..MaxDims returns an error wrapping ErrDims; an unknown kind
// one wrapping ErrKind.
func New(kind Kind, dims int) (*Curve, error) {
	if dims < 1 || dims > MaxDims {
		return nil, fmt.Errorf("%w: got %d", ErrDims, dims)
	}
	if kind != Hilbert && kind != Morton {
		return nil, fmt.Errorf("%w: %d", ErrKind, uint8(kind))
	}
	c := &Curve{kind: kind, dims: dims, n: uint(dims), nbits: 32 * uint(dims)}
	c.m = newMachine(c.n)
	if kind == Hilbert && tables[dims] != nil {
		c.tab = tables[dims]()
	}
	c.pool.New = func() any { return new(scratch) }
	return c, nil
}

// Dims returns the number of axes.
func (c *Curve) Dims() int { return c.dims }

// Kind returns the curve kind.
func (c *Curve) Kind() Kind { return c.kind }

// unsigned maps p to order-preserving unsigned coordinates. Missing axes
// (len(p) < dims) read as 0.
func (c *Curve) unsigned(p []int32, u *[8]uint32) {
	for j := 0; j < c.dims; j++ {
		var x int32
		if j < len(p) {
			x = p[j]
		}
		u[j] = uint32(x) ^ signBit
	}
}

// Encode returns the key of point p.
//
// # Notes
//
// p should have Dims coordinates. Extra coordinates are ignored and missing
// ones read as 0; Encode never reads past len(p) and never panics.
func (c *Curve) Encode(p []int32) Key {
	var k Key
	switch c.dims {
	case 1:
		if len(p) >= 1 {
			k[0] = uint64(uint32(p[0])^signBit) << 32
			return k
		}
	case 2:
		if len(p) >= 2 {
			m := morton2(uint32(p[0])^signBit, uint32(p[1])^signBit)
			if c.tab != nil {
				m = hilbert2(m, c.tab.enc)
			}
			k[0] = m
			return k
		}
	case 3:
		if len(p) >= 3 {
			hi, lo := morton3(uint32(p[0])^signBit, uint32(p[1])^signBit, uint32(p[2])^signBit)
			if c.tab != nil {
				hi, lo = hilbert3(hi, lo, c.tab.enc)
			}
			return key3(hi, lo)
		}
	}
	var u [8]uint32
	c.unsigned(p, &u)
	return c.encodeU(&u)
}

// encodeU is the general path from unsigned coordinates.
func (c *Curve) encodeU(u *[8]uint32) Key {
	var k Key
	switch c.dims {
	case 1:
		k[0] = uint64(u[0]) << 32
		return k
	case 2:
		k[0] = morton2(u[0], u[1])
	case 3:
		k = key3(morton3(u[0], u[1], u[2]))
	default:
		mortonN(&k, u, c.n)
	}
	if c.kind == Hilbert {
		c.toHilbert(&k)
	}
	return k
}

// toHilbert rewrites a Morton key of this curve's dims as a Hilbert key.
func (c *Curve) toHilbert(k *Key) {
	switch {
	case c.dims == 1:
	case c.dims == 2:
		k[0] = hilbert2(k[0], c.tab.enc)
	case c.dims == 3:
		hi, lo := split3(k)
		*k = key3(hilbert3(hi, lo, c.tab.enc))
	case c.tab != nil:
		c.tab.translate(k, c.tab.enc)
	default:
		c.m.encodeArith(k)
	}
}

// Decode writes the point of key k into p[:Dims].
//
// # Notes
//
// If len(p) < Dims only the first len(p) coordinates are written; Decode
// never panics. Bits of k past Dims*32 are ignored.
func (c *Curve) Decode(k Key, p []int32) {
	switch {
	case c.dims == 2 && len(p) >= 2:
		m := k[0]
		if c.tab != nil {
			m = hilbert2(m, c.tab.dec)
		}
		p[0], p[1] = int32(compact2(m>>1)^signBit), int32(compact2(m)^signBit)
		return
	case c.dims == 3 && len(p) >= 3:
		hi, lo := split3(&k)
		if c.tab != nil {
			hi, lo = hilbert3(hi, lo, c.tab.dec)
		}
		u0, u1, u2 := unmorton3(hi, lo)
		p[0], p[1], p[2] = int32(u0^signBit), int32(u1^signBit), int32(u2^signBit)
		return
	}
	var u [8]uint32
	c.decodeU(k, &u)
	for j := 0; j < c.dims && j < len(p); j++ {
		p[j] = int32(u[j] ^ signBit)
	}
}

// decodeU is Decode to unsigned coordinates.
func (c *Curve) decodeU(k Key, u *[8]uint32) {
	switch c.dims {
	case 1:
		u[0] = uint32(k[0] >> 32)
	case 2:
		m := k[0]
		if c.kind == Hilbert {
			m = hilbert2(m, c.tab.dec)
		}
		u[0], u[1] = compact2(m>>1), compact2(m)
	case 3:
		hi, lo := split3(&k)
		if c.kind == Hilbert {
			hi, lo = hilbert3(hi, lo, c.tab.dec)
		}
		u[0], u[1], u[2] = unmorton3(hi, lo)
	default:
		clearFrom(&k, c.nbits)
		if c.kind == Hilbert {
			if c.tab != nil {
				c.tab.translate(&k, c.tab.dec)
			} else {
				c.m.decodeArith(&k)
			}
		}
		unmortonN(&k, u, c.n)
	}
}
