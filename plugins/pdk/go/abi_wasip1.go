//go:build wasip1

package pdk

import "unsafe"

// The imports of ABI v1 (docs/ABI.md §3). Pointers are offsets into this
// module's memory; Go's garbage collector does not move objects, and each
// pointer is used by the host only during the call.

//go:wasmimport cube_v1 args_len
func abiArgsLen() int32

//go:wasmimport cube_v1 args_read
func abiArgsRead(buf unsafe.Pointer, cap uint32) int32

//go:wasmimport cube_v1 output_write
func abiOutputWrite(data unsafe.Pointer, n uint32) int32

//go:wasmimport cube_v1 log
func abiLog(msg unsafe.Pointer, n uint32) int32

//go:wasmimport cube_v1 set_error
func abiSetError(msg unsafe.Pointer, n uint32) int32

//go:wasmimport cube_v1 dims
func abiDims() int32

//go:wasmimport cube_v1 get
func abiGet(coord, val unsafe.Pointer, cap uint32, lenOut unsafe.Pointer) int32

//go:wasmimport cube_v1 put
func abiPut(coord, val unsafe.Pointer, n uint32) int32

//go:wasmimport cube_v1 del
func abiDel(coord unsafe.Pointer) int32

//go:wasmimport cube_v1 region_open
func abiRegionOpen(min, max, cursorOut unsafe.Pointer) int32

//go:wasmimport cube_v1 region_next
func abiRegionNext(cursor uint32, buf unsafe.Pointer, cap uint32, nOut, bytesOut unsafe.Pointer) int32

//go:wasmimport cube_v1 cursor_close
func abiCursorClose(cursor uint32) int32

//go:wasmimport cube_v1 edges_open
func abiEdgesOpen(coord unsafe.Pointer, dir uint32, label unsafe.Pointer, labelLen uint32, cursorOut unsafe.Pointer) int32

//go:wasmimport cube_v1 edges_next
func abiEdgesNext(cursor uint32, buf unsafe.Pointer, cap uint32, nOut, bytesOut unsafe.Pointer) int32

//go:wasmimport cube_v1 link
func abiLink(from, to, label unsafe.Pointer, labelLen uint32, weight float64, val unsafe.Pointer, valLen uint32) int32

//go:wasmimport cube_v1 unlink
func abiUnlink(from, to, label unsafe.Pointer, labelLen uint32) int32

//go:wasmimport cube_v1 walk
func abiWalk(start unsafe.Pointer, order uint32, maxDepth int32, dir uint32, label unsafe.Pointer, labelLen uint32, limit int32, buf unsafe.Pointer, cap uint32, neededOut unsafe.Pointer) int32

//go:wasmimport cube_v1 shortest_path
func abiShortestPath(from, to, label unsafe.Pointer, labelLen uint32, dir uint32, weightOut, buf unsafe.Pointer, cap uint32, neededOut unsafe.Pointer) int32

// Added to v1 later (docs/ABI.md §9); a program that never calls the
// wrappers using them does not import them.

//go:wasmimport cube_v1 shortest_path_hops
func abiShortestPathHops(from, to, label unsafe.Pointer, labelLen uint32, dir uint32, maxHops int32, weightOut, buf unsafe.Pointer, cap uint32, neededOut unsafe.Pointer) int32

//go:wasmimport cube_v1 nearby
func abiNearby(centre unsafe.Pointer, k int32, maxDist float64, buf unsafe.Pointer, cap uint32, nOut, neededOut unsafe.Pointer) int32

//go:wasmimport cube_v1 within_open
func abiWithinOpen(centre unsafe.Pointer, r float64, cursorOut unsafe.Pointer) int32

//go:wasmimport cube_v1 region_columns
func abiRegionColumns(cursor uint32, coords, lens, vals unsafe.Pointer, capPoints, valsCap uint32, nOut, vbytesOut unsafe.Pointer) int32
