package instrument

import (
	"errors"
	"fmt"
)

var errEOF = errors.New("unexpected end")

// reader walks a byte slice. The first error sticks: later reads return
// zero values, so a parser can read a whole record and check err once.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

func (r *reader) eof() bool { return r.err != nil || r.off >= len(r.b) }

func (r *reader) byte() byte {
	if r.err != nil {
		return 0
	}
	if r.off >= len(r.b) {
		r.err = errEOF
		return 0
	}
	r.off++
	return r.b[r.off-1]
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b)-r.off {
		r.err = errEOF
		return nil
	}
	r.off += n
	return r.b[r.off-n : r.off]
}

// u32 reads an unsigned LEB128 of at most 5 bytes, as wazero does.
func (r *reader) u32() uint32 {
	var v uint32
	for i := 0; i < 5; i++ {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		if c < 0x80 {
			if i == 4 && c&0xf0 != 0 {
				r.fail("LEB128 overflows 32 bits")
				return 0
			}
			return v | uint32(c)<<(7*i)
		}
		v |= uint32(c&0x7f) << (7 * i)
	}
	r.fail("LEB128 overflows 32 bits")
	return 0
}

// sleb reads a signed LEB128 of at most max bytes (5 for s32 and s33, 10
// for s64) and returns its value sign-extended to 64 bits. It checks only
// the length: the value's range is wazero's to validate.
func (r *reader) sleb(max int) int64 {
	var v int64
	for i := 0; i < max; i++ {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		v |= int64(c&0x7f) << (7 * i)
		if c < 0x80 {
			if s := 7 * (i + 1); s < 64 && c&0x40 != 0 {
				v |= -1 << s
			}
			return v
		}
	}
	r.fail("LEB128 longer than %d bytes", max)
	return 0
}

// name reads a length-prefixed string.
func (r *reader) name() string { return string(r.bytes(int(r.u32()))) }

// Value types as they appear in the binary format. Reference types of the
// function-references proposal are a prefix byte and a heap type.
const (
	typeV128        = 0x7b
	refNullPrefix   = 0x63
	refNonNullPrefx = 0x64
)

// valType reads one value type and returns its raw encoding and the number
// of 8-byte slots a value of it takes (v128: 2, every other type: 1).
func (r *reader) valType() (raw []byte, slots uint8) {
	start := r.off
	switch b := r.byte(); b {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x70, 0x6f, 0x69:
		slots = 1
	case typeV128:
		slots = 2
	case refNullPrefix, refNonNullPrefx:
		r.sleb(5) // heap type, s33
		slots = 1
	default:
		r.fail("invalid value type 0x%x", b)
	}
	if r.err != nil {
		return nil, 0
	}
	return r.b[start:r.off], slots
}
