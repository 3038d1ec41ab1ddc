package wasm

import (
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero/experimental"
)

// maxPooled is the largest linear memory whose buffer is recycled.
// Bigger ones go back to the garbage collector.
const maxPooled = 4 << 20

// memPool recycles the linear memories of a program's instances. A fresh
// instance per run would otherwise allocate (and the GC sweep) its whole
// memory every run, which dominated the cost of a trivial run.
//
// Every pooled buffer is all zeros: Free clears the part the instance could
// have touched (its length) before pooling it, and Reallocate exposes bytes
// beyond the old length only from zeroed capacity. A buffer is pooled only
// while the program is open: closing a program closes its instances from
// another goroutine, possibly while a guest still runs on the memory, and
// such a buffer must never be handed to another instance.
type memPool struct {
	pool   sync.Pool // *[]byte, len 0, all zeros up to cap
	closed atomic.Bool
}

func (mp *memPool) Allocate(capacity, max uint64) experimental.LinearMemory {
	return &linearMemory{mp: mp, want: capacity}
}

type linearMemory struct {
	mp   *memPool
	want uint64
	buf  []byte
	box  *[]byte // what the pool held buf in, reused to pool it again
}

func (l *linearMemory) Reallocate(size uint64) []byte {
	if l.buf == nil {
		if b, _ := l.mp.pool.Get().(*[]byte); b != nil && uint64(cap(*b)) >= size {
			l.buf, l.box = (*b)[:size], b
			*b = nil
			return l.buf
		}
		l.buf = make([]byte, size, max(size, l.want))
		return l.buf
	}
	if size <= uint64(cap(l.buf)) {
		l.buf = l.buf[:size]
		return l.buf
	}
	nb := make([]byte, size, max(size, 2*uint64(cap(l.buf))))
	copy(nb, l.buf)
	l.buf = nb
	return l.buf
}

func (l *linearMemory) Free() {
	b := l.buf
	l.buf = nil
	if b == nil || cap(b) > maxPooled || l.mp.closed.Load() {
		return
	}
	clear(b)
	box := l.box
	if box == nil {
		box = new([]byte)
	}
	l.box = nil
	*box = b[:0]
	l.mp.pool.Put(box)
}
