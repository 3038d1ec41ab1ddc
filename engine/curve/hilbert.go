package curve

import (
	"math/bits"
	"sync"
)

// The Hilbert curve here is Hamilton's formulation ("Compact Hilbert
// Indices", Dalhousie CS-2006-07) of Butz's n-dimensional curve. The curve
// is walked level by level, most significant first. At each level the cell
// holding the point is one of 2^n orthants; its bits l (one per axis, axis 0
// most significant, exactly a Morton digit) are mapped through the current
// transform (entry corner e, direction d) to a Gray-code rank w, the Hilbert
// digit. The transform for the next level depends on w. The pair (e, d) is
// the only state, so the curve is a finite state machine on Morton digits,
// which is what the lookup tables below exploit.

// hmachine holds the per-dims helper tables of Hamilton's functions.
type hmachine struct {
	n     uint8
	mask  uint8
	entry [256]uint8 // e(w): entry corner of sub-cell w
	dir   [256]uint8 // d(w): intra direction of sub-cell w
	ginv  [256]uint8 // inverse Gray code
}

func newMachine(n uint) *hmachine {
	m := &hmachine{n: uint8(n), mask: uint8(1<<n - 1)}
	size := uint(1) << n
	for w := uint(0); w < size; w++ {
		m.ginv[w^w>>1] = uint8(w)
		if w == 0 {
			continue
		}
		v := 2 * ((w - 1) / 2)
		m.entry[w] = uint8(v ^ v>>1)
		var g uint
		if w%2 == 0 {
			g = uint(bits.TrailingZeros(^(w - 1)))
		} else {
			g = uint(bits.TrailingZeros(^w))
		}
		m.dir[w] = uint8(g % n)
	}
	return m
}

func (m *hmachine) rotr(x uint8, r uint8) uint8 {
	if r == 0 {
		return x
	}
	return (x>>r | x<<(m.n-r)) & m.mask
}

func (m *hmachine) rotl(x uint8, r uint8) uint8 {
	if r == 0 {
		return x
	}
	return (x<<r | x>>(m.n-r)) & m.mask
}

// mod reduces x < 2n modulo n. The state machine runs on every level of
// every key and cell walk, and a division by the variable n cost more than
// the rest of a step together.
func (m *hmachine) mod(x uint8) uint8 {
	if x >= m.n {
		x -= m.n
	}
	return x
}

// next returns the state below sub-cell w of a cell in state (e, d).
func (m *hmachine) next(e, d, w uint8) (uint8, uint8) {
	r := m.mod(d + 1)
	return e ^ m.rotl(m.entry[w], r), m.mod(r + m.dir[w])
}

// enc maps the Morton digit l to the Hilbert digit in state (e, d).
func (m *hmachine) enc(e, d, l uint8) uint8 {
	return m.ginv[m.rotr(l^e, m.mod(d+1))]
}

// dec maps the Hilbert digit w to the Morton digit in state (e, d).
func (m *hmachine) dec(e, d, w uint8) uint8 {
	return m.rotl(w^w>>1, m.mod(d+1)) ^ e
}

// startState is the state at the top level. Starting with d = 0 makes the
// curve start at the origin; any fixed start gives a valid Hilbert curve.
const startE, startD = 0, 0

// encodeArith rewrites the Morton key m into a Hilbert key, one level at a
// time, with no tables. Used where tables would be too large (dims >= 5).
func (m *hmachine) encodeArith(k *Key) {
	n := uint(m.n)
	e, d := uint8(startE), uint8(startD)
	var out Key
	for t := uint(0); t < 32; t++ {
		l := uint8(getBits(k, t*n, n))
		w := m.enc(e, d, l)
		e, d = m.next(e, d, w)
		orBits(&out, t*n, n, uint64(w))
	}
	*k = out
}

func (m *hmachine) decodeArith(k *Key) {
	n := uint(m.n)
	e, d := uint8(startE), uint8(startD)
	var out Key
	for t := uint(0); t < 32; t++ {
		w := uint8(getBits(k, t*n, n))
		l := m.dec(e, d, w)
		e, d = m.next(e, d, w)
		orBits(&out, t*n, n, uint64(l))
	}
	*k = out
}

// htable steps the Hilbert state machine several levels per lookup. An
// entry is indexed by state<<bits | chunk, where chunk is `levels` digits
// of Morton (enc) or Hilbert (dec) key; it gives the translated chunk and
// the next state, already shifted into index position, so that the
// dependent chain per step is one load and one OR.
type htable struct {
	n, levels, bits uint
	// pad zero levels are prepended so that levels divides 32+pad; the
	// state they start from is state 0, so a walk starts at index 0.
	pad      uint
	enc, dec []hent
}

type hent struct{ next, out uint16 }

// tableLevels says how many levels per lookup each dims gets a table for;
// 0 means no table. Tables stay within L1: 2-D 4*256 entries, 3-D
// 12*512, 4-D 96*16.
var tableLevels = [9]uint{2: 4, 3: 3, 4: 1}

// tables are built on first use and then shared: they are immutable.
var tables = [9]func() *htable{
	2: sync.OnceValue(func() *htable { return buildTable(2, tableLevels[2]) }),
	3: sync.OnceValue(func() *htable { return buildTable(3, tableLevels[3]) }),
	4: sync.OnceValue(func() *htable { return buildTable(4, tableLevels[4]) }),
}

