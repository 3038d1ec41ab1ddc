package instrument_test

import (
	"testing"

	"github.com/cubelinux/cube/vm/wasm/internal/instrument"
)

// TestStateless: a module is stateless only without a start function,
// tables, element segments, a data count section, tags, mutable globals
// and imports other than functions. Break caught: Stateless not looking
// at a global's mutability (the mutable global was stateless; vm/wasm
// would have reset the instances of a module whose global carries a run's
// state to the next).
func TestStateless(t *testing.T) {
	head := "\x00asm\x01\x00\x00\x00"
	for _, tc := range []struct {
		name string
		mod  string
		want bool
	}{
		{"empty", head, true},
		{"immutable global", head + "\x06\x06\x01\x7f\x00\x41\x00\x0b", true},
		{"imported function", head + "\x02\x07\x01\x01a\x01b\x00\x00", true},
		{"memory and data", head + "\x05\x03\x01\x00\x01" + "\x0b\x07\x01\x00\x41\x00\x0b\x01x", true},
		{"mutable global", head + "\x06\x06\x01\x7f\x01\x41\x00\x0b", false},
		{"imported global", head + "\x02\x08\x01\x01a\x01b\x03\x7f\x00", false},
		{"imported table", head + "\x02\x09\x01\x01a\x01b\x01\x70\x00\x01", false},
		{"table", head + "\x04\x04\x01\x70\x00\x01", false},
		{"start", head + "\x08\x01\x00", false},
		{"element", head + "\x09\x01\x00", false},
		{"data count", head + "\x0c\x01\x00", false},
		{"tag", head + "\x0d\x01\x00", false},
		{"truncated", head + "\x06\x06\x01\x7f", false},
		{"not wasm", "\x00asn\x01\x00\x00\x00", false},
	} {
		if got := instrument.Stateless([]byte(tc.mod)); got != tc.want {
			t.Errorf("%s: Stateless = %v, want %v", tc.name, got, tc.want)
		}
	}
}
