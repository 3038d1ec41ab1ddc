// Command go_guest is a Go (GOOS=wasip1) program for the sandbox's tests,
// built by TestGoGuest with:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o go_guest.wasm .
//
// It prints (fd_write), reads the clock and random source, counts runs in a
// global (to show isolation) and outputs "dims=<n> runs=<n>".
package main

import (
	"crypto/rand"
	"fmt"
	"time"
	"unsafe"
)

//go:wasmimport cube_v1 dims
func dims() int32

//go:wasmimport cube_v1 output_write
func outputWrite(p unsafe.Pointer, n uint32) int32

var runs int

//go:wasmexport run
func run() int32 {
	runs++
	var b [8]byte
	_, _ = rand.Read(b[:])
	fmt.Println("hello from Go at", time.Now().Year() > 2000)
	out := []byte(fmt.Sprintf("dims=%d runs=%d", dims(), runs))
	return outputWrite(unsafe.Pointer(&out[0]), uint32(len(out)))
}

func main() {}
