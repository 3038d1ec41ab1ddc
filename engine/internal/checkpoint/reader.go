package checkpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"time"

	"github.com/cubelinux/cube/engine/internal/crypt"
	"github.com/cubelinux/cube/engine/vfs"
)

// Reader reads the records of one checkpoint file in the order they were
// added. It is not safe for concurrent use.
type Reader struct {
	f    vfs.File
	path string
	c    *crypt.Cipher
	fh   fileHeader
	size int64
	foot footer

	footerOff int64 // where the data blocks end
	off       int64 // offset of the next block
	hdr       [blockHdrLen]byte
	haveHdr   bool // hdr holds the header of the block at off
	ad        [16]byte

	buf      []byte // the block as read
	plain    []byte // its opened body (encrypted files)
	body     []byte // records not yet returned
	blockOff int64  // offset of the block body came from

	blocks  uint64
	records uint64
	rolling uint32
	err     error // sticky; io.EOF at the end
}

// Open opens a checkpoint file, checks its header and footer, and returns a
// Reader positioned at the first record. c is needed if the file is
// encrypted (ErrNeedKey otherwise) and ignored if it is not.
//
// # Errors
//
// A file without a valid footer is incomplete: a *base.CorruptionError
// wrapping ErrIncomplete. A damaged header is a *base.CorruptionError. A wrong key is
// ErrWrongKey, a newer format ErrNewerFormat. Damage inside the data blocks
// is found as they are read, by Next.
func Open(fsys vfs.FS, path string, c *crypt.Cipher) (*Reader, Header, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, Header{}, fmt.Errorf("checkpoint: open %s: %w", path, err)
	}
	r := &Reader{f: f, path: path, c: c}
	if err := r.init(); err != nil {
		f.Close()
		return nil, Header{}, err
	}
	return r, r.fh.Header, nil
}

func (r *Reader) init() error {
	size, err := r.f.Size()
	if err != nil {
		return fmt.Errorf("checkpoint: size of %s: %w", r.path, err)
	}
	r.size = size
	fh, hb, err := readHeader(r.f, r.path, size)
	if err != nil {
		return err
	}
	r.fh = fh
	if fh.encrypted {
		if r.c == nil {
			return fmt.Errorf("open %s: %w", r.path, ErrNeedKey)
		}
		// The header's CRC holds, so its bytes are what was written; if the
		// key check does not open, the key is not the one that wrote it.
		if _, err := r.c.Open(nil, hb[keyCheckOff:keyCheckOff+keyCheckLen], hb[16:keyCheckOff]); err != nil {
			return fmt.Errorf("open %s: %w", r.path, ErrWrongKey)
		}
	} else {
		r.c = nil
	}
	return r.readFooter()
}

// readHeader reads and checks the file header, and returns its bytes.
func readHeader(f vfs.File, path string, size int64) (fileHeader, []byte, error) {
	var pro [prologueLen]byte
	if size < prologueLen {
		return fileHeader{}, nil, incomplete(path, 0, "file of %d bytes is shorter than a header", size)
	}
	if _, err := f.ReadAt(pro[:], 0); err != nil {
		return fileHeader{}, nil, fmt.Errorf("checkpoint: read %s: %w", path, err)
	}
	if string(pro[:8]) != magic {
		return fileHeader{}, nil, corrupt(path, 0, "not a checkpoint file (magic %q)", pro[:8])
	}
	hlen := int64(le.Uint16(pro[10:]))
	if hlen < prologueLen+8 || hlen > maxHeaderLen {
		return fileHeader{}, nil, corrupt(path, 10, "header length %d out of range", hlen)
	}
	if size < hlen {
		return fileHeader{}, nil, incomplete(path, 0, "file of %d bytes is shorter than its %d-byte header", size, hlen)
	}
	b := make([]byte, hlen)
	if _, err := f.ReadAt(b, 0); err != nil {
		return fileHeader{}, nil, fmt.Errorf("checkpoint: read %s: %w", path, err)
	}
	if got, want := headerCRC(b), le.Uint32(b[12:]); got != want {
		return fileHeader{}, nil, corrupt(path, 0, "header checksum mismatch (stored %#08x, computed %#08x)", want, got)
	}
	// Only now that the CRC holds is the version trustworthy.
	switch v := le.Uint16(b[8:]); {
	case v > Version:
		return fileHeader{}, nil, newer(path, v)
	case v == 0:
		return fileHeader{}, nil, corrupt(path, 8, "format version 0")
	}
	if hlen != headerLenV1 {
		return fileHeader{}, nil, corrupt(path, 10, "header length %d, want %d for version %d", hlen, headerLenV1, Version)
	}
	fh := fileHeader{length: hlen}
	fh.Kind = Kind(b[16])
	if fh.Kind != Base && fh.Kind != Delta {
		return fileHeader{}, nil, corrupt(path, 16, "unknown checkpoint kind %d", b[16])
	}
	flags := b[17]
	if flags&^flagEncrypted != 0 || le.Uint16(b[18:]) != 0 || le.Uint32(b[76:]) != 0 {
		return fileHeader{}, nil, corrupt(path, 17, "unknown flags %#x or reserved bytes set", flags)
	}
	fh.encrypted = flags&flagEncrypted != 0
	if !fh.encrypted && !allZero(b[keyCheckOff:keyCheckOff+keyCheckLen]) {
		return fileHeader{}, nil, corrupt(path, keyCheckOff, "key check set in an unencrypted file")
	}
	fh.salt = le.Uint32(b[20:])
	fh.LSN = le.Uint64(b[24:])
	fh.Prev = le.Uint64(b[32:])
	if n := int64(le.Uint64(b[40:])); n != 0 {
		fh.Created = time.Unix(0, n)
	}
	if err := fh.validate(); err != nil {
		return fileHeader{}, nil, corrupt(path, 24, "%v", err)
	}
	return fh, b, nil
}

