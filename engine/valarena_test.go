package engine

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestValArena: every clone equals its value, survives the record buffer
// being reused, is capped (appending to it leaves the next value alone),
// and an empty value is nil as clone makes it; values larger than
// valInArena and the values of several chunks come out right too.
//
// Breaks seen caught: returning a.buf[n:] uncapped (the append test);
// a full chunk answering an empty value instead of starting the next.
func TestValArena(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var a valArena
	rec := make([]byte, 0, 2*valInArena)
	var want, got [][]byte
	for range 30_000 {
		n := rng.IntN(200)
		if rng.IntN(500) == 0 {
			n = valInArena + rng.IntN(100)
		}
		rec = rec[:n]
		for i := range rec {
			rec[i] = byte(rng.Uint32())
		}
		want = append(want, bytes.Clone(rec))
		got = append(got, a.clone(rec))
	}
	for i := range got {
		if len(want[i]) == 0 {
			if got[i] != nil {
				t.Fatalf("value %d: empty came back as %#v, want nil", i, got[i])
			}
			continue
		}
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("value %d: %x, want %x", i, got[i], want[i])
		}
		_ = append(got[i], 0xEE, 0xEE)
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) && len(want[i]) > 0 {
			t.Fatalf("value %d changed after appending to the values: %x, want %x", i, got[i], want[i])
		}
	}
}
