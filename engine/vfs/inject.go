package vfs

import (
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"syscall"
)

// FailAfter returns an Injector under which the n-th operation of the
// given kind (counting from 1) and every later one fails with err, for
// example FailAfter(OpSync, 3, syscall.EIO). n < 1 counts as 1.
func FailAfter(kind OpKind, n int, err error) Injector {
	var count atomic.Int64
	return InjectorFunc(func(op Op) error {
		if op.Kind == kind && count.Add(1) >= int64(n) {
			return err
		}
		return nil
	})
}

// FailOnce returns an Injector under which only the n-th operation of the
// given kind (counting from 1) fails with err.
func FailOnce(kind OpKind, n int, err error) Injector {
	var count atomic.Int64
	return InjectorFunc(func(op Op) error {
		if op.Kind == kind && count.Add(1) == int64(n) {
			return err
		}
		return nil
	})
}

// ENOSPCAfterBytes returns an Injector that models a disk with room for n
// more bytes written, over all files: the write that crosses the budget
// writes what fits and fails with syscall.ENOSPC, and every later non-empty
// write fails with it at once. Only writes spend the budget.
func ENOSPCAfterBytes(n int64) Injector {
	var used atomic.Int64
	return InjectorFunc(func(op Op) error {
		if op.Kind != OpWrite || op.Len <= 0 {
			return nil
		}
		end := used.Add(op.Len)
		if end <= n {
			return nil
		}
		fits := max(n-(end-op.Len), 0)
		return &ShortWriteError{N: fits, Err: syscall.ENOSPC}
	})
}

// ShortWrite returns an Injector under which each non-empty write, with
// probability prob, writes a random number of its bytes from 0 to len-1 and
// fails with io.ErrShortWrite (the io.Writer contract's error for a write
// that stopped short without an OS error). rng is used under a lock, so the
// Injector may be shared; with one goroutine writing it is reproducible.
func ShortWrite(prob float64, rng *rand.Rand) Injector {
	var mu sync.Mutex
	return InjectorFunc(func(op Op) error {
		if op.Kind != OpWrite || op.Len <= 0 {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		if rng.Float64() >= prob {
			return nil
		}
		return &ShortWriteError{N: rng.Int64N(op.Len), Err: io.ErrShortWrite}
	})
}

// Filter returns an Injector that shows inj only the operations for which
// keep is true, so that, for example, FailAfter counts only the syncs of
// one file. The others always go through.
func Filter(keep func(Op) bool, inj Injector) Injector {
	return InjectorFunc(func(op Op) error {
		if !keep(op) {
			return nil
		}
		return inj.Inject(op)
	})
}

// Chain returns an Injector that asks each of injs in turn and returns the
// first error; injectors after it do not see that operation.
func Chain(injs ...Injector) Injector {
	return InjectorFunc(func(op Op) error {
		for _, inj := range injs {
			if err := inj.Inject(op); err != nil {
				return err
			}
		}
		return nil
	})
}
