package wasm

import (
	"context"
	"encoding/binary"
	"math"

	"github.com/tetratelabs/wazero/api"

	"github.com/cubelinux/cube/vm"
)

// The distance queries of ABI v1: nearby (the k nearest, packed like walk's
// answer) and within_open (a radius, read through region_next like a box).
// Both only check what the guest passed and hand the distance to the host,
// which defines it (Euclidean over the integer coordinates; metres on the
// sphere in a GEO namespace).

// neighborRecordSize is the packed size of a neighbour record: an f64
// distance, then a point record, padded to 8 so that the next distance is
// aligned like the first.
func neighborRecordSize(dims, valueLen int) int {
	return align(8+vm.PointRecordSize(dims, valueLen), 8)
}

// packNeighbor writes the neighbour record of n at the start of dst, which
// must hold neighborRecordSize bytes, and returns its size.
func packNeighbor(dst []byte, n vm.Neighbor) int {
	size := neighborRecordSize(len(n.Coord), len(n.Value))
	binary.LittleEndian.PutUint64(dst, math.Float64bits(n.Dist))
	used := 8 + vm.PackPoint(dst[8:], n.Coord, n.Value)
	clear(dst[used:size])
	return size
}

// distance checks a distance the guest passed: a number >= 0, +Inf allowed.
func distance(v float64) bool { return v >= 0 } // false for NaN too

// maxNeighbors is the largest k worth asking the host for: the packed
// answer of more neighbours than that could not fit in the guest's memory
// at its limit, however far the guest grew it, so asking for more only
// makes the host hold more points for nothing. The guest then gets
// StatusTooSmall with a need beyond its memory either way.
func (rs *runState) maxNeighbors() int {
	return int(rs.memoryLimit()/int64(neighborRecordSize(rs.dims, 0))) + 1
}

// memoryLimit is the most memory the guest can grow to, in bytes.
func (rs *runState) memoryLimit() int64 {
	return int64(memoryPages(rs.g.Limits().MemoryBytes)) * 65536
}

// hostNearby: (centre, k, max_dist, buf, cap, n_out, needed_out). The k
// nearest points, nearest first, packed as neighbour records. max_dist
// +Inf means no bound and 0 the centre alone (the host's Nearby takes 0
// for no bound, so 0 goes to it as the smallest positive distance, which
// keeps exactly the points at distance 0). *n_out and *needed_out are set
// on 0 and 2 (the need saturates at 2^32-1, beyond any buffer).
func hostNearby(ctx context.Context, rs *runState, m api.Module, s []uint64) {
	const fn = "nearby"
	mem := memory(m)
	cw := uint32(4 * rs.dims)
	raw := view(mem, fn, "centre", u32(s[0]), cw)
	k, maxDist := int32(u32(s[1])), api.DecodeF64(s[2])
	nOut := view(mem, fn, "count out-pointer", u32(s[5]), 4)
	needOut := view(mem, fn, "needed out-pointer", u32(s[6]), 4)
	buf := view(mem, fn, "buffer", u32(s[3]), u32(s[4]))
	if k < 1 || !distance(maxDist) {
		s[0] = StatusBadArg
		return
	}
	key := rs.key("nearby", []uint64{uint64(k), math.Float64bits(maxDist)}, raw)
	if rs.cache.key != string(key) {
		c := coord(mem, fn, "centre", u32(s[0]), rs.scratch[:rs.dims])
		hostMax := maxDist
		switch {
		case math.IsInf(maxDist, 1):
			hostMax = 0
		case maxDist == 0:
			hostMax = math.SmallestNonzeroFloat64
		}
		near, err := rs.host.Nearby(ctx, c, min(int(k), rs.maxNeighbors()), hostMax)
		if err != nil {
			s[0] = rs.hostErr(fn, err)
			return
		}
		size := 0
		for _, n := range near {
			size += neighborRecordSize(len(n.Coord), len(n.Value))
		}
		count := len(near)
		binary.LittleEndian.PutUint32(nOut, uint32(count))
		binary.LittleEndian.PutUint32(needOut, uint32(min(size, math.MaxUint32)))
		if size <= len(buf) {
			// The usual case: packed straight into the guest's buffer,
			// nothing kept.
			for used := 0; len(near) > 0; near = near[1:] {
				used += packNeighbor(buf[used:], near[0])
			}
			s[0] = StatusOK
			return
		}
		s[0] = StatusTooSmall
		if int64(size) > rs.memoryLimit() {
			return // no buffer the guest can make would hold it: nothing to keep
		}
		// Kept for the retry with a bigger buffer, which must not pay for
		// the search again.
		data := make([]byte, size)
		for used := 0; len(near) > 0; near = near[1:] {
			used += packNeighbor(data[used:], near[0])
		}
		rs.cache = packCache{key: string(key), data: data, count: count}
		return
	}
	binary.LittleEndian.PutUint32(nOut, uint32(rs.cache.count))
	binary.LittleEndian.PutUint32(needOut, uint32(len(rs.cache.data)))
	rs.cache.copyTo(buf, s)
}

// hostWithinOpen: (centre, r, cursor_out). A cursor over the points at
// distance at most r, read with region_next like a box's.
func hostWithinOpen(ctx context.Context, rs *runState, m api.Module, s []uint64) {
	const fn = "within_open"
	mem := memory(m)
	c := rs.newCoord(mem, fn, "centre", u32(s[0]))
	r := api.DecodeF64(s[1])
	view(mem, fn, "cursor out-pointer", u32(s[2]), 4)
	if !distance(r) {
		// Refused here, as an inverted box is, so that every host answers
		// the same.
		s[0] = StatusBadArg
		return
	}
	rs.open(mem, u32(s[2]), pointsCursor(rs.host.Within(ctx, c, r)), s)
}

// key builds the cache key of a call in rs.keyBuf from its name, its
// numeric arguments and the guest's bytes it read; comparing it with the
// cache's key allocates nothing. Only the last of raws may vary in length
// between calls (coordinates have one length per run), so keys of
// different arguments differ.
func (rs *runState) key(fn string, nums []uint64, raws ...[]byte) []byte {
	b := append(rs.keyBuf[:0], fn...)
	b = append(b, 0)
	for _, n := range nums {
		b = binary.LittleEndian.AppendUint64(b, n)
	}
	for _, r := range raws {
		b = append(b, r...)
	}
	rs.keyBuf = b
	return b
}