// readFooter finds and checks the footer at the end of the file.
func (r *Reader) readFooter() error {
	flen := footerLen(r.fh.encrypted)
	off := r.size - flen
	if off < r.fh.length {
		return incomplete(r.path, r.fh.length, "no room for a footer after the header (file of %d bytes)", r.size)
	}
	b := make([]byte, flen)
	if _, err := r.f.ReadAt(b, off); err != nil {
		return fmt.Errorf("checkpoint: read %s: %w", r.path, err)
	}
	hdr, body := b[:blockHdrLen], b[blockHdrLen:]
	if b[8] != blockFooter || int64(le.Uint32(hdr)) != int64(len(body)) ||
		le.Uint32(hdr[12:]) != blockCRC(r.fh.salt, hdr, body) {
		return incomplete(r.path, off, "no valid footer at the end of the file (a write that did not finish, or a damaged footer)")
	}
	if r.c != nil {
		var err error
		body, err = r.c.Open(nil, body, blockAD(&r.ad, hdr, r.fh.salt))
		if err != nil {
			return corrupt(r.path, off, "footer does not authenticate")
		}
	}
	ft, ok := decodeFooter(body)
	if !ok {
		return corrupt(r.path, off, "footer reserved bytes set")
	}
	if ft.dataBytes != uint64(off-r.fh.length) || ft.blocks != uint64(le.Uint32(hdr[4:])) || hdr[9]|hdr[10]|hdr[11] != 0 {
		return corrupt(r.path, off, "footer does not match the file (%d data bytes, %d blocks; file has %d data bytes, footer index %d)",
			ft.dataBytes, ft.blocks, off-r.fh.length, le.Uint32(hdr[4:]))
	}
	if ft.records > ft.dataBytes { // every record takes at least one byte
		return corrupt(r.path, off, "footer claims %d records in %d bytes", ft.records, ft.dataBytes)
	}
	r.foot = ft
	r.footerOff = off
	r.off = r.fh.length
	r.rolling = r.fh.salt
	return nil
}

// Info describes the file: its path, the record count its footer states,
// and its size.
func (r *Reader) Info() Info {
	return Info{Path: r.path, Records: r.foot.records, Bytes: r.size}
}

// Next returns the next record, or io.EOF after the last one. The record
// is valid until the next call. io.EOF is returned only once the whole file
// checked out: every block's checksum, and the footer's record count, block
// count and rolling checksum.
func (r *Reader) Next() ([]byte, error) {
	for len(r.body) == 0 {
		if r.err != nil {
			return nil, r.err
		}
		if r.off == r.footerOff {
			r.err = r.end()
			return nil, r.err
		}
		if err := r.readBlock(); err != nil {
			r.err = err
			return nil, err
		}
	}
	n, k := binary.Uvarint(r.body)
	if k <= 0 || n > uint64(len(r.body)-k) {
		r.err = corrupt(r.path, r.blockOff, "record %d: bad length in block %d", r.records, r.blocks-1)
		r.body = nil
		return nil, r.err
	}
	rec := r.body[k : k+int(n) : k+int(n)]
	r.body = r.body[k+int(n):]
	r.records++
	return rec, nil
}

