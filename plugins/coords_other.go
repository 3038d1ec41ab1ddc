//go:build !(386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm)

package plugins

import "encoding/binary"

// putCoords writes cs as little-endian i32s at the start of dst.
func putCoords(dst []byte, cs []int32) {
	dst = dst[:4*len(cs)]
	for i, x := range cs {
		binary.LittleEndian.PutUint32(dst[4*i:], uint32(x))
	}
}
