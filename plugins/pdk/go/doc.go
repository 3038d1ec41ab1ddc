// Package pdk is the Go guest kit for cube: it lets a Go program built with
// GOOS=wasip1 run inside cube as a WebAssembly program, speaking ABI v1
// (docs/ABI.md) without touching pointers or status codes.
//
// A program exports run and hands its body to Run, which turns a returned
// error into the run's error message:
//
//	package main
//
//	import "github.com/cubelinux/cube/plugins/pdk/go"
//
//	//go:wasmexport run
//	func run() int32 { return pdk.Run(count) }
//
//	func count() error {
//		n := 0
//		for range pdk.Region([]int32{0, 0}, []int32{9, 9}) {
//			n++
//		}
//		return pdk.OutputString(strconv.Itoa(n))
//	}
//
//	func main() {}
//
// Build it as a reactor (the runtime starts in _initialize; main is never
// called):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o count.wasm .
//
// # Errors
//
// Host statuses become the sentinel errors of errors.go, wrapped with the
// operation's name; not-found is an ordinary result (ok == false), not an
// error. After ErrLimit or ErrReadOnly the run has failed whatever the
// program does next: return the error.
//
// A loop that reads many points and little of each (a sum, a count, a
// filter) reads them as columns with RegionColumns or WithinColumns: one
// host call a batch, and no record around each point.
//
// Region, Within and Edges are range-over-func iterators and cannot return an error;
// a failure ends the loop early and is kept: Run then fails the run with it
// even if the function returned nil, and Err reports it to a program that
// wants to know sooner.
//
// # Isolation
//
// Under the default isolation (fresh) every run starts a new instance. A Go
// program registered with isolation "reuse" keeps its globals between runs;
// the kit itself resets its per-run state (arguments, dimensions, the
// iteration error) at the start of every Run.
//
// Outside GOOS=wasip1 the package builds, so that code using it can be
// compiled and vetted anywhere, but every call fails with ErrNotWASM.
package pdk
