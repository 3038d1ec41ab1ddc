package wasm

import "encoding/binary"

// The packing shared by the cursor calls (region_next, edges_next) and the
// calls whose whole answer is packed once and cached (walk,
// shortest_path). docs/ABI.md gives the record layouts.

// packRecords packs records into buf while they fit: first the record
// held back from the last call (*held), then those next returns. size is
// a record's packed size, put packs one into the front of its argument and
// returns the bytes written, keep copies a record that must outlive the
// cursor's current position. The first record that does not fit is kept
// in *held for the next call; when it is the first of this call, packRecords
// returns n = 0 and need = its size.
func packRecords[T any](buf []byte, held **T, next func() (T, bool), size func(T) int, put func([]byte, T) int, keep func(T) T) (n, used, need int) {
	for {
		var r T
		if *held != nil {
			r, *held = **held, nil
		} else {
			var ok bool
			if r, ok = next(); !ok {
				return n, used, 0
			}
		}
		sz := size(r)
		if used+sz > len(buf) {
			k := keep(r)
			*held = &k
			if n == 0 {
				return 0, 0, sz
			}
			return n, used, 0
		}
		used += put(buf[used:], r)
		n++
	}
}

// packed answers a cursor call that packed n records in used bytes:
// StatusOK; StatusTooSmall with need bytes wanted when not even the first
// record fit; or, when nothing was packed because the cursor failed, that
// error's status.
func (rs *runState) packed(fn string, s []uint64, nOut, bOut []byte, n, used, need int, cursorErr func() error) {
	if n == 0 && need > 0 {
		binary.LittleEndian.PutUint32(nOut, 0)
		binary.LittleEndian.PutUint32(bOut, uint32(need))
		s[0] = StatusTooSmall
		return
	}
	binary.LittleEndian.PutUint32(nOut, uint32(n))
	binary.LittleEndian.PutUint32(bOut, uint32(used))
	s[0] = StatusOK
	if n == 0 {
		if err := cursorErr(); err != nil {
			s[0] = rs.hostErr(fn, err)
		}
	}
}

// copyTo copies the cached answer into buf, or says StatusTooSmall when it
// does not fit (the caller has written the size needed).
func (c *packCache) copyTo(buf []byte, s []uint64) {
	if len(c.data) > len(buf) {
		s[0] = StatusTooSmall
		return
	}
	copy(buf, c.data)
	s[0] = StatusOK
}
