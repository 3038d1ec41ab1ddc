package checkpoint_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cubelinux/cube/engine/internal/base"
	"github.com/cubelinux/cube/engine/internal/checkpoint"
	"github.com/cubelinux/cube/engine/internal/crypt"
	"github.com/cubelinux/cube/engine/vfs"
)

// Layout constants from doc.go, used to name the region a byte is in.
const (
	headerLen   = 80
	blockHdrLen = 16
	footerBody  = 32
)

// TestEveryFlippedByte flips each byte of small files, three ways, and
// expects Verify to report corruption in the structure that holds it.
func TestEveryFlippedByte(t *testing.T) {
	for _, recs := range [][][]byte{
		nil,
		{[]byte("alpha"), []byte("beta beta"), {}, bytes.Repeat([]byte{'g'}, 130)},
	} {
		for _, enc := range []bool{false, true} {
			var c *crypt.Cipher
			footLen := blockHdrLen + footerBody
			if enc {
				c = newCipher(t, 3)
				footLen += crypt.Overhead
			}
			t.Run(fmtCase(len(recs), enc), func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "f.ckpt")
				writeFile(t, vfs.OS(), path, checkpoint.Header{Kind: checkpoint.Base, LSN: 77}, c, recs)
				orig, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				// Regions: header, the data block (if any), footer.
				bounds := []int{0, headerLen, len(orig) - footLen, len(orig)}
				region := func(off int) (int, int) {
					for i := 1; i < len(bounds); i++ {
						if off < bounds[i] {
							return bounds[i-1], bounds[i]
						}
					}
					return -1, -1
				}
				for off := range orig {
					for _, mask := range []byte{0x01, 0x80, 0xff} {
						b := bytes.Clone(orig)
						b[off] ^= mask
						_, err := checkpoint.Verify(memWith(t, path, b), path, c)
						var ce *base.CorruptionError
						if !errors.As(err, &ce) {
							t.Fatalf("byte %d ^%#x: Verify = %v, want corruption", off, mask, err)
						}
						if lo, hi := region(off); ce.Offset < int64(lo) || ce.Offset >= int64(hi) || ce.File != path {
							t.Fatalf("byte %d ^%#x: %v; want an offset in [%d,%d)", off, mask, err, lo, hi)
						}
					}
				}
			})
		}
	}
}

func fmtCase(n int, enc bool) string {
	s := "empty"
	if n > 0 {
		s = "records"
	}
	if enc {
		return s + "/encrypted"
	}
	return s + "/plain"
}

// TestTruncated cuts files at every length (small file) and at and around
// block boundaries (big file), and appends garbage: all incomplete.
func TestTruncated(t *testing.T) {
	rng := seededRand(t)
	for _, enc := range []bool{false, true} {
		var c *crypt.Cipher
		if enc {
			c = newCipher(t, 4)
		}
		dir := t.TempDir()
		small := filepath.Join(dir, "small.ckpt")
		writeFile(t, vfs.OS(), small, checkpoint.Header{Kind: checkpoint.Base, LSN: 1}, c, randRecords(rng, 20, 30))
		big := filepath.Join(dir, "big.ckpt")
		writeFile(t, vfs.OS(), big, checkpoint.Header{Kind: checkpoint.Base, LSN: 1}, c, randRecords(rng, 20000, 40))

		check := func(orig []byte, n int, tail []byte) {
			t.Helper()
			path := filepath.Join(dir, "cut.ckpt")
			_, err := checkpoint.Verify(memWith(t, path, append(bytes.Clone(orig[:n]), tail...)), path, c)
			if !errors.Is(err, checkpoint.ErrIncomplete) || !base.IsCorruption(err) {
				t.Fatalf("enc=%v: cut at %d of %d (+%d bytes): %v, want ErrIncomplete", enc, n, len(orig), len(tail), err)
			}
		}
		orig, _ := os.ReadFile(small)
		for n := 0; n < len(orig); n++ {
			check(orig, n, nil)
		}
		check(orig, len(orig), []byte{0})
		check(orig, len(orig), make([]byte, 100))

		orig, _ = os.ReadFile(big)
		for _, n := range []int{headerLen, headerLen + 1, len(orig) - 1, len(orig) / 2} {
			check(orig, n, nil)
		}
		// Cut at each block boundary: walk the block headers.
		for off := headerLen; off < len(orig); {
			check(orig, off, nil)
			off += blockHdrLen + int(binary.LittleEndian.Uint32(orig[off:]))
		}
	}
}

