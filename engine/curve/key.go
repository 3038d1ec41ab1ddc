package curve

// Key is a position on a curve: dims*32 bits, most significant first,
// left-aligned in four words (Key[0] holds the top 64 bits). Bits past
// dims*32 are zero. Comparing Keys word by word is curve order, so Keys can
// be used directly as ordered index keys, and their big-endian bytes sort
// the same way.
type Key [4]uint64

// Compare returns -1, 0 or +1 as a sorts before, equal to or after b.
func (a Key) Compare(b Key) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// Less reports whether a sorts before b.
func (a Key) Less(b Key) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// getBits returns the w bits (1 <= w <= 64) of k that start pos bits from
// the top. Bits past the end of the key read as zero.
func getBits(k *Key, pos, w uint) uint64 {
	word, off := pos>>6, pos&63
	if word > 3 {
		return 0
	}
	v := k[word] << off
	if off+w > 64 && word < 3 {
		v |= k[word+1] >> (64 - off)
	}
	return v >> (64 - w)
}

// orBits ORs the low w bits of v (1 <= w <= 64, v < 1<<w) into k starting
// pos bits from the top. Bits that would land past the key are dropped.
func orBits(k *Key, pos, w uint, v uint64) {
	word, off := pos>>6, pos&63
	if word > 3 {
		return
	}
	a := v << (64 - w)
	k[word] |= a >> off
	if off+w > 64 && word < 3 {
		k[word+1] |= a << (64 - off)
	}
}

// fillOnes sets every bit of k from pos (from the top) to the end of the
// used bits, nbits.
func fillOnes(k *Key, pos, nbits uint) {
	for i := uint(0); i < 4; i++ {
		lo, hi := i*64, i*64+64 // bit span of word i
		a, b := max(lo, pos), min(hi, nbits)
		if a >= b {
			continue
		}
		// ones at positions [a,b) of word i, counting from its top.
		n := b - a
		m := ^uint64(0) >> (64 - n) << (64 - n) >> (a - lo)
		k[i] |= m
	}
}

// clearFrom clears every bit of k from pos (from the top) to the end.
func clearFrom(k *Key, pos uint) {
	for i := uint(0); i < 4; i++ {
		lo := i * 64
		if pos <= lo {
			k[i] = 0
		} else if pos < lo+64 {
			k[i] &^= ^uint64(0) >> (pos - lo)
		}
	}
}

// addUnit adds one unit of the least significant used bit (bit nbits-1
// from the top) to k, reporting false on overflow past the largest key.
func addUnit(k *Key, nbits uint) bool {
	word, off := (nbits-1)>>6, (nbits-1)&63
	inc := uint64(1) << (63 - off)
	for i := int(word); i >= 0; i-- {
		s := k[i] + inc
		carry := s < k[i]
		k[i] = s
		if !carry {
			return true
		}
		inc = 1
	}
	return false
}
