package curve

import (
	"fmt"
	"strings"
)

// Kind names a space-filling curve. The zero value is Hilbert, the default.
type Kind uint8

const (
	// Hilbert is the Hilbert curve: consecutive keys are neighbouring
	// cells, so a box is covered by fewer, longer key ranges.
	Hilbert Kind = iota
	// Morton is the Z-order curve: plain bit interleaving, cheaper to
	// compute, with more and shorter ranges per box.
	Morton
)

// ParseKind maps "hilbert" or "morton" (any case, surrounding space
// ignored) to a Kind.
//
// # Errors
//
// Any other name returns an error wrapping ErrKind.
func ParseKind(s string) (Kind, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "hilbert":
		return Hilbert, nil
	case "morton":
		return Morton, nil
	}
	return 0, fmt.Errorf("%w: %q", ErrKind, s)
}

// String returns "hilbert" or "morton", or "kind(N)" for an unknown value.
func (k Kind) String() string {
	switch k {
	case Hilbert:
		return "hilbert"
	case Morton:
		return "morton"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}
