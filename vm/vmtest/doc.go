// Package vmtest is an in-memory reference implementation of [vm.Host] for
// tests of the sandboxes and of anything built on them.
//
// A [Host] keeps values in a map and edges in a map indexed both ways
// (out and in). It is deliberately simple so that it can serve as the model
// the real engine-backed host is compared against:
//
//   - Region iterates in lexicographic coordinate order (axis 0 first), not
//     in a space-filling curve's order; curve order is the engine's business
//     and programs must not depend on it.
//   - Edges of a coordinate come out sorted by direction (out before in),
//     then by the other end's coordinate, then by label.
//   - Walk and ShortestPath visit neighbours in that same order, so their
//     results are deterministic.
//
// Transactions: [Host.Begin] returns a [Tx], itself a vm.Host, whose writes
// are invisible to the parent until [Tx.Commit]; [Tx.Rollback] discards them.
// Tests use this to check that no write of a failed run is ever visible:
//
//	h := vmtest.NewHost(3)
//	tx := h.Begin()
//	_, err := prog.Run(ctx, tx, args)
//	if err != nil {
//		tx.Rollback()
//	} else {
//		tx.Commit()
//	}
//
// [Host.Snapshot] returns the whole contents in a canonical form that
// compares with reflect.DeepEqual, and [Host.Clone] a deep, independent copy.
//
// A Host is safe for concurrent use (the vm contract does not require it, but
// tests that run many programs against one host find it convenient).
package vmtest
