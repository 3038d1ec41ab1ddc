package engine_test

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/engine/vfs"
)

// TestFaults injects I/O errors under a store that is writing: EIO on
// write and on fsync, a full disk, short writes. Each time the store must
// fail with a clear error, turn read-only (no retry-and-hope), lose no
// acknowledged write, and open again once the fault is gone.
func TestFaults(t *testing.T) {
	inWAL := func(op vfs.Op) bool { return strings.Contains(op.Path, "/wal/") }
	cases := []struct {
		name string
		inj  func() vfs.Injector
		want error // the cause the error must carry
	}{
		{"eio-on-fsync", func() vfs.Injector {
			return vfs.Filter(inWAL, vfs.FailAfter(vfs.OpSync, 30, syscall.EIO))
		}, syscall.EIO},
		{"eio-on-write", func() vfs.Injector {
			return vfs.Filter(inWAL, vfs.FailAfter(vfs.OpWrite, 25, syscall.EIO))
		}, syscall.EIO},
		{"enospc", func() vfs.Injector { return vfs.ENOSPCAfterBytes(150 << 10) }, syscall.ENOSPC},
		{"short-writes", func() vfs.Injector {
			return vfs.Filter(inWAL, vfs.ShortWrite(0.05, rand.New(rand.NewPCG(1, 2))))
		}, io.ErrShortWrite},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := vfs.NewMem()
			db := mustOpen(t, "/d", engine.Options{FS: vfs.NewFaulty(mem, c.inj()), SegmentSize: 64 << 10}, verifyOn(mem))
			ns, err := db.CreateNamespace(ctx, "f", engine.NamespaceOptions{Dims: 2})
			if err != nil {
				t.Fatal(err)
			}
			var acked [][2]int32
			var werr error
			for i := int32(0); i < 5000 && werr == nil; i++ {
				c := [2]int32{i, -i}
				if werr = ns.Put(ctx, c[:], fmt.Appendf(nil, "value %d with some bytes", i)); werr == nil {
					acked = append(acked, c)
				}
			}
			if werr == nil {
				t.Fatal("the fault never surfaced")
			}
			// errors.Is, not the text: the cause must stay matchable
			// through the log and the engine (logFailed wrapping with %v
			// fails this).
			if !errors.Is(werr, engine.ErrFailed) || !errors.Is(werr, c.want) {
				t.Fatalf("error %q: want ErrFailed carrying %v", werr, c.want)
			}
			// Read-only from now on: no retry, no hope.
			if err := ns.Put(ctx, []int32{-1, -1}, []byte("x")); !errors.Is(err, engine.ErrFailed) {
				t.Fatalf("put after failure: %v", err)
			}
			if db.Err() == nil || !strings.Contains(db.Stats().Err, "read-only") {
				t.Fatalf("stats do not say why: %q", db.Stats().Err)
			}
			db.Close()
			mem.CrashClean()
			db, err = openStore(t, "/d", engine.Options{FS: mem})
			if err != nil {
				t.Fatalf("reopen after %s: %v", c.name, err)
			}
			defer db.Close()
			ns, err = db.Namespace("f")
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range acked {
				if _, err := ns.Get(ctx, k[:]); err != nil {
					t.Fatalf("acknowledged %v lost after %s: %v (%d acked)", k, c.name, err, len(acked))
				}
			}
			if err := ns.Put(ctx, []int32{-1, -1}, []byte("x")); err != nil {
				t.Fatalf("reopened store does not write: %v", err)
			}
			t.Logf("%s: %d acknowledged writes kept; error was: %v", c.name, len(acked), werr)
		})
	}
}
