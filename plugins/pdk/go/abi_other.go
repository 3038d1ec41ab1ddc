//go:build !wasip1

package pdk

import "unsafe"

// Outside GOOS=wasip1 there is no host: every import fails with
// statusNotWASM, which the kit reports as ErrNotWASM.

func abiArgsLen() int32                                            { return 0 }
func abiArgsRead(unsafe.Pointer, uint32) int32                     { return statusNotWASM }
func abiOutputWrite(unsafe.Pointer, uint32) int32                  { return statusNotWASM }
func abiLog(unsafe.Pointer, uint32) int32                          { return statusNotWASM }
func abiSetError(unsafe.Pointer, uint32) int32                     { return statusNotWASM }
func abiDims() int32                                               { return 0 }
func abiGet(_, _ unsafe.Pointer, _ uint32, _ unsafe.Pointer) int32 { return statusNotWASM }
func abiPut(_, _ unsafe.Pointer, _ uint32) int32                   { return statusNotWASM }
func abiDel(unsafe.Pointer) int32                                  { return statusNotWASM }
func abiRegionOpen(_, _, _ unsafe.Pointer) int32                   { return statusNotWASM }
func abiRegionNext(uint32, unsafe.Pointer, uint32, unsafe.Pointer, unsafe.Pointer) int32 {
	return statusNotWASM
}
func abiCursorClose(uint32) int32 { return statusNotWASM }
func abiEdgesOpen(unsafe.Pointer, uint32, unsafe.Pointer, uint32, unsafe.Pointer) int32 {
	return statusNotWASM
}
func abiEdgesNext(uint32, unsafe.Pointer, uint32, unsafe.Pointer, unsafe.Pointer) int32 {
	return statusNotWASM
}
func abiLink(_, _, _ unsafe.Pointer, _ uint32, _ float64, _ unsafe.Pointer, _ uint32) int32 {
	return statusNotWASM
}
func abiUnlink(_, _, _ unsafe.Pointer, _ uint32) int32 { return statusNotWASM }
func abiWalk(unsafe.Pointer, uint32, int32, uint32, unsafe.Pointer, uint32, int32, unsafe.Pointer, uint32, unsafe.Pointer) int32 {
	return statusNotWASM
}
func abiShortestPath(_, _, _ unsafe.Pointer, _ uint32, _ uint32, _, _ unsafe.Pointer, _ uint32, _ unsafe.Pointer) int32 {
	return statusNotWASM
}
func abiShortestPathHops(_, _, _ unsafe.Pointer, _, _ uint32, _ int32, _, _ unsafe.Pointer, _ uint32, _ unsafe.Pointer) int32 {
	return statusNotWASM
}
func abiNearby(unsafe.Pointer, int32, float64, unsafe.Pointer, uint32, unsafe.Pointer, unsafe.Pointer) int32 {
	return statusNotWASM
}
func abiWithinOpen(unsafe.Pointer, float64, unsafe.Pointer) int32 { return statusNotWASM }
func abiRegionColumns(uint32, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, uint32, uint32, unsafe.Pointer, unsafe.Pointer) int32 {
	return statusNotWASM
}
