// Package vfs is the seam between the engine and the file system: the
// engine does all its I/O through an FS, so that tests can swap the real
// one for an in-memory file system that crashes on demand, or for one that
// injects I/O errors. There is no default FS and no global state: callers
// pass OS(), NewMem() or NewFaulty(...) explicitly.
//
// # The real file system
//
// OS returns the operating system's file system. On Linux File.Sync is
// fdatasync(2), File.Preallocate is fallocate(FALLOC_FL_KEEP_SIZE) (a no-op
// where unsupported), FS.SyncDir is open(dir) + fsync(2), and FS.Lock is
// flock(LOCK_EX|LOCK_NB). A flock belongs to an open file description, so a
// second Lock of the same path fails with ErrLocked even in the same
// process.
//
// # Durability, as the engine must assume it
//
// A write reaches the disk only when a Sync of that file returns nil. A
// file's directory entry — its creation, a rename to or from it, its
// removal, a directory made by MkdirAll — reaches the disk only when
// SyncDir of the directory holding the entry returns nil (both directories
// for a rename across directories). Sync does not make the entry durable,
// and SyncDir does not make contents durable. So a new file is durable once
// it was Synced and its directory was SyncDir'ed, in either order; the
// classic atomic replace is write, Sync, Rename, SyncDir.
//
// A Sync that returns an error must be treated as fatal: its data may never
// reach the disk, even if a later Sync returns nil (see NewFaulty).
//
// # The crash model of MemFS
//
// MemFS models inodes. Every file has durable contents (those of its last
// Sync, size included) and volatile contents (what reads see). Every
// directory has durable entries (those of its last SyncDir) and volatile
// entries (what List sees). Create, Rename, Remove, MkdirAll and Lock (which
// may create its file) change volatile entries only. An open handle refers
// to the inode, not to the name, so it keeps working after the file is
// renamed or removed; Create of an existing name truncates that same inode.
// A rename moves the inode with its durable contents.
//
// A crash, (*MemFS).Crash(rng) or (*MemFS).CrashClean(), is a power loss
// followed by a reboot:
//
//  1. Directories revert exactly to their durable entries, recursively from
//     the root (which always exists): a file or directory whose creation
//     was not followed by SyncDir of its parent disappears; an unsynced
//     rename is undone; an unsynced removal is undone (the file reappears
//     with its durable contents). Directories never hold partial results.
//     A rename across directories of which only one was synced can lose the
//     file (only the source synced) or leave it under both names, one
//     inode, like a hard link (only the target synced).
//  2. Every file that survives holds its durable contents. CrashClean keeps
//     nothing more. Crash may in addition keep part of what was written
//     since the last Sync, chosen with rng as listed below.
//  3. Every File and lock obtained before the crash is dead: any method,
//     Close included, returns ErrCrashed. All locks are released, as if the
//     process that held them had died. The engine reopens everything.
//
// What Crash may keep of a file's unsynced writes:
//
//   - Bytes appended past the durable size: a prefix of any length (none,
//     all, or in between), whose last bytes (at most TornMax of them, never
//     a durable byte) may be torn: replaced by zeros or random bytes.
//   - Durable bytes overwritten: per SectorSize-aligned sector, the old
//     bytes, the new bytes, or a torn mix of new bytes and zeros or random
//     bytes, only in the positions that the writes changed.
//   - An unsynced truncation: the old size or the new one.
//
// Consequences the engine's power-loss tests rely on: every byte that was
// durable and not rewritten since survives unchanged; nothing that was never
// written appears except zeros or garbage in unsynced regions; a torn tail
// is only ever in bytes that were not yet synced; with the same rng seed and
// the same operations a crash is reproducible.
//
// # Fault injection
//
// NewFaulty wraps any FS and asks an Injector before every operation. The
// ready-made injectors (FailAfter, FailOnce, ENOSPCAfterBytes, ShortWrite)
// fail with errors that wrap syscall errnos where there is one, so that
// errors.Is(err, syscall.ENOSPC) works; every injected error also matches
// ErrInjected and names the operation and path.
package vfs
