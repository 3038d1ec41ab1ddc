package curve

import (
	"math/rand/v2"
	"testing"
)

// TestTablesMatchArithmetic checks the table-driven fast paths against the
// plain level-by-level state machine they were built from.
func TestTablesMatchArithmetic(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed))
	for d := 2; d <= 4; d++ {
		c, err := New(Hilbert, d)
		if err != nil {
			t.Fatal(err)
		}
		if c.tab == nil {
			t.Fatalf("dims %d has no table", d)
		}
		for range 3000 {
			var u [8]uint32
			for j := 0; j < d; j++ {
				u[j] = r.Uint32()
				if r.IntN(3) == 0 {
					u[j] &= 0xff
				}
			}
			var m Key
			mortonN(&m, &u, uint(d))
			want := m
			c.m.encodeArith(&want)
			if got := c.encodeU(&u); got != want {
				t.Fatalf("dims %d %x: table %x, arithmetic %x", d, u[:d], got, want)
			}
			back := want
			c.m.decodeArith(&back)
			if back != m {
				t.Fatalf("dims %d: arithmetic decode does not invert", d)
			}
			var v [8]uint32
			c.decodeU(want, &v)
			if v != u {
				t.Fatalf("dims %d: table decode %x, want %x", d, v[:d], u[:d])
			}
		}
	}
}

func TestKeyBits(t *testing.T) {
	var k Key
	orBits(&k, 60, 9, 0x1ff)
	if k != (Key{0xf, 0xf800000000000000}) || getBits(&k, 60, 9) != 0x1ff {
		t.Fatalf("orBits across words: %x", k)
	}
	var f Key
	fillOnes(&f, 70, 96)
	if f != (Key{0, 0x03ffffff00000000}) {
		t.Fatalf("fillOnes: %x", f)
	}
	clearFrom(&f, 72)
	if f != (Key{0, 0x0300000000000000}) {
		t.Fatalf("clearFrom: %x", f)
	}
	g := Key{0, 0xffffffff00000000}
	if !addUnit(&g, 96) || g != (Key{1, 0}) {
		t.Fatalf("addUnit carry: %x", g)
	}
	h := Key{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
	if addUnit(&h, 256) {
		t.Fatal("addUnit did not report overflow")
	}
}
