package cube_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/engine/vfs"
)

// TestEIOReachesTheCaller: an errno from the disk is matchable with
// errors.Is at the top, through the log, the engine and cube, on a write
// and on Open. It caught the engine wrapping the log's failure with %v
// (logFailed: the write case) and the open path doing so (translate: the
// Open case); either one made errors.Is(err, syscall.EIO) false while the
// text still said "input/output error".
func TestEIOReachesTheCaller(t *testing.T) {
	ctx := context.Background()
	mem := vfs.NewMem()
	var failSync, failRead atomic.Bool
	fs := vfs.NewFaulty(mem, vfs.InjectorFunc(func(op vfs.Op) error {
		inLog := strings.Contains(op.Path, "/wal/")
		if inLog && (failSync.Load() && op.Kind == vfs.OpSync || failRead.Load() && op.Kind == vfs.OpRead) {
			return syscall.EIO
		}
		return nil
	}))
	opts := cube.Options{Engine: engine.Options{FS: fs, SegmentSize: 64 << 10}, TelemetryInterval: -1}
	db, err := cube.Open("/d", opts)
	if err != nil {
		t.Fatal(err)
	}
	failSync.Store(true)
	_, err = db.CreateNamespace(ctx, "n", cube.NamespaceOptions{Dims: 1})
	if !errors.Is(err, syscall.EIO) || !errors.Is(err, engine.ErrFailed) {
		t.Errorf("write: %v; want ErrFailed and EIO", err)
	}
	db.Close()
	failSync.Store(false)

	failRead.Store(true)
	if _, err := cube.Open("/d", opts); !errors.Is(err, syscall.EIO) || engine.IsCorruption(err) {
		t.Errorf("Open: %v; want EIO, not corruption", err)
	}
}