// TestBlocksCannotMove swaps two whole data blocks (each with a valid CRC)
// and splices a block from another file: both are corruption.
func TestBlocksCannotMove(t *testing.T) {
	rng := seededRand(t)
	dir := t.TempDir()
	recs := randRecords(rng, 10000, 40) // a few blocks of equal length
	for i := range recs {
		recs[i] = append(recs[i], make([]byte, 40-len(recs[i]))...)
	}
	for _, enc := range []bool{false, true} {
		var c *crypt.Cipher
		if enc {
			c = newCipher(t, 5)
		}
		a, b := filepath.Join(dir, "a.ckpt"), filepath.Join(dir, "b.ckpt")
		os.Remove(a)
		os.Remove(b)
		writeFile(t, vfs.OS(), a, checkpoint.Header{Kind: checkpoint.Base, LSN: 1}, c, recs)
		writeFile(t, vfs.OS(), b, checkpoint.Header{Kind: checkpoint.Base, LSN: 1}, c, recs)
		ra, _ := os.ReadFile(a)
		rb, _ := os.ReadFile(b)
		var starts []int
		for off := headerLen; off < len(ra); {
			starts = append(starts, off)
			off += blockHdrLen + int(binary.LittleEndian.Uint32(ra[off:]))
		}
		if len(starts) < 4 {
			t.Fatalf("want at least 3 data blocks, have %d", len(starts)-1)
		}
		// Splice: block 1 of b into a (same position, same length, other salt).
		m := bytes.Clone(ra)
		copy(m[starts[1]:starts[2]], rb[starts[1]:starts[2]])
		mixed := filepath.Join(dir, "mixed.ckpt")
		os.WriteFile(mixed, m, 0o644)
		if _, err := checkpoint.Verify(vfs.OS(), mixed, c); !base.IsCorruption(err) {
			t.Fatalf("enc=%v spliced block: %v", enc, err)
		}
		// Swap blocks 0 and 1 if they have the same length.
		l0, l1 := starts[1]-starts[0], starts[2]-starts[1]
		if l0 != l1 {
			t.Fatalf("blocks of %d and %d bytes", l0, l1)
		}
		{
			m = bytes.Clone(ra)
			copy(m[starts[0]:], ra[starts[1]:starts[2]])
			copy(m[starts[1]:], ra[starts[0]:starts[1]])
			os.WriteFile(mixed, m, 0o644)
			if _, err := checkpoint.Verify(vfs.OS(), mixed, c); !base.IsCorruption(err) {
				t.Fatalf("enc=%v swapped blocks: %v", enc, err)
			}
		}
	}
}

func TestWrongKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k.ckpt")
	writeFile(t, vfs.OS(), path, checkpoint.Header{Kind: checkpoint.Base, LSN: 9}, newCipher(t, 1), [][]byte{[]byte("secret")})
	before, _ := os.ReadFile(path)

	_, _, err := checkpoint.Open(vfs.OS(), path, newCipher(t, 2))
	if !errors.Is(err, checkpoint.ErrWrongKey) || base.IsCorruption(err) {
		t.Fatalf("wrong key: %v, want ErrWrongKey and not corruption", err)
	}
	if _, err := checkpoint.Verify(vfs.OS(), path, newCipher(t, 2)); !errors.Is(err, checkpoint.ErrWrongKey) {
		t.Fatalf("Verify with wrong key: %v", err)
	}
	if _, _, err := checkpoint.Open(vfs.OS(), path, nil); !errors.Is(err, checkpoint.ErrNeedKey) {
		t.Fatalf("no key: %v, want ErrNeedKey", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Fatal("file changed by opening with a wrong key")
	}
	if _, err := checkpoint.Verify(vfs.OS(), path, newCipher(t, 1)); err != nil {
		t.Fatalf("right key: %v", err)
	}

	// A plain file opens whether or not a key is given.
	plain := filepath.Join(dir, "p.ckpt")
	writeFile(t, vfs.OS(), plain, checkpoint.Header{Kind: checkpoint.Base, LSN: 9}, nil, [][]byte{[]byte("x")})
	if recs, _, err := readAll(vfs.OS(), plain, newCipher(t, 2)); err != nil || len(recs) != 1 {
		t.Fatalf("plain file with a key: %v", err)
	}
}

func TestNewerFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "n.ckpt")
	writeFile(t, vfs.OS(), path, checkpoint.Header{Kind: checkpoint.Base, LSN: 9}, nil, nil)
	b, _ := os.ReadFile(path)
	binary.LittleEndian.PutUint16(b[8:], checkpoint.Version+1)
	// Recompute the header CRC as doc.go describes: CRC32C over [0:12]
	// and [16:header length].
	tab := crc32.MakeTable(crc32.Castagnoli)
	crc := crc32.Update(crc32.Update(0, tab, b[:12]), tab, b[16:headerLen])
	binary.LittleEndian.PutUint32(b[12:], crc)
	os.WriteFile(path, b, 0o644)
	_, _, err := checkpoint.Open(vfs.OS(), path, nil)
	if !errors.Is(err, checkpoint.ErrNewerFormat) || base.IsCorruption(err) {
		t.Fatalf("newer format: %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "version 2") || !strings.Contains(msg, "version 1") {
		t.Fatalf("message does not name both versions: %q", msg)
	}
}

// TestTamperBehindValidCRC changes sealed bytes and recomputes every CRC,
// as an attacker could: the seal catches it, reported as corruption at the
// block, not as a wrong key.
func TestTamperBehindValidCRC(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.ckpt")
	c := newCipher(t, 6)
	writeFile(t, vfs.OS(), path, checkpoint.Header{Kind: checkpoint.Base, LSN: 1}, c, [][]byte{[]byte("one"), []byte("two")})
	orig, _ := os.ReadFile(path)
	footerOff := len(orig) - (blockHdrLen + footerBody + crypt.Overhead)
	for _, off := range []int{headerLen + blockHdrLen + 3, headerLen + blockHdrLen + 20, footerOff + blockHdrLen + 20} {
		b := bytes.Clone(orig)
		b[off] ^= 0x40
		fixChecksums(b)
		_, err := checkpoint.Verify(memWith(t, path, b), path, c)
		var ce *base.CorruptionError
		if !errors.As(err, &ce) || errors.Is(err, checkpoint.ErrWrongKey) || !strings.Contains(ce.Reason, "authenticate") {
			t.Fatalf("byte %d changed behind a valid CRC: %v", off, err)
		}
		want := int64(headerLen) // the data block
		if off >= footerOff {
			want = int64(footerOff)
		}
		if ce.Offset != want {
			t.Fatalf("byte %d: offset %d, want %d", off, ce.Offset, want)
		}
	}
}
