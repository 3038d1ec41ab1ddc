package instrument

// Immediates of an instruction, beyond its opcode.
const (
	immNone    = iota
	immMemarg  // align and offset, two u32
	immLane    // one lane byte
	immMemLane // memarg, then a lane byte
	imm16      // 16 bytes: v128.const's value, i8x16.shuffle's lanes
)

// Slots pushed by an instruction that pushes one value of a fixed type.
const (
	pushNone   = 0
	pushScalar = 1
	pushV128   = 2
)

// effect is the shape of a plain instruction: what follows its opcode and
// what it does to the operand stack. Control, call and variable
// instructions are decoded by hand in walk.
type effect struct {
	ok   bool
	imm  uint8
	pops uint8
	push uint8 // slots of the one value pushed, 0 if none
}

// plain holds the one-byte opcodes of numeric, memory and reference
// instructions; vector holds the 0xfd-prefixed ones, which wazero reads
// as a single byte after the prefix (as it does, so do we: the rewriter
// must see exactly the instructions wazero will compile).
var plain, vector = tables()

func set(t *[256]effect, e effect, ops ...int) {
	for _, op := range ops {
		if t[op].ok {
			panic("instrument: opcode listed twice")
		}
		t[op] = e
	}
}

func span(lo, hi int) []int {
	s := make([]int, 0, hi-lo+1)
	for op := lo; op <= hi; op++ {
		s = append(s, op)
	}
	return s
}

func cat(spans ...[]int) []int {
	var s []int
	for _, x := range spans {
		s = append(s, x...)
	}
	return s
}

func one(ops ...int) []int { return ops }

func tables() (plain, vector [256]effect) {
	unary := effect{ok: true, pops: 1, push: pushScalar}
	binary := effect{ok: true, pops: 2, push: pushScalar}
	set(&plain, effect{ok: true, imm: immMemarg, pops: 1, push: pushScalar}, span(0x28, 0x35)...) // loads
	set(&plain, effect{ok: true, imm: immMemarg, pops: 2}, span(0x36, 0x3e)...)                   // stores
	set(&plain, unary, cat(
		one(0x45, 0x50),  // i32.eqz, i64.eqz
		span(0x67, 0x69), // i32 clz ctz popcnt
		span(0x79, 0x7b), // i64 clz ctz popcnt
		span(0x8b, 0x91), // f32 abs .. sqrt
		span(0x99, 0x9f), // f64 abs .. sqrt
		span(0xa7, 0xc4), // conversions, reinterpretations, sign extension
		one(0xd1),        // ref.is_null
	)...)
	set(&plain, binary, cat(
		span(0x46, 0x4f), // i32 comparisons
		span(0x51, 0x66), // i64, f32, f64 comparisons
		span(0x6a, 0x78), // i32 arithmetic
		span(0x7c, 0x8a), // i64 arithmetic
		span(0x92, 0x98), // f32 arithmetic
		span(0xa0, 0xa6), // f64 arithmetic
	)...)

	v := func(imm, pops, push uint8) effect { return effect{ok: true, imm: imm, pops: pops, push: push} }
	set(&vector, v(immMemarg, 1, pushV128), cat(span(0x00, 0x0a), one(0x5c, 0x5d))...) // loads
	set(&vector, v(immMemarg, 2, pushNone), 0x0b)                                      // v128.store
	set(&vector, v(imm16, 0, pushV128), 0x0c)                                          // v128.const
	set(&vector, v(imm16, 2, pushV128), 0x0d)                                          // i8x16.shuffle
	set(&vector, v(immMemLane, 2, pushV128), span(0x54, 0x57)...)                      // load lane
	set(&vector, v(immMemLane, 2, pushNone), span(0x58, 0x5b)...)                      // store lane
	set(&vector, v(immLane, 1, pushScalar), 0x15, 0x16, 0x18, 0x19, 0x1b, 0x1d, 0x1f, 0x21)
	set(&vector, v(immLane, 2, pushV128), 0x17, 0x1a, 0x1c, 0x1e, 0x20, 0x22)
	set(&vector, v(immNone, 1, pushV128), span(0x0f, 0x14)...) // splats
	set(&vector, v(immNone, 1, pushScalar), 0x53, 0x63, 0x64, 0x83, 0x84, 0xa3, 0xa4, 0xc3, 0xc4)
	set(&vector, v(immNone, 3, pushV128), 0x52) // v128.bitselect
	set(&vector, v(immNone, 2, pushV128), cat(  // two operands (vectors, or a vector and a shift count)
		one(0x0e),
		span(0x23, 0x4c),
		span(0x4e, 0x51),
		one(0x65, 0x66),
		span(0x6b, 0x73),
		span(0x76, 0x79),
		one(0x7b, 0x82, 0x85, 0x86),
		span(0x8b, 0x93),
		span(0x95, 0x99),
		span(0x9b, 0x9f),
		span(0xab, 0xae),
		one(0xb1),
		span(0xb5, 0xba),
		span(0xbc, 0xbf),
		span(0xcb, 0xce),
		one(0xd1),
		span(0xd5, 0xdf),
		span(0xe4, 0xeb),
		span(0xf0, 0xf7),
	)...)
	set(&vector, v(immNone, 1, pushV128), cat( // one vector operand
		one(0x4d, 0x5e, 0x5f),
		span(0x60, 0x62),
		span(0x67, 0x6a),
		one(0x74, 0x75, 0x7a),
		span(0x7c, 0x81),
		span(0x87, 0x8a),
		one(0x94, 0xa0, 0xa1),
		span(0xa7, 0xaa),
		one(0xc0, 0xc1),
		span(0xc7, 0xca),
		one(0xe0, 0xe1, 0xe3, 0xec, 0xed, 0xef),
		span(0xf8, 0xff),
	)...)
	return plain, vector
}
