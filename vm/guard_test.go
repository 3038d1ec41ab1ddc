package vm_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cubelinux/cube/vm"
)

func TestGuard(t *testing.T) {
	g := vm.NewGuard(vm.Limits{HostCalls: 2, Writes: 1, OutputBytes: 4})
	for i := 0; i < 2; i++ {
		if g.Call() != nil {
			t.Fatalf("call %d under the limit failed", i+1)
		}
	}
	if err := g.Call(); err == nil || err.Kind != vm.KindHostCallLimit {
		t.Fatalf("third call: %v", err)
	}
	// The first failure sticks.
	if err := g.Output([]byte("too long")); err.Kind != vm.KindHostCallLimit {
		t.Fatalf("later failure replaced the first: %v", err)
	}
	if !errors.Is(g.Err(), vm.ErrHostCallLimit) {
		t.Fatalf("Err = %v", g.Err())
	}

	g = vm.NewGuard(vm.Limits{Writes: 1, OutputBytes: 4})
	if g.Write("put") != nil || g.Output([]byte("abcd")) != nil {
		t.Fatal("under the limits failed")
	}
	if err := g.Write("put"); err == nil || err.Kind != vm.KindWriteLimit {
		t.Fatalf("second write: %v", err)
	}
	r := g.Result()
	if string(r.Output) != "abcd" || r.Writes != 2 {
		t.Fatalf("result %+v", r)
	}

	g = vm.NewGuard(vm.Limits{OutputBytes: 4})
	if err := g.Output([]byte("abcde")); err == nil || err.Kind != vm.KindOutputLimit || len(g.Result().Output) != 0 {
		t.Fatalf("output over the limit: %v, kept %q", err, g.Result().Output)
	}

	g = vm.NewGuard(vm.Limits{ReadOnly: true})
	if err := g.Write("delete"); err == nil || err.Kind != vm.KindReadOnly || !strings.Contains(err.Msg, "delete") {
		t.Fatalf("read-only write: %v", err)
	}

	g = vm.NewGuard(vm.Limits{HostCalls: -1, Writes: -1, OutputBytes: -1})
	for range 200_000 {
		if g.Call() != nil || g.Write("put") != nil {
			t.Fatal("negative limit enforced")
		}
	}
}

func TestGuardLogBounded(t *testing.T) {
	g := vm.NewGuard(vm.Limits{})
	line := strings.Repeat("x", 1000)
	for range 100 {
		g.Log(line)
	}
	logs := g.Result().Logs
	if len(logs) != vm.DefaultLogBytes/1000+1 || !strings.Contains(logs[len(logs)-1], "dropped") {
		t.Fatalf("%d lines, last %.40q", len(logs), logs[len(logs)-1])
	}
}
