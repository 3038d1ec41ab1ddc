package engine

import (
	"fmt"
	"math"
	"unicode/utf8"
)

// MaxDims is the largest number of dimensions a namespace may have.
const MaxDims = 8

// pkey is a coordinate as a fixed-size map key. Unused axes are zero.
type pkey [MaxDims]int32

func toPkey(c []int32) (k pkey) {
	copy(k[:], c)
	return k
}

func checkCoord(c []int32, dims int) error {
	if len(c) != dims {
		return fmt.Errorf("%w: coordinate has %d, namespace has %d", ErrDims, len(c), dims)
	}
	return nil
}

func checkBox(min, max []int32, dims int) error {
	if len(min) != dims || len(max) != dims {
		return fmt.Errorf("%w: box has %d and %d, namespace has %d", ErrDims, len(min), len(max), dims)
	}
	for i := range min {
		if min[i] > max[i] {
			return fmt.Errorf("%w: min %d > max %d on axis %d", ErrBadBox, min[i], max[i], i)
		}
	}
	return nil
}

// MaxNameLen bounds namespace names and edge labels.
const MaxNameLen = 255

func checkName(what, s string) error {
	if s == "" || len(s) > MaxNameLen || !utf8.ValidString(s) {
		return fmt.Errorf("%w: %s %q must be 1..%d bytes of UTF-8", ErrBadName, what, s, MaxNameLen)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%w: %s %q has a control character", ErrBadName, what, s)
		}
	}
	return nil
}

func checkLabel(s string) error {
	if len(s) > MaxNameLen || !utf8.ValidString(s) {
		return fmt.Errorf("%w: label must be at most %d bytes of UTF-8", ErrBadName, MaxNameLen)
	}
	return nil
}

// checkWeight refuses what would make ShortestPath's answer wrong: a
// negative weight lets a longer path cost less than one already settled.
// NaN fails every comparison, so !(w >= 0) catches it with the negatives.
func checkWeight(w float64) error {
	if !(w >= 0) || math.IsInf(w, 1) {
		return fmt.Errorf("%w, got %v", ErrBadWeight, w)
	}
	return nil
}
