package vfs_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cubelinux/cube/engine/vfs"
)

func TestOS_LockErrorWrapsErrno(t *testing.T) {
	fsys := vfs.OS()
	name := filepath.Join(t.TempDir(), "LOCK")
	l, err := fsys.Lock(name)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = fsys.Lock(name)
	if !errors.Is(err, vfs.ErrLocked) || !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("second Lock: %v, want ErrLocked wrapping EWOULDBLOCK", err)
	}
}

// TestOS_LockOtherProcess checks that the lock excludes another process,
// running this test binary as the helper below.
func TestOS_LockOtherProcess(t *testing.T) {
	if name := os.Getenv("VFS_LOCK_HELPER"); name != "" {
		_, err := vfs.OS().Lock(name)
		if errors.Is(err, vfs.ErrLocked) {
			os.Exit(3)
		}
		os.Exit(0)
	}
	name := filepath.Join(t.TempDir(), "LOCK")
	l, err := vfs.OS().Lock(name)
	if err != nil {
		t.Fatal(err)
	}
	run := func() int {
		cmd := exec.Command(os.Args[0], "-test.run=^TestOS_LockOtherProcess$")
		cmd.Env = append(os.Environ(), "VFS_LOCK_HELPER="+name)
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	}
	if code := run(); code != 3 {
		t.Fatalf("other process while locked: exit %d, want 3 (ErrLocked)", code)
	}
	l.Close()
	if code := run(); code != 0 {
		t.Fatalf("other process after release: exit %d, want 0", code)
	}
}

func TestOS_SyncDirErrorNamesPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nope")
	err := vfs.OS().SyncDir(dir)
	var pe *os.PathError
	if !errors.As(err, &pe) || pe.Path != dir {
		t.Fatalf("SyncDir missing: %v, want a PathError naming %s", err, dir)
	}
}
