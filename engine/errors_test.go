package engine_test

import (
	"errors"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/engine/vfs"
)

// failing is a file system over mem whose operations of kind on paths
// containing in fail with EIO once armed.
func failing(mem *vfs.MemFS, kind vfs.OpKind, in string) (vfs.FS, *atomic.Bool) {
	armed := new(atomic.Bool)
	return vfs.NewFaulty(mem, vfs.InjectorFunc(func(op vfs.Op) error {
		if armed.Load() && op.Kind == kind && strings.Contains(op.Path, in) {
			return syscall.EIO
		}
		return nil
	})), armed
}

// TestEIOIsMatchableFromTheTop: an errno from the disk reaches the caller
// matchable with errors.Is, whichever layer (log, checkpoint, engine)
// wrapped it on the way, on writes, on Open and on Verify. It caught
// logFailed wrapping the log's error with %v (the write case: ErrFailed
// matched, syscall.EIO did not), and translate doing so (the Open and
// Verify cases); restoring %w made them pass.
func TestEIOIsMatchableFromTheTop(t *testing.T) {
	t.Run("write", func(t *testing.T) {
		mem := vfs.NewMem()
		fs, armed := failing(mem, vfs.OpSync, "/wal/")
		db := mustOpen(t, "/d", engine.Options{FS: fs, CheckpointInterval: -1, SegmentSize: 64 << 10}, verifyOn(mem))
		defer db.Close()
		ns, err := db.CreateNamespace(ctx, "n", engine.NamespaceOptions{Dims: 1})
		if err != nil {
			t.Fatal(err)
		}
		armed.Store(true)
		err = ns.Put(ctx, []int32{1}, []byte("v"))
		for what, err := range map[string]error{"put": err, "Err": db.Err(), "next put": ns.Put(ctx, []int32{2}, []byte("v"))} {
			if !errors.Is(err, syscall.EIO) || !errors.Is(err, engine.ErrFailed) || engine.IsCorruption(err) {
				t.Errorf("%s: %v; want ErrFailed and EIO, not corruption", what, err)
			}
		}
	})
	// A store with a checkpoint and log records after it, so that Open
	// and Verify read both kinds of file.
	stored := func(t *testing.T) *vfs.MemFS {
		mem := vfs.NewMem()
		fs, kill := incarnation(mem, 0)
		db := mustOpen(t, "/d", engine.Options{FS: fs, CheckpointInterval: -1, SegmentSize: 64 << 10}, verifyOn(mem))
		ns, err := db.CreateNamespace(ctx, "n", engine.NamespaceOptions{Dims: 1})
		if err != nil {
			t.Fatal(err)
		}
		for i := range int32(20) {
			if i == 10 {
				if _, err := db.Checkpoint(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if err := ns.Put(ctx, []int32{i}, []byte("value")); err != nil {
				t.Fatal(err)
			}
		}
		kill()
		mem.CrashClean()
		db.Close()
		return mem
	}
	for _, in := range []string{"/wal/", "/checkpoint/"} {
		t.Run("read "+in, func(t *testing.T) {
			mem := stored(t)
			fs, armed := failing(mem, vfs.OpRead, in)
			armed.Store(true)
			_, err := engine.Open("/d", engine.Options{FS: fs, CheckpointInterval: -1, SegmentSize: 64 << 10})
			if !errors.Is(err, syscall.EIO) || engine.IsCorruption(err) {
				t.Errorf("Open: %v; want EIO, not corruption", err)
			}
			_, err = engine.Verify("/d", engine.VerifyOptions{FS: fs})
			if !errors.Is(err, syscall.EIO) || engine.IsCorruption(err) {
				t.Errorf("Verify: %v; want EIO, not corruption", err)
			}
			armed.Store(false)
			db, err := openStore(t, "/d", engine.Options{FS: fs, CheckpointInterval: -1, SegmentSize: 64 << 10}, verifyOn(mem))
			if err != nil {
				t.Fatalf("Open once the disk reads again: %v", err)
			}
			db.Close()
		})
	}
}
