package vfs

import "errors"

// ErrLocked is returned by FS.Lock when the lock is already held, by
// another process or by another Lock of the same FS (including in the same
// process: a flock belongs to an open file description, not to a process).
// For the OS file system the error also wraps the errno (EWOULDBLOCK).
var ErrLocked = errors.New("vfs: locked")

// ErrCrashed is returned by every method of a File or lock handle that was
// opened on a MemFS before its last Crash or CrashClean: the program that
// held it is considered dead and must reopen everything.
var ErrCrashed = errors.New("vfs: file system crashed")

// ErrInjected is matched (errors.Is) by every error that a Faulty file
// system made up rather than got from the file system beneath it. Such
// errors also wrap the error the Injector returned, usually an errno such
// as syscall.EIO or syscall.ENOSPC.
var ErrInjected = errors.New("vfs: injected fault")
