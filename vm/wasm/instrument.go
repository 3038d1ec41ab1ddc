package wasm

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// entryCheck is an empty loop, "loop end". wazero checks whether the
// run's context is done at every loop header it compiles; placing one at
// the start of every function body extends that check to function entry,
// so a program that recurses without looping (an exponential call tree,
// say) still stops at its deadline. It costs one indirect call per guest
// call.
var entryCheck = []byte{0x03, 0x40, 0x0b}

const codeSection = 10

// instrument returns a copy of the module with entryCheck prepended to
// every function body. It parses only the section framing and the code
// section's body and locals headers; wazero validates everything else.
func instrument(mod []byte) ([]byte, error) {
	if len(mod) < 8 || string(mod[:4]) != "\x00asm" {
		return nil, errors.New("not a WebAssembly binary (bad magic number)")
	}
	if binary.LittleEndian.Uint32(mod[4:8]) != 1 {
		return nil, fmt.Errorf("unsupported WebAssembly binary version %d", binary.LittleEndian.Uint32(mod[4:8]))
	}
	out := make([]byte, 0, len(mod)+64)
	out = append(out, mod[:8]...)
	r := reader{b: mod, off: 8}
	for r.off < len(r.b) {
		start := r.off
		id := r.byte()
		size := r.u32()
		if r.err != nil {
			return nil, r.err
		}
		if uint64(size) > uint64(len(r.b)-r.off) {
			return nil, fmt.Errorf("section %d at offset %d: size %d runs past the end", id, start, size)
		}
		payload := r.b[r.off : r.off+int(size)]
		r.off += int(size)
		if id != codeSection {
			out = append(out, r.b[start:r.off]...)
			continue
		}
		code, err := instrumentCode(payload)
		if err != nil {
			return nil, fmt.Errorf("code section at offset %d: %w", start, err)
		}
		out = append(out, codeSection)
		out = binary.AppendUvarint(out, uint64(len(code)))
		out = append(out, code...)
	}
	return out, nil
}

func instrumentCode(p []byte) ([]byte, error) {
	r := reader{b: p}
	n := r.u32()
	out := binary.AppendUvarint(make([]byte, 0, len(p)+int(min(n, 1<<20))*4), uint64(n))
	for i := uint32(0); i < n && r.err == nil; i++ {
		size := r.u32()
		if r.err != nil {
			break
		}
		if uint64(size) > uint64(len(r.b)-r.off) {
			return nil, fmt.Errorf("function %d: body size %d runs past the section", i, size)
		}
		body := reader{b: r.b[r.off : r.off+int(size)]}
		r.off += int(size)
		groups := body.u32()
		for g := uint32(0); g < groups && body.err == nil; g++ {
			body.u32()  // count
			body.byte() // value type: one byte in every proposal wazero supports
		}
		if body.err != nil {
			return nil, fmt.Errorf("function %d: locals: %w", i, body.err)
		}
		out = binary.AppendUvarint(out, uint64(len(body.b)+len(entryCheck)))
		out = append(out, body.b[:body.off]...)
		out = append(out, entryCheck...)
		out = append(out, body.b[body.off:]...)
	}
	if r.err != nil {
		return nil, r.err
	}
	if r.off != len(r.b) {
		return nil, fmt.Errorf("%d trailing bytes", len(r.b)-r.off)
	}
	return out, nil
}

type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) byte() byte {
	if r.err != nil {
		return 0
	}
	if r.off >= len(r.b) {
		r.err = errors.New("unexpected end")
		return 0
	}
	r.off++
	return r.b[r.off-1]
}

// u32 reads an unsigned LEB128 of at most 5 bytes.
func (r *reader) u32() uint32 {
	var v uint32
	for shift := 0; shift < 35; shift += 7 {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		if shift == 28 && c > 0x0f {
			r.err = errors.New("LEB128 overflows 32 bits")
			return 0
		}
		v |= uint32(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
	r.err = errors.New("LEB128 overflows 32 bits")
	return 0
}
