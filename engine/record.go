package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// A log record, and a checkpoint record, is a sequence of ops. One
// transaction is one log record, so recovery applies all of its ops or, if
// the record is torn, none of them. A checkpoint is the ops that rebuild
// the state, so one decoder serves both.
//
// Op layout (all integers little-endian; uv = uvarint):
//
//	kind:1 ns:uv ...
//	opNSCreate  name:uv+bytes dims:1 curve:1 maxValue:uv
//	opNSDrop    (nothing)
//	opPut       dims:1 coord:dims*4 value:uv+bytes
//	opDel       dims:1 coord:dims*4
//	opLink      dims:1 from:dims*4 to:dims*4 label:uv+bytes weight:8 value:uv+bytes
//	opUnlink    dims:1 from:dims*4 to:dims*4 label:uv+bytes
//	opMetaPut   key:uv+bytes value:uv+bytes
//	opMetaDel   key:uv+bytes
//
// The curve byte of opNSCreate is the curve's kind (0 Hilbert, 1 Morton)
// with the bit curveGeo set for a geo namespace. Stores written before
// geo namespaces never set it, so they open as they were; a cube that
// predates the bit refuses the byte as an unknown curve rather than
// reading degrees as plain integers.
type opKind uint8

// curveGeo marks a geo namespace in the curve byte of opNSCreate.
const curveGeo = 0x80

const (
	opNSCreate opKind = iota + 1
	opNSDrop
	opPut
	opDel
	opLink
	opUnlink
	opMetaPut
	opMetaDel
	opMax
)

// op is a decoded op. Slices point into the record being decoded.
type op struct {
	kind     opKind
	ns       uint64
	name     string // namespace name, meta key or edge label
	dims     int
	curve    uint8
	maxValue uint64
	c, to    pkey
	value    []byte
	weight   float64
}

var errShortRecord = errors.New("record ends inside an op")

// opEncoder appends ops to a reusable buffer.
type opEncoder struct{ b []byte }

func (e *opEncoder) reset() { e.b = e.b[:0] }

func (e *opEncoder) head(k opKind, ns uint64) {
	e.b = append(e.b, byte(k))
	e.b = binary.AppendUvarint(e.b, ns)
}

func (e *opEncoder) bytes(p []byte) {
	e.b = binary.AppendUvarint(e.b, uint64(len(p)))
	e.b = append(e.b, p...)
}

func (e *opEncoder) str(s string) {
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
}

func (e *opEncoder) coord(c []int32) {
	for _, x := range c {
		e.b = binary.LittleEndian.AppendUint32(e.b, uint32(x))
	}
}

func (e *opEncoder) nsCreate(id uint64, name string, dims int, curve uint8, maxValue uint64) {
	e.head(opNSCreate, id)
	e.str(name)
	e.b = append(e.b, byte(dims), curve)
	e.b = binary.AppendUvarint(e.b, maxValue)
}

func (e *opEncoder) nsDrop(id uint64) { e.head(opNSDrop, id) }

func (e *opEncoder) put(ns uint64, c []int32, v []byte) {
	e.head(opPut, ns)
	e.b = append(e.b, byte(len(c)))
	e.coord(c)
	e.bytes(v)
}

func (e *opEncoder) del(ns uint64, c []int32) {
	e.head(opDel, ns)
	e.b = append(e.b, byte(len(c)))
	e.coord(c)
}

func (e *opEncoder) link(ns uint64, from, to []int32, label string, w float64, v []byte) {
	e.head(opLink, ns)
	e.b = append(e.b, byte(len(from)))
	e.coord(from)
	e.coord(to)
	e.str(label)
	e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(w))
	e.bytes(v)
}

func (e *opEncoder) unlink(ns uint64, from, to []int32, label string) {
	e.head(opUnlink, ns)
	e.b = append(e.b, byte(len(from)))
	e.coord(from)
	e.coord(to)
	e.str(label)
}