func buildTable(n, levels uint) *htable {
	m := newMachine(n)
	t := &htable{n: n, levels: levels, bits: n * levels}
	t.pad = (levels - 32%levels) % levels
	type st struct{ e, d uint8 }
	// From (0, d) a zero digit yields w = 0 and moves to (0, d+1), so
	// starting pad levels early at d = -pad mod n lands on the start state.
	first := st{startE, uint8((uint(startD) + n - t.pad%n) % n)}
	index := map[st]int{first: 0}
	states := []st{first}
	chunks := uint(1) << t.bits
	type row struct{ enc, dec []hent }
	var rows []row
	for i := 0; i < len(states); i++ {
		r := row{make([]hent, chunks), make([]hent, chunks)}
		for x := uint(0); x < chunks; x++ {
			for pass := 0; pass < 2; pass++ {
				e, d := states[i].e, states[i].d
				var out uint
				for lv := uint(0); lv < levels; lv++ {
					digit := uint8(x >> ((levels - 1 - lv) * n) & uint(m.mask))
					var w, o uint8
					if pass == 0 {
						w = m.enc(e, d, digit)
						o = w
					} else {
						w = digit
						o = m.dec(e, d, digit)
					}
					e, d = m.next(e, d, w)
					out = out<<n | uint(o)
				}
				j, ok := index[st{e, d}]
				if !ok {
					j = len(states)
					index[st{e, d}] = j
					states = append(states, st{e, d})
				}
				h := hent{next: uint16(uint(j) << t.bits), out: uint16(out)}
				if pass == 0 {
					r.enc[x] = h
				} else {
					r.dec[x] = h
				}
			}
		}
		rows = append(rows, r)
	}
	for _, r := range rows {
		t.enc = append(t.enc, r.enc...)
		t.dec = append(t.dec, r.dec...)
	}
	return t
}

// translate runs the table over a whole key (enc or dec direction).
func (t *htable) translate(k *Key, tab []hent) {
	var out Key
	s := uint(0)
	pos := uint(0)
	first := t.levels - t.pad
	w := first * t.n
	for pos < 32*t.n {
		e := tab[s|uint(getBits(k, pos, w))]
		s = uint(e.next)
		orBits(&out, pos, w, uint64(e.out))
		pos += w
		w = t.bits
	}
	*k = out
}

// hilbert2 maps the 2-D Morton word to the Hilbert word, four levels a
// step, unrolled like hilbert3.
func hilbert2(m uint64, tab []hent) uint64 {
	e := tab[m>>56]
	h := uint64(e.out) << 56
	e = tab[uint(e.next)|uint(m>>48&255)]
	h |= uint64(e.out) << 48
	e = tab[uint(e.next)|uint(m>>40&255)]
	h |= uint64(e.out) << 40
	e = tab[uint(e.next)|uint(m>>32&255)]
	h |= uint64(e.out) << 32
	e = tab[uint(e.next)|uint(m>>24&255)]
	h |= uint64(e.out) << 24
	e = tab[uint(e.next)|uint(m>>16&255)]
	h |= uint64(e.out) << 16
	e = tab[uint(e.next)|uint(m>>8&255)]
	h |= uint64(e.out) << 8
	e = tab[uint(e.next)|uint(m&255)]
	return h | uint64(e.out)
}

// hilbert3 maps the 3-D Morton halves (see morton3) to Hilbert halves,
// three levels a step; one zero level is prepended so 33 levels make 11
// steps. The chunk boundaries fall at these shifts of the 48-bit halves.
// Unrolled: the chunks do not depend on the state, so only the chain of
// loads and ORs through e.next is serial.
func hilbert3(hi, lo uint64, tab []hent) (uint64, uint64) {
	e := tab[hi>>42]
	w0 := uint64(e.out)
	e = tab[uint(e.next)|uint(hi>>33&511)]
	w1 := uint64(e.out)
	e = tab[uint(e.next)|uint(hi>>24&511)]
	w2 := uint64(e.out)
	e = tab[uint(e.next)|uint(hi>>15&511)]
	w3 := uint64(e.out)
	e = tab[uint(e.next)|uint(hi>>6&511)]
	w4 := uint64(e.out)
	e = tab[uint(e.next)|uint(hi&63<<3|lo>>45)]
	w5 := uint64(e.out)
	e = tab[uint(e.next)|uint(lo>>36&511)]
	w6 := uint64(e.out)
	e = tab[uint(e.next)|uint(lo>>27&511)]
	w7 := uint64(e.out)
	e = tab[uint(e.next)|uint(lo>>18&511)]
	w8 := uint64(e.out)
	e = tab[uint(e.next)|uint(lo>>9&511)]
	w9 := uint64(e.out)
	e = tab[uint(e.next)|uint(lo&511)]
	w10 := uint64(e.out)
	hi = w0<<42 | w1<<33 | w2<<24 | w3<<15 | w4<<6 | w5>>3
	lo = w5&7<<45 | w6<<36 | w7<<27 | w8<<18 | w9<<9 | w10
	return hi, lo
}
