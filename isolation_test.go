package cube_test

import (
	"encoding/binary"
	"testing"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/vm"
)

// guestState is what testdata/state.wat finds when a run starts.
type guestState struct {
	Word, Data, Global, Slot0, Slot1, Pages, Grown, NewPage int32
}

// The state of a new instance of state.wat, and the state one of its runs
// leaves behind.
var (
	initialState = guestState{Word: 0, Data: 0x74696e69 /* "init" */, Global: 5, Slot0: 7, Slot1: -1, Pages: 1, Grown: 0, NewPage: 0}
	dirtyState   = guestState{Word: 0xc0ffee, Data: 0x54524944 /* "DIRT" */, Global: 42, Slot0: 9, Slot1: 9, Pages: 2, Grown: 0xbeef, NewPage: 0}
)

// runState runs state.wat once through DB.Run and returns the state it
// started from. With trap set the run traps after dirtying its instance.
func runState(t *testing.T, db *cube.DB, name string, trap bool) guestState {
	t.Helper()
	var args []byte
	if trap {
		args = []byte("trap")
	}
	res, err := db.Run(ctx, "iso", name, args)
	if trap {
		wantKind(t, err, vm.KindTrap)
		return guestState{}
	}
	if err != nil {
		t.Fatalf("run %s: %v", name, err)
	}
	if len(res.Output) != 32 {
		t.Fatalf("run %s: %d bytes of output, want 32", name, len(res.Output))
	}
	var s guestState
	for i, p := range []*int32{&s.Word, &s.Data, &s.Global, &s.Slot0, &s.Slot1, &s.Pages, &s.Grown, &s.NewPage} {
		*p = int32(binary.LittleEndian.Uint32(res.Output[4*i:]))
	}
	return s
}

// TestIsolation: with Isolation Fresh (the default) no run of a WASM
// program sees anything an earlier run did to its instance: not its linear
// memory (a plain word, a word a data segment initializes, a page added by
// memory.grow), not a mutable global, not a funcref table slot set with
// table.set. With Reuse a run sees what the run before it left, as
// docs/ABI.md says ("globals and memory carry over"; tables too, it is the
// same instance), except after a failed run, whose instance is discarded.
//
// Breaks tried, each making this test fail:
//   - vm/wasm memPool.Free pools a buffer without clear(b): the fresh run
//     2 starts from Word 0xc0ffee, and the page its memory.grow adds holds
//     0xbeef (the data segment is applied again, so Data is "init" again,
//     and memory.size is 1 again, which hides the old second page).
//   - vm/wasm Program.release parks every healthy instance, whatever the
//     isolation: the fresh run 2 starts from dirtyState.
//   - Program.release parks a Reuse instance even after a failed run: the
//     reuse run after the trap starts from what the trap left (Pages 4).
func TestIsolation(t *testing.T) {
	db := open(t, t.TempDir(), cube.Options{Engine: engine.Options{Sync: engine.SyncNone}, TelemetryInterval: -1})
	newNS(t, db, "iso", 1)
	code := mustRead(t, "testdata/state.wasm")
	prog(t, db, "iso", "fresh", vm.WASM, code, cube.ProgOptions{ReadOnly: true})
	prog(t, db, "iso", "reuse", vm.WASM, code, cube.ProgOptions{ReadOnly: true, Limits: vm.Limits{Isolation: cube.Reuse}})

	t.Run("fresh", func(t *testing.T) {
		for i := 1; i <= 3; i++ {
			if got := runState(t, db, "fresh", false); got != initialState {
				t.Fatalf("run %d started from %+v, want the initial %+v", i, got, initialState)
			}
		}
		runState(t, db, "fresh", true)
		if got := runState(t, db, "fresh", false); got != initialState {
			t.Fatalf("the run after a trap started from %+v, want the initial %+v", got, initialState)
		}
	})

	t.Run("reuse", func(t *testing.T) {
		if got := runState(t, db, "reuse", false); got != initialState {
			t.Fatalf("run 1 started from %+v, want the initial %+v", got, initialState)
		}
		got := runState(t, db, "reuse", false)
		if got != dirtyState {
			t.Fatalf("run 2 started from %+v, want what run 1 left %+v", got, dirtyState)
		}
		runState(t, db, "reuse", true)
		if got := runState(t, db, "reuse", false); got != initialState {
			t.Fatalf("the run after a trap started from %+v, want a new instance's %+v", got, initialState)
		}
	})
}
