package wal

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/cubelinux/cube/engine/internal/crypt"
)

// On-disk layout; doc.go describes it byte by byte.
const (
	segHeaderSize  = 64
	recHeaderSize  = 24
	formatVersion  = 1
	flagEncrypted  = 1
	maxStoredLen   = 1 << 30 // bound on a record's stored length field
	segmentSuffix  = ".wal"
	segmentNameLen = 20 + len(segmentSuffix)
	spareName      = "prealloc.tmp"
)

var segMagic = [8]byte{'c', 'u', 'b', 'e', 'w', 'a', 'l', 0}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// segHeader is the fixed header at the start of every segment.
type segHeader struct {
	version  uint16
	flags    uint16
	salt     uint32
	firstLSN uint64
}

// encodeSegHeader returns the 64-byte header. With a cipher, bytes 24..52
// hold Seal(nil, nil, header[0:24]): opening it proves the key before any
// record is read.
func encodeSegHeader(h segHeader, c *crypt.Cipher) []byte {
	b := make([]byte, segHeaderSize)
	copy(b[0:8], segMagic[:])
	binary.LittleEndian.PutUint16(b[8:], h.version)
	binary.LittleEndian.PutUint16(b[10:], h.flags)
	binary.LittleEndian.PutUint32(b[12:], h.salt)
	binary.LittleEndian.PutUint64(b[16:], h.firstLSN)
	if c != nil {
		check := c.Seal(nil, nil, b[0:24])
		copy(b[24:24+crypt.Overhead], check)
	}
	binary.LittleEndian.PutUint32(b[60:], crc32.Checksum(b[:60], castagnoli))
	return b
}

// decodeSegHeader parses a header; reason is non-empty when it is invalid.
func decodeSegHeader(b []byte) (h segHeader, reason string) {
	if len(b) < segHeaderSize {
		return h, fmt.Sprintf("segment header truncated (%d bytes)", len(b))
	}
	if !bytes.Equal(b[0:8], segMagic[:]) {
		return h, "bad segment magic"
	}
	if got, want := binary.LittleEndian.Uint32(b[60:]), crc32.Checksum(b[:60], castagnoli); got != want {
		return h, "segment header checksum mismatch"
	}
	h.version = binary.LittleEndian.Uint16(b[8:])
	h.flags = binary.LittleEndian.Uint16(b[10:])
	h.salt = binary.LittleEndian.Uint32(b[12:])
	h.firstLSN = binary.LittleEndian.Uint64(b[16:])
	if h.version != formatVersion {
		return h, fmt.Sprintf("unknown segment format version %d", h.version)
	}
	if h.flags&^flagEncrypted != 0 {
		return h, fmt.Sprintf("unknown segment flags %#x", h.flags)
	}
	if h.firstLSN == 0 {
		return h, "segment first LSN is 0"
	}
	return h, ""
}

// checkKey opens the key check of an encrypted header.
func checkKey(b []byte, c *crypt.Cipher) bool {
	_, err := c.Open(nil, b[24:24+crypt.Overhead], b[0:24])
	return err == nil
}

// newSalt returns a non-zero salt different from prev.
func newSalt(prev uint32) uint32 {
	for {
		s := rand.Uint32()
		if s != 0 && s != prev {
			return s
		}
	}
}

// appendRecord appends the framed record for payload to dst. synced is the
// LSN known durable when the record was appended; recovery uses it to tell
// a torn write from corruption.
func appendRecord(dst []byte, salt uint32, lsn, synced uint64, payload []byte, c *crypt.Cipher) []byte {
	start := len(dst)
	n := len(payload)
	if c != nil {
		n += crypt.Overhead
	}
	dst = append(dst, make([]byte, recHeaderSize)...)
	h := dst[start : start+recHeaderSize]
	binary.LittleEndian.PutUint32(h[4:], uint32(n))
	binary.LittleEndian.PutUint64(h[8:], lsn)
	binary.LittleEndian.PutUint64(h[16:], synced)
	if c != nil {
		// The AEAD's additional data must not overlap its output.
		var ad [recHeaderSize - 4]byte
		copy(ad[:], h[4:])
		dst = c.Seal(dst, payload, ad[:])
	} else {
		dst = append(dst, payload...)
	}
	crc := crc32.Update(salt, castagnoli, dst[start+4:])
	binary.LittleEndian.PutUint32(dst[start:], crc)
	return dst
}