// Where says where the record Next returned last came from: the offset of
// the block that holds it and its number in the file (counting from 1),
// so that a caller that cannot decode it can say where it is.
func (r *Reader) Where() (blockOff int64, record uint64) { return r.blockOff, r.records }

// All returns the records as an iterator; it stops after the first error,
// which it yields with a nil record. End of file is not an error. Records
// are valid until the loop continues.
func (r *Reader) All() iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		for {
			rec, err := r.Next()
			if err == io.EOF {
				return
			}
			if !yield(rec, err) || err != nil {
				return
			}
		}
	}
}

// Close closes the file.
func (r *Reader) Close() error {
	if r.f == nil {
		return ErrClosed
	}
	err := r.f.Close()
	r.f = nil
	r.body = nil
	if r.err == nil || r.err == io.EOF {
		r.err = ErrClosed
	}
	return err
}

func (r *Reader) readBlock() error {
	if r.f == nil {
		return ErrClosed
	}
	off := r.off
	if !r.haveHdr {
		if _, err := r.f.ReadAt(r.hdr[:], off); err != nil {
			return fmt.Errorf("checkpoint: read %s: %w", r.path, err)
		}
	}
	r.haveHdr = false
	hdr := r.hdr[:]
	length := int64(le.Uint32(hdr))
	if hdr[8] != blockData || hdr[9]|hdr[10]|hdr[11] != 0 {
		return corrupt(r.path, off, "block %d: type %d where a data block belongs", r.blocks, hdr[8])
	}
	if idx := uint64(le.Uint32(hdr[4:])); idx != r.blocks {
		return corrupt(r.path, off, "block index %d where block %d belongs", idx, r.blocks)
	}
	room := r.footerOff - off - blockHdrLen
	if length > room {
		return corrupt(r.path, off, "block %d: length %d runs past the footer (room %d)", r.blocks, length, room)
	}
	// Read the body and, if another data block follows, its header.
	n := length
	next := off + blockHdrLen + length
	if next < r.footerOff {
		n += blockHdrLen
	}
	if c := int64(cap(r.buf)); c < n || (c > 4*BlockSize && n <= BlockSize) {
		// Grow for this block, or give back what a huge record took.
		r.buf = make([]byte, max(n, blockBufLen))
		r.plain = nil
	}
	buf := r.buf[:n]
	if _, err := r.f.ReadAt(buf, off+blockHdrLen); err != nil {
		if errors.Is(err, io.EOF) {
			return corrupt(r.path, off, "block %d: file shrank while reading", r.blocks)
		}
		return fmt.Errorf("checkpoint: read %s: %w", r.path, err)
	}
	body := buf[:length]
	if got, want := blockCRC(r.fh.salt, hdr, body), le.Uint32(hdr[12:]); got != want {
		return corrupt(r.path, off, "block %d: checksum mismatch (stored %#08x, computed %#08x)", r.blocks, want, got)
	}
	r.rolling = crc32Update(crc32Update(r.rolling, hdr), body)
	if r.c != nil {
		p, err := r.c.Open(r.plain[:0], body, blockAD(&r.ad, hdr, r.fh.salt))
		if err != nil {
			return corrupt(r.path, off, "block %d: does not authenticate (checksum holds but the seal does not open)", r.blocks)
		}
		r.plain = p
		body = p
	}
	if next < r.footerOff {
		copy(r.hdr[:], buf[length:])
		r.haveHdr = true
	}
	r.body = body
	r.blockOff = off
	r.blocks++
	r.off = next
	return nil
}

// end checks the totals against the footer once every block was read.
func (r *Reader) end() error {
	ft := r.foot
	if r.blocks != ft.blocks || r.records != ft.records || r.rolling != ft.rolling {
		return corrupt(r.path, r.footerOff,
			"file does not match its footer: read %d blocks, %d records, rolling checksum %#08x; footer says %d, %d, %#08x",
			r.blocks, r.records, r.rolling, ft.blocks, ft.records, ft.rolling)
	}
	return io.EOF
}

// Verify reads a whole checkpoint file and checks every block, the footer
// and, for an encrypted file, every seal.
func Verify(fsys vfs.FS, path string, c *crypt.Cipher) (Info, error) {
	r, _, err := Open(fsys, path, c)
	if err != nil {
		return Info{}, err
	}
	defer r.Close()
	for {
		if _, err := r.Next(); err == io.EOF {
			return r.Info(), nil
		} else if err != nil {
			return Info{}, err
		}
	}
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}
