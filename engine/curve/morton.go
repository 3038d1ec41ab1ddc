package curve

// Morton keys interleave the axes bit by bit, most significant level first;
// within a level, axis 0 holds the most significant bit. The Hilbert code
// below starts from the same interleaving and rewrites it level by level.

// spread2 moves bit i of x to bit 2i.
func spread2(x uint32) uint64 {
	v := uint64(x)
	v = (v | v<<16) & 0x0000FFFF0000FFFF
	v = (v | v<<8) & 0x00FF00FF00FF00FF
	v = (v | v<<4) & 0x0F0F0F0F0F0F0F0F
	v = (v | v<<2) & 0x3333333333333333
	v = (v | v<<1) & 0x5555555555555555
	return v
}

// compact2 is the inverse of spread2: it gathers the even bits of v.
func compact2(v uint64) uint32 {
	v &= 0x5555555555555555
	v = (v | v>>1) & 0x3333333333333333
	v = (v | v>>2) & 0x0F0F0F0F0F0F0F0F
	v = (v | v>>4) & 0x00FF00FF00FF00FF
	v = (v | v>>8) & 0x0000FFFF0000FFFF
	v = (v | v>>16) & 0x00000000FFFFFFFF
	return uint32(v)
}

// spread3 moves bit i of x (x < 1<<21) to bit 3i.
func spread3(x uint32) uint64 {
	v := uint64(x) & 0x1FFFFF
	v = (v | v<<32) & 0x1F00000000FFFF
	v = (v | v<<16) & 0x1F0000FF0000FF
	v = (v | v<<8) & 0x100F00F00F00F00F
	v = (v | v<<4) & 0x10C30C30C30C30C3
	v = (v | v<<2) & 0x1249249249249249
	return v
}

// compact3 is the inverse of spread3.
func compact3(v uint64) uint32 {
	v &= 0x1249249249249249
	v = (v | v>>2) & 0x10C30C30C30C30C3
	v = (v | v>>4) & 0x100F00F00F00F00F
	v = (v | v>>8) & 0x1F0000FF0000FF
	v = (v | v>>16) & 0x1F00000000FFFF
	v = (v | v>>32) & 0x1FFFFF
	return uint32(v)
}

// morton2 interleaves two axes into the top word.
func morton2(u0, u1 uint32) uint64 { return spread2(u0)<<1 | spread2(u1) }

// morton3 interleaves three axes into 96 bits, returned as the top 48 bits
// (levels 0..15) and the bottom 48 bits (levels 16..31).
func morton3(u0, u1, u2 uint32) (hi, lo uint64) {
	hi = spread3(u0>>16)<<2 | spread3(u1>>16)<<1 | spread3(u2>>16)
	lo = spread3(u0&0xFFFF)<<2 | spread3(u1&0xFFFF)<<1 | spread3(u2&0xFFFF)
	return hi, lo
}

func unmorton3(hi, lo uint64) (u0, u1, u2 uint32) {
	u0 = compact3(hi>>2)<<16 | compact3(lo>>2)
	u1 = compact3(hi>>1)<<16 | compact3(lo>>1)
	u2 = compact3(hi)<<16 | compact3(lo)
	return u0, u1, u2
}

// key3 and split3 convert between the 48+48-bit halves and a Key.
func key3(hi, lo uint64) Key { return Key{hi<<16 | lo>>32, lo << 32} }

func split3(k *Key) (hi, lo uint64) {
	return k[0] >> 16, (k[0]&0xFFFF)<<32 | k[1]>>32
}

// spread4 moves bit i of x (x < 1<<16) to bit 4i.
func spread4(x uint32) uint64 { return spread2(uint32(spread2(x & 0xFFFF))) }

// compact4 is the inverse of spread4.
func compact4(v uint64) uint32 { return compact2(uint64(compact2(v & 0x1111111111111111))) }

// spread8 moves bit i of x (x < 1<<8) to bit 8i.
func spread8(x uint32) uint64 { return spread4(uint32(spread2(x & 0xFF))) }

func compact8(v uint64) uint32 { return compact2(uint64(compact4(v & 0x0101010101010101))) }

// mortonN interleaves u[:n] into k by the general rule; k must be zero.
func mortonN(k *Key, u *[8]uint32, n uint) {
	switch n {
	case 4:
		for j := uint(0); j < 4; j++ {
			k[0] |= spread4(u[j]>>16) << (3 - j)
			k[1] |= spread4(u[j]&0xFFFF) << (3 - j)
		}
		return
	case 8:
		for j := uint(0); j < 8; j++ {
			for b := uint(0); b < 4; b++ {
				k[b] |= spread8(u[j]>>(24-8*b)&0xFF) << (7 - j)
			}
		}
		return
	}
	for t := uint(0); t < 32; t++ {
		var d uint64
		for j := uint(0); j < n; j++ {
			d = d<<1 | uint64(u[j]>>(31-t)&1)
		}
		orBits(k, t*n, n, d)
	}
}

// unmortonN is the inverse of mortonN.
func unmortonN(k *Key, u *[8]uint32, n uint) {
	switch n {
	case 4:
		for j := uint(0); j < 4; j++ {
			u[j] = compact4(k[0]>>(3-j))<<16 | compact4(k[1]>>(3-j))
		}
		return
	case 8:
		for j := uint(0); j < 8; j++ {
			var x uint32
			for b := uint(0); b < 4; b++ {
				x = x<<8 | compact8(k[b]>>(7-j))
			}
			u[j] = x
		}
		return
	}
	*u = [8]uint32{}
	for t := uint(0); t < 32; t++ {
		d := getBits(k, t*n, n)
		for j := uint(0); j < n; j++ {
			u[j] |= uint32(d>>(n-1-j)&1) << (31 - t)
		}
	}
}
