package vmtest

import "errors"

var (
	// ErrBadCoord is returned when a coordinate does not have Dims() elements.
	// The sandboxes check this before calling a Host, so seeing it in a test
	// means a sandbox let a malformed coordinate through.
	ErrBadCoord = errors.New("vmtest: coordinate has the wrong number of dimensions")
	// ErrTxDone is returned by Commit or Rollback of a transaction that has
	// already been committed or rolled back.
	ErrTxDone = errors.New("vmtest: transaction already finished")
	// ErrTxConflict is returned by Commit when the parent was written after
	// Begin: the transaction's view is stale, and committing it would lose
	// the parent's writes.
	ErrTxConflict = errors.New("vmtest: parent changed since Begin")
)