func (e *opEncoder) metaPut(ns uint64, key string, v []byte) {
	e.head(opMetaPut, ns)
	e.str(key)
	e.bytes(v)
}

func (e *opEncoder) metaDel(ns uint64, key string) {
	e.head(opMetaDel, ns)
	e.str(key)
}

// opDecoder walks the ops of one record. It never panics on bad input:
// every length is checked against what is left.
type opDecoder struct {
	b   []byte
	off int
}

func (d *opDecoder) fail(what string) error {
	return fmt.Errorf("bad op at byte %d: %s", d.off, what)
}

func (d *opDecoder) uvarint() (uint64, bool) {
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		return 0, false
	}
	d.off += n
	return v, true
}

func (d *opDecoder) slice() ([]byte, bool) {
	n, ok := d.uvarint()
	if !ok || n > uint64(len(d.b)-d.off) {
		return nil, false
	}
	s := d.b[d.off : d.off+int(n) : d.off+int(n)]
	d.off += int(n)
	return s, true
}

func (d *opDecoder) coord(dims int, k *pkey) bool {
	if len(d.b)-d.off < dims*4 {
		return false
	}
	*k = pkey{}
	for i := 0; i < dims; i++ {
		k[i] = int32(binary.LittleEndian.Uint32(d.b[d.off:]))
		d.off += 4
	}
	return true
}

func (d *opDecoder) dims(o *op) bool {
	if d.off >= len(d.b) {
		return false
	}
	o.dims = int(d.b[d.off])
	d.off++
	return o.dims >= 1 && o.dims <= MaxDims
}

// next decodes the next op into o. It returns false at the end of the
// record, and an error if the bytes are not a valid op.
func (d *opDecoder) next(o *op) (bool, error) {
	if d.off >= len(d.b) {
		return false, nil
	}
	*o = op{kind: opKind(d.b[d.off])} // nothing of the previous op may leak into this one
	if o.kind == 0 || o.kind >= opMax {
		return false, d.fail(fmt.Sprintf("unknown kind %d", o.kind))
	}
	d.off++
	var ok bool
	if o.ns, ok = d.uvarint(); !ok {
		return false, d.fail("namespace id")
	}
	var s []byte
	switch o.kind {
	case opNSCreate:
		if s, ok = d.slice(); !ok {
			return false, d.fail("namespace name")
		}
		o.name = string(s)
		if len(d.b)-d.off < 2 {
			return false, d.fail(errShortRecord.Error())
		}
		o.dims, o.curve = int(d.b[d.off]), d.b[d.off+1]
		d.off += 2
		if o.dims < 1 || o.dims > MaxDims {
			return false, d.fail("dims")
		}
		if o.maxValue, ok = d.uvarint(); !ok {
			return false, d.fail("max value size")
		}
	case opNSDrop:
	case opPut, opDel:
		if !d.dims(o) || !d.coord(o.dims, &o.c) {
			return false, d.fail("coordinate")
		}
		if o.kind == opPut {
			if o.value, ok = d.slice(); !ok {
				return false, d.fail("value")
			}
		}
	case opLink, opUnlink:
		if !d.dims(o) || !d.coord(o.dims, &o.c) || !d.coord(o.dims, &o.to) {
			return false, d.fail("coordinate")
		}
		if s, ok = d.slice(); !ok {
			return false, d.fail("label")
		}
		o.name = string(s)
		if o.kind == opLink {
			if len(d.b)-d.off < 8 {
				return false, d.fail("weight")
			}
			o.weight = math.Float64frombits(binary.LittleEndian.Uint64(d.b[d.off:]))
			d.off += 8
			if o.value, ok = d.slice(); !ok {
				return false, d.fail("value")
			}
		}
	case opMetaPut, opMetaDel:
		if s, ok = d.slice(); !ok {
			return false, d.fail("meta key")
		}
		o.name = string(s)
		if o.kind == opMetaPut {
			if o.value, ok = d.slice(); !ok {
				return false, d.fail("meta value")
			}
		}
	}
	return true, nil
}