// recStatus classifies the bytes at a record position.
type recStatus int

const (
	recOK    recStatus = iota
	recZero            // an all-zero header: end of the written log
	recShort           // fewer bytes than the header or body needs
	recBad             // the header or the checksum does not validate
)

// record is a decoded record; body aliases the input.
type record struct {
	lsn    uint64
	synced uint64
	body   []byte // stored payload (sealed when encrypted)
	size   int    // header + body
}

// decodeRecord decodes the record at the start of b under salt. It never
// panics, whatever b holds.
func decodeRecord(b []byte, salt uint32) (record, recStatus) {
	if len(b) < recHeaderSize {
		if isZero(b) {
			return record{}, recZero
		}
		return record{}, recShort
	}
	if isZero(b[:recHeaderSize]) {
		return record{}, recZero
	}
	n := binary.LittleEndian.Uint32(b[4:])
	lsn := binary.LittleEndian.Uint64(b[8:])
	synced := binary.LittleEndian.Uint64(b[16:])
	if lsn == 0 || n > maxStoredLen || synced >= lsn {
		return record{}, recBad
	}
	if uint64(len(b)-recHeaderSize) < uint64(n) {
		return record{}, recShort
	}
	end := recHeaderSize + int(n)
	if crc32.Update(salt, castagnoli, b[4:end]) != binary.LittleEndian.Uint32(b) {
		return record{}, recBad
	}
	return record{lsn: lsn, synced: synced, body: b[recHeaderSize:end], size: end}, recOK
}

var zeros [4096]byte

func isZero(b []byte) bool {
	for len(b) > len(zeros) {
		if !bytes.Equal(b[:len(zeros)], zeros[:]) {
			return false
		}
		b = b[len(zeros):]
	}
	return bytes.Equal(b, zeros[:len(b)])
}

// nextNonZero returns the index of the first non-zero byte of b at or after
// from, or -1.
func nextNonZero(b []byte, from int) int {
	i := from
	for i+len(zeros) <= len(b) && bytes.Equal(b[i:i+len(zeros)], zeros[:]) {
		i += len(zeros)
	}
	for ; i < len(b); i++ {
		if b[i] != 0 {
			return i
		}
	}
	return -1
}

// lastNonZero returns one past the last non-zero byte of b, or 0.
func lastNonZero(b []byte) int {
	i := len(b)
	for i >= len(zeros) && bytes.Equal(b[i-len(zeros):i], zeros[:]) {
		i -= len(zeros)
	}
	for i > 0 && b[i-1] == 0 {
		i--
	}
	return i
}

// findValid scans b, a segment whose first LSN is first, from offset from
// for any record that validates under salt with an LSN of at least minLSN.
// It returns its offset or -1.
//
// A record at offset off follows at most (off-header)/recHeaderSize
// others in its segment, so its LSN is at most first plus that: a header
// claiming any other LSN is refused before its checksum is computed. Without
// the bound, every offset of damaged data whose garbage length field
// pointed far into a preallocated segment cost a checksum of megabytes
// (seconds of CPU for a few kilobytes of damage).
func findValid(b []byte, from int, salt uint32, minLSN, first uint64) (record, int) {
	off := from
	lo := max(minLSN, first)
	for off+recHeaderSize <= len(b) {
		// A header needs a non-zero LSN, so it overlaps a non-zero byte.
		k := nextNonZero(b, off)
		if k < 0 {
			break
		}
		if k-recHeaderSize+1 > off {
			off = k - recHeaderSize + 1
			continue
		}
		hi := first + uint64(max(off-segHeaderSize, 0)/recHeaderSize)
		if lsn := binary.LittleEndian.Uint64(b[off+8:]); lsn < lo || lsn > hi {
			off++
			continue
		}
		if r, st := decodeRecord(b[off:], salt); st == recOK && r.lsn >= minLSN {
			return r, off
		}
		off++
	}
	return record{}, -1
}

// segmentName is the file name of the segment whose first LSN is lsn.
func segmentName(lsn uint64) string {
	return fmt.Sprintf("%020d%s", lsn, segmentSuffix)
}

// parseSegmentName returns the first LSN named by a segment file name.
func parseSegmentName(name string) (uint64, bool) {
	if len(name) != segmentNameLen || !strings.HasSuffix(name, segmentSuffix) {
		return 0, false
	}
	digits := name[:20]
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || v == 0 {
		return 0, false
	}
	return v, true
}
