package wasm

// resetPlan puts an instance of a stateless module (instrument.Stateless,
// and no _initialize) back in the state it was made in, so that a Fresh
// program reuses its instances as if each run had a new one: such an
// instance's state is its memory and the rewriter's globals, and every
// instance starts from the same memory. A new instance costs a trivial
// run about three quarters of its time (wazero allocates and clears a
// 10 KiB call stack per instance, builds its globals, file table and
// function table); a reset clears the memory, which closing the instance
// did anyway (memPool.Free), and copies back what the data segments set.
type resetPlan struct {
	size   uint32     // the memory's initial size in bytes; 0 without memory
	chunks []memChunk // its bytes that are not zero
}

type memChunk struct {
	off  uint32
	data []byte
}

// chunkBytes is the grain at which resetPlan keeps a memory's non-zero
// bytes.
const chunkBytes = 256

// newResetPlan records the initial memory of in, a new instance.
func newResetPlan(in *instance) *resetPlan {
	rp := &resetPlan{}
	mem := memory(in.m)
	if mem == nil {
		return rp
	}
	rp.size = mem.Size()
	b, _ := mem.Read(0, rp.size)
	for off := 0; off < len(b); off += chunkBytes {
		c := b[off:min(off+chunkBytes, len(b))]
		if !allZero(c) {
			if n := len(rp.chunks); n > 0 && int(rp.chunks[n-1].off)+len(rp.chunks[n-1].data) == off {
				rp.chunks[n-1].data = append(rp.chunks[n-1].data, c...)
			} else {
				rp.chunks = append(rp.chunks, memChunk{off: uint32(off), data: append([]byte(nil), c...)})
			}
		}
	}
	return rp
}

func allZero(b []byte) bool {
	for _, v := range b {
		if v != 0 {
			return false
		}
	}
	return true
}

// reset puts in back in its initial state, or reports false if it cannot
// (its memory grew: wazero cannot shrink one), and then in must be closed.
// in's run has ended well: a failed run's instance is never reset.
func (rp *resetPlan) reset(in *instance) bool {
	if mem := memory(in.m); mem != nil {
		if mem.Size() != rp.size {
			return false
		}
		b, _ := mem.Read(0, rp.size)
		clear(b)
		for _, c := range rp.chunks {
			copy(b[c.off:], c.data)
		}
	}
	in.counter.Set(0) // 0 already after a run that returned; no cost to be sure
	return true
}
