package vm_test

import (
	"bytes"
	"testing"

	"github.com/cubelinux/cube/vm"
)

func TestPackPoint(t *testing.T) {
	for _, tc := range []struct {
		name  string
		c     []int32
		v     []byte
		want  []byte
		dirty bool // dst starts full of 0xff: the pad must be zeroed
	}{
		{"1 dim, empty value", []int32{1}, nil, []byte{1, 0, 0, 0, 0, 0, 0, 0}, false},
		{"2 dims, 4 bytes", []int32{-1, 2}, []byte("abcd"), []byte{0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 4, 0, 0, 0, 'a', 'b', 'c', 'd'}, false},
		{"pad 3", []int32{7}, []byte("x"), []byte{7, 0, 0, 0, 1, 0, 0, 0, 'x', 0, 0, 0}, true},
		{"pad 1", []int32{0}, []byte("xyz"), []byte{0, 0, 0, 0, 3, 0, 0, 0, 'x', 'y', 'z', 0}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := vm.PointRecordSize(len(tc.c), len(tc.v)); got != len(tc.want) {
				t.Fatalf("PointRecordSize = %d, want %d", got, len(tc.want))
			}
			dst := make([]byte, len(tc.want)+4)
			if tc.dirty {
				for i := range dst {
					dst[i] = 0xff
				}
			}
			n := vm.PackPoint(dst, tc.c, tc.v)
			if n != len(tc.want) || !bytes.Equal(dst[:n], tc.want) {
				t.Fatalf("PackPoint = %d % x, want % x", n, dst[:n], tc.want)
			}
			if got := vm.AppendPointRecord([]byte("p"), tc.c, tc.v); !bytes.Equal(got, append([]byte("p"), tc.want...)) {
				t.Fatalf("AppendPointRecord = % x", got)
			}
			if tc.dirty && dst[n] != 0xff {
				t.Fatalf("PackPoint wrote past its record")
			}
		})
	}
}
