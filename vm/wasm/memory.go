package wasm

import (
	"encoding/binary"
	"fmt"
	"reflect"

	"github.com/tetratelabs/wazero/api"

	"github.com/cubelinux/cube/vm"
)

// trap ends the guest with KindTrap. It panics; wazero recovers the panic
// at the host-function boundary and returns it, wrapped, from the call that
// entered the guest, where Run unwraps it. It never escapes to the caller
// of Run.
func trap(fn string, format string, args ...any) {
	panic(&vm.Error{Kind: vm.KindTrap, Msg: ModuleName + "." + fn + ": " + fmt.Sprintf(format, args...)})
}

// view returns guest memory [ptr, ptr+n) without copying, or traps.
func view(m api.Memory, fn, what string, ptr, n uint32) []byte {
	if m == nil {
		trap(fn, "the module has no memory")
	}
	b, ok := m.Read(ptr, n)
	if !ok {
		trap(fn, "%s [0x%x, +%d) is outside guest memory (%d bytes)", what, ptr, n, m.Size())
	}
	return b
}

func putU32(m api.Memory, fn, what string, ptr, v uint32) {
	binary.LittleEndian.PutUint32(view(m, fn, what, ptr, 4), v)
}

// coord reads a dims-long little-endian i32 coordinate into dst.
func coord(m api.Memory, fn, what string, ptr uint32, dst []int32) []int32 {
	b := view(m, fn, what, ptr, uint32(4*len(dst)))
	for i := range dst {
		dst[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return dst
}

func putCoord(b []byte, c []int32) {
	for i, v := range c {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
}

// memory returns the module's memory, or nil if it has none. (wazero
// returns a typed nil inside a non-nil interface for a module without
// memory.)
func memory(m api.Module) api.Memory {
	mem := m.Memory()
	if mem == nil || reflect.ValueOf(mem).IsNil() {
		return nil
	}
	return mem
}
