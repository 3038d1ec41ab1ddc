package engine_test

import (
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cubelinux/cube/engine/vfs"
)

// incarnation wraps mem for one life of a store. After kill, every
// operation it tries fails, as a dead process does nothing more; call kill
// before crashing mem. syncDelay makes each sync take a moment, as on a
// disk, so that a write acknowledged before its sync is caught by a crash.
func incarnation(mem *vfs.MemFS, syncDelay time.Duration) (fs vfs.FS, kill func()) {
	dead := new(atomic.Bool)
	fs = vfs.NewFaulty(mem, vfs.InjectorFunc(func(op vfs.Op) error {
		if dead.Load() {
			return syscall.EIO
		}
		if syncDelay > 0 && op.Kind == vfs.OpSync {
			time.Sleep(syncDelay)
		}
		return nil
	}))
	return fs, func() { dead.Store(true) }
}
