//go:build 386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm

package plugins

import "unsafe"

// putCoords writes cs as little-endian i32s at the start of dst. On a
// little-endian machine that is cs's own memory, copied in one move: a
// loop of stores cost region_columns a fifth of its time (coords_other.go
// has the loop for the others).
func putCoords(dst []byte, cs []int32) {
	copy(dst[:4*len(cs)], unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(cs))), 4*len(cs)))
}
