package wasm_test

import (
	"context"
	"embed"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/vmtest"
	"github.com/cubelinux/cube/vm/wasm"
)

//go:embed testdata/*.wasm
var testdata embed.FS

var ctx = context.Background()

func load(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := testdata.ReadFile("testdata/" + name + ".wasm")
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func newSandbox(tb testing.TB) *wasm.Sandbox {
	tb.Helper()
	s, err := wasm.New(ctx, wasm.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Close(ctx) })
	return s
}

func compile(tb testing.TB, s *wasm.Sandbox, name string, lim vm.Limits) vm.Program {
	tb.Helper()
	p, err := s.Compile(ctx, load(tb, name), lim)
	if err != nil {
		tb.Fatalf("compile %s: %v", name, err)
	}
	return p
}

// coords encodes coordinates as the ABI does: little-endian i32s.
func coords(cs ...int32) []byte {
	b := make([]byte, 4*len(cs))
	for i, c := range cs {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(c))
	}
	return b
}

func wantKind(tb testing.TB, err error, k vm.ErrorKind) *vm.Error {
	tb.Helper()
	var e *vm.Error
	if !errors.As(err, &e) || e.Kind != k {
		tb.Fatalf("error %v (kind %v), want kind %v", err, vm.KindOf(err), k)
	}
	return e
}

// runTx runs p in a transaction on h, committing only on success, as the
// plugins registry does.
func runTx(p vm.Program, h *vmtest.Host, args []byte) (vm.Result, error) {
	tx := h.Begin()
	res, err := p.Run(ctx, tx, args)
	if err != nil {
		_ = tx.Rollback()
		return res, err
	}
	return res, tx.Commit()
}
