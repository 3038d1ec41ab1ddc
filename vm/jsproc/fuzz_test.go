package jsproc

import (
	"bytes"
	"context"
	"encoding/gob"
	"testing"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/vmtest"
)

// FuzzHostCalls feeds the pool's side arbitrary bytes as a worker's
// messages: a worker runs guest code, so what it sends is decoded and
// served as any client's request would be. Nothing may panic, and a
// coordinate of the wrong length must be refused before the host sees it.
func FuzzHostCalls(f *testing.F) {
	for _, c := range []*call{
		{Method: mGet, A: []int32{1, 2}},
		{Method: mPut, A: []int32{1, 2}, Value: []byte("v")},
		{Method: mRegionOpen, A: []int32{0, 0}, B: []int32{9, 9}},
		{Method: mNext, Cursor: 1},
		{Method: mLink, A: []int32{1, 2}, B: []int32{3, 4}, Label: "r", Weight: 1},
		{Method: mWalk, A: []int32{1, 2}, Walk: vm.WalkOptions{MaxDepth: 3}},
		{Method: mPath, A: []int32{1}, B: []int32{3, 4}},
		{Method: mEdgesOpen, A: []int32{1, 2}, Dir: vm.Both},
	} {
		var b bytes.Buffer
		enc := gob.NewEncoder(&b)
		_ = enc.Encode(&message{Call: c})
		_ = enc.Encode(&message{Call: &call{Method: mNext, Cursor: 1}})
		f.Add(b.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h := vmtest.NewHost(2)
		_ = h.Put(context.Background(), []int32{1, 2}, []byte("x"))
		cur := cursors{}
		defer cur.closeAll()
		dec := gob.NewDecoder(bytes.NewReader(data))
		for i := 0; i < 16; i++ {
			var m message
			if err := dec.Decode(&m); err != nil {
				return
			}
			if m.Call == nil {
				continue
			}
			r := serve(context.Background(), h, m.Call, cur)
			if r == nil {
				t.Fatal("no reply")
			}
		}
	})
}
