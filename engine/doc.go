// Package engine is cube's durable coordinate store. It knows nothing of
// programs or sandboxes; everything above it (the program registry, the
// daemon, the REPL) is built on what this package promises.
//
// # The data
//
// A DB holds namespaces. A Namespace is a hard partition with a fixed
// number of dimensions (1 to 8) and a space-filling curve (Hilbert by
// default, or Morton). In it, values — opaque bytes up to the namespace's
// MaxValueSize — live at coordinates of signed 32-bit integers, and
// directed, labelled edges with a finite float64 weight and optional bytes
// join coordinates. A small metadata map per namespace holds what the
// layers above need to keep beside the data (the registry keeps programs
// there). Nothing in one namespace can reach another.
//
//	db, err := engine.Open("cube.data", engine.Options{})
//	ns, err := db.CreateNamespace(ctx, "world", engine.NamespaceOptions{Dims: 3})
//	err = ns.Put(ctx, []int32{1, 2, 3}, []byte("hello"))
//	seq, err := ns.Region(ctx, []int32{0, 0, 0}, []int32{9, 9, 9}, 0)
//	for c, v := range seq { ... } // curve order
//
// # Transactions
//
// Namespace.Update runs a function in a read-write transaction: its writes
// are visible to it at once and to everyone else all together when the
// function returns nil, and never if it returns an error. Writers of one
// namespace take turns, so transactions are serializable. Namespace.View
// runs a function on a snapshot, which never blocks writers. Single Put,
// Delete, Link and Unlink calls are transactions of their own.
//
// # Durability
//
// Every commit is one record in a write-ahead log. In SyncAlways mode (the
// default) a write returns once its record is fdatasync'ed; concurrent
// writers share one fsync. No reader — Get, Region, a View, another
// transaction — returns having seen a write that a crash could still lose:
// it waits for the log to reach it first. SyncInterval and SyncNone trade
// that for speed with a stated loss window. An fsync or write error is
// fatal to the log: the store turns read-only (ErrFailed) rather than
// retrying, because the kernel may already have dropped the data.
//
// Checkpoints (a base, then deltas of what changed since the last one) are
// written from snapshots while writers go on, triggered by log size, time,
// Close and DB.Checkpoint; log segments a durable checkpoint covers are
// deleted. Open recovers base + deltas + the log's tail. A torn tail is cut
// and reported (Stats().Recovery); damage anywhere else refuses to open
// with a *CorruptionError naming the file and byte offset (every
// corruption error matches ErrCorruption), unless the damage is in the
// log and Options.Repair asks to cut it out (a copy is kept). Verify checks a
// directory offline.
//
// # Encryption
//
// With Options.EncryptionKey, log records and checkpoint blocks are sealed
// with AES-256-GCM; nonces are never reused. A wrong key is ErrWrongKey and
// changes nothing on disk.
//
// # Testing seams
//
// All I/O goes through Options.FS (package vfs): the operating system's,
// an in-memory one that simulates power loss faithfully, or a wrapper that
// injects errors. The engine's own tests use them to crash it at random
// points against a model, to fail fsyncs and writes, and to mangle files.
package engine
