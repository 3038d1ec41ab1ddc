package plugins

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/cubelinux/cube/vm"
)

// Metadata keys of the registry inside a namespace.
const (
	progPrefix = "prog/"
	statPrefix = "progstat/"
)

// MaxNameLen bounds program names.
const MaxNameLen = 128

// recordFormat is the first byte of a stored program record. A record in
// another format is refused with ErrBadRecord rather than misread.
const recordFormat = 1

// record is a program as stored:
//
//	format u8 | version [32]u8 | registered varint (unix ns) | body
//	body = kind u8 | flags u8 | isolation u8 | 5 × varint limits
//	       (timeout ns, memory, output, writes, host calls) | code
//
// version is the SHA-256 of body, so identical code with identical options
// has the same version whenever it was registered.
type record struct {
	version    [32]byte
	registered time.Time
	kind       vm.Kind
	readOnly   bool
	limits     vm.Limits // as given (zero fields: the registry's defaults)
	code       []byte
}

const (
	kindWASM = 1
	kindJS   = 2
)

func kindByte(k vm.Kind) (byte, error) {
	switch k {
	case vm.WASM:
		return kindWASM, nil
	case vm.JS:
		return kindJS, nil
	}
	return 0, fmt.Errorf("%w: %q", ErrBadKind, k)
}

// appendBody appends to b everything the version covers.
func (r *record) appendBody(b []byte) ([]byte, error) {
	kb, err := kindByte(r.kind)
	if err != nil {
		return nil, err
	}
	var flags byte
	if r.readOnly {
		flags |= 1
	}
	b = append(b, kb, flags, byte(r.limits.Isolation))
	b = binary.AppendVarint(b, int64(r.limits.Timeout))
	b = binary.AppendVarint(b, r.limits.MemoryBytes)
	b = binary.AppendVarint(b, r.limits.OutputBytes)
	b = binary.AppendVarint(b, r.limits.Writes)
	b = binary.AppendVarint(b, r.limits.HostCalls)
	return append(b, r.code...), nil
}

// seal computes the version and returns the stored form, whose tail r.code
// then aliases (a stored record is never changed). The body is encoded in
// place after the header and hashed there, and the version written back
// into the header: the code is copied once, where it was copied three
// times, and a Go guest's is megabytes of fresh memory each time.
func (r *record) seal() ([]byte, error) {
	b := make([]byte, 1+32, 1+32+binary.MaxVarintLen64+3+5*binary.MaxVarintLen64+len(r.code))
	b[0] = recordFormat
	b = binary.AppendVarint(b, r.registered.UnixNano())
	start := len(b)
	b, err := r.appendBody(b)
	if err != nil {
		return nil, err
	}
	r.version = sha256.Sum256(b[start:])
	copy(b[1:33], r.version[:])
	r.code = b[len(b)-len(r.code):]
	return b, nil
}

// recordVersion returns the version of a stored record without decoding
// the rest, for the per-run check.
func recordVersion(b []byte) ([]byte, bool) {
	if len(b) < 33 || b[0] != recordFormat {
		return nil, false
	}
	return b[1:33], true
}

// decodeRecord decodes a stored record and checks its version against its
// content. The code aliases b.
func decodeRecord(b []byte) (*record, error) {
	bad := func(why string) error { return fmt.Errorf("%w: program record: %s", ErrBadRecord, why) }
	if len(b) < 33 {
		return nil, bad("short")
	}
	if b[0] != recordFormat {
		return nil, bad(fmt.Sprintf("format %d (this cube reads %d)", b[0], recordFormat))
	}
	r := &record{}
	copy(r.version[:], b[1:33])
	p := b[33:]
	ts, n := binary.Varint(p)
	if n <= 0 {
		return nil, bad("registration time")
	}
	r.registered = time.Unix(0, ts).UTC()
	body := p[n:]
	if sha256.Sum256(body) != r.version {
		return nil, bad("version does not match content")
	}
	if len(body) < 3 {
		return nil, bad("short body")
	}
	switch body[0] {
	case kindWASM:
		r.kind = vm.WASM
	case kindJS:
		r.kind = vm.JS
	default:
		return nil, bad(fmt.Sprintf("kind %d", body[0]))
	}
	if body[1]&^1 != 0 {
		return nil, bad(fmt.Sprintf("flags %#x", body[1]))
	}
	r.readOnly = body[1]&1 != 0
	if body[2] > byte(vm.Reuse) {
		return nil, bad(fmt.Sprintf("isolation %d", body[2]))
	}
	r.limits.Isolation = vm.Isolation(body[2])
	p = body[3:]
	var vals [5]int64
	for i := range vals {
		v, n := binary.Varint(p)
		if n <= 0 {
			return nil, bad("limits")
		}
		vals[i], p = v, p[n:]
	}
	r.limits.Timeout = time.Duration(vals[0])
	r.limits.MemoryBytes = vals[1]
	r.limits.OutputBytes = vals[2]
	r.limits.Writes = vals[3]
	r.limits.HostCalls = vals[4]
	if len(p) == 0 {
		return nil, bad("no code")
	}
	r.code = p
	return r, nil
}

func (r *record) versionString() string { return hex.EncodeToString(r.version[:]) }

// checkName enforces the program name rules (see ErrBadName).
func checkName(name string) error {
	if name == "" || len(name) > MaxNameLen {
		return fmt.Errorf("%w: %q must be 1..%d characters", ErrBadName, name, MaxNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '.', c == '-':
		default:
			return fmt.Errorf("%w: %q has %q; use letters, digits and _ . -", ErrBadName, name, c)
		}
	}
	return nil
}
