package checkpoint

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"

	"github.com/cubelinux/cube/engine/internal/crypt"
	"github.com/cubelinux/cube/engine/vfs"
)

// Info describes a finished or verified checkpoint file.
type Info struct {
	Path    string
	Records uint64
	// Bytes is the file's size.
	Bytes int64
}

// Writer writes one checkpoint file. It is not safe for concurrent use.
// Use it as
//
//	w, err := checkpoint.Create(fs, path, h, c)
//	...
//	defer w.Abort() // no-op once Finish succeeded
//	for ... { if err := w.Add(rec); err != nil { return err } }
//	info, err := w.Finish()
type Writer struct {
	fs   vfs.FS
	path string
	f    vfs.File
	c    *crypt.Cipher
	salt uint32

	buf    []byte // block header room, then the body being filled
	sealed []byte // block header, then the sealed body (encrypted files)
	ad     [16]byte

	off     int64 // bytes written so far
	records uint64
	blocks  uint64
	rolling uint32

	err  error // sticky: once a write failed, the file is useless
	done bool  // finished or aborted
}

// Create starts a checkpoint file at path with header h. If c is not nil
// every block is sealed with it. Create fails with ErrExists if path
// exists: a checkpoint is written once, under a new name (see FileName).
//
// Nothing is durable until Finish returns.
func Create(fsys vfs.FS, path string, h Header, c *crypt.Cipher) (*Writer, error) {
	if err := h.validate(); err != nil {
		return nil, err
	}
	if _, err := fsys.Stat(path); err == nil {
		return nil, fmt.Errorf("create %s: %w", path, ErrExists)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("checkpoint: create %s: %w", path, err)
	}
	f, err := fsys.Create(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: create %s: %w", path, err)
	}
	var s [4]byte
	rand.Read(s[:]) // never fails (crypto/rand since Go 1.24)
	w := &Writer{
		fs:   fsys,
		path: path,
		f:    f,
		c:    c,
		salt: le.Uint32(s[:]),
		buf:  make([]byte, blockHdrLen, blockHdrLen+BlockSize+binary.MaxVarintLen64),
	}
	w.rolling = w.salt
	if c != nil {
		w.sealed = make([]byte, 0, blockHdrLen+BlockSize+binary.MaxVarintLen64+crypt.Overhead)
	}
	if err := w.write(encodeHeader(h, w.salt, c)); err != nil {
		w.Abort()
		return nil, err
	}
	return w, nil
}

// Add appends one record. Records are buffered into blocks of about
// BlockSize; Add writes (without syncing) when a block is full. rec is
// copied; the caller may reuse it. After an error the Writer is useless:
// call Abort.
func (w *Writer) Add(rec []byte) error {
	if w.err != nil {
		return w.err
	}
	if w.done {
		return ErrClosed
	}
	if len(rec) > MaxRecordSize {
		return fmt.Errorf("%w: record of %d bytes (at most %d)", ErrInvalid, len(rec), MaxRecordSize)
	}
	need := uvarintLen(len(rec)) + len(rec)
	if body := len(w.buf) - blockHdrLen; body > 0 && body+need > BlockSize {
		if err := w.flush(); err != nil {
			return err
		}
	}
	w.buf = binary.AppendUvarint(w.buf, uint64(len(rec)))
	w.buf = append(w.buf, rec...)
	w.records++
	if len(w.buf)-blockHdrLen >= BlockSize {
		return w.flush()
	}
	return nil
}

// Finish writes the last block and the footer, syncs the file and its
// directory entry, and closes it. When Finish returns nil the file is
// durable and complete; a manifest may name it.
func (w *Writer) Finish() (Info, error) {
	if w.err != nil {
		return Info{}, w.err
	}
	if w.done {
		return Info{}, ErrClosed
	}
	if len(w.buf) > blockHdrLen {
		if err := w.flush(); err != nil {
			return Info{}, err
		}
	}
	if w.blocks >= math.MaxUint32 {
		return Info{}, w.fail(fmt.Errorf("%w: too many blocks", ErrInvalid))
	}
	ft := footer{records: w.records, blocks: w.blocks, dataBytes: uint64(w.off) - headerLenV1, rolling: w.rolling}
	w.buf = ft.encode(w.buf[:blockHdrLen])
	if err := w.writeBlock(blockFooter); err != nil {
		return Info{}, err
	}
	if err := w.f.Sync(); err != nil {
		return Info{}, w.fail(fmt.Errorf("checkpoint: sync %s: %w", w.path, err))
	}
	err := w.f.Close()
	w.f = nil
	if err != nil {
		return Info{}, w.fail(fmt.Errorf("checkpoint: close %s: %w", w.path, err))
	}
	if err := w.fs.SyncDir(filepath.Dir(w.path)); err != nil {
		return Info{}, w.fail(fmt.Errorf("checkpoint: sync directory of %s: %w", w.path, err))
	}
	w.done = true
	return Info{Path: w.path, Records: w.records, Bytes: w.off}, nil
}

// Abort closes the file and removes it. It does nothing after a Finish
// that succeeded, so it can be deferred.
func (w *Writer) Abort() {
	if w.done {
		return
	}
	w.done = true
	if w.err == nil {
		w.err = ErrClosed
	}
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
	w.fs.Remove(w.path) // best effort: RemoveUnreferenced collects leftovers
}

func (w *Writer) fail(err error) error {
	if w.err == nil {
		w.err = err
	}
	return err
}

func (w *Writer) write(b []byte) error {
	if _, err := w.f.Write(b); err != nil {
		return w.fail(fmt.Errorf("checkpoint: write %s: %w", w.path, err))
	}
	w.off += int64(len(b))
	return nil
}

// flush writes the buffered records as a data block.
func (w *Writer) flush() error {
	if w.blocks >= math.MaxUint32 {
		return w.fail(fmt.Errorf("%w: too many blocks", ErrInvalid))
	}
	if err := w.writeBlock(blockData); err != nil {
		return err
	}
	w.blocks++
	if cap(w.buf) > 4*BlockSize { // a huge record passed: give the memory back
		w.buf = make([]byte, blockHdrLen, blockHdrLen+BlockSize+binary.MaxVarintLen64)
	}
	w.buf = w.buf[:blockHdrLen]
	return nil
}

// writeBlock writes w.buf[blockHdrLen:] as the body of a block of type typ
// with index w.blocks; the header goes into the room in front of it.
func (w *Writer) writeBlock(typ byte) error {
	body := w.buf[blockHdrLen:]
	var out []byte
	if w.c == nil {
		out = w.buf
		putBlockHeader(out, len(body), uint32(w.blocks), typ)
		le.PutUint32(out[12:], blockCRC(w.salt, out, out[blockHdrLen:]))
	} else {
		out = append(w.sealed[:0], make([]byte, blockHdrLen)...)
		putBlockHeader(out, len(body)+crypt.Overhead, uint32(w.blocks), typ)
		out = w.c.Seal(out, body, blockAD(&w.ad, out, w.salt))
		le.PutUint32(out[12:], blockCRC(w.salt, out, out[blockHdrLen:]))
		if cap(out) <= 4*BlockSize {
			w.sealed = out
		}
	}
	if typ == blockData {
		w.rolling = crc32Update(w.rolling, out)
	}
	return w.write(out)
}

func uvarintLen(n int) int {
	l := 1
	for n >= 0x80 {
		n >>= 7
		l++
	}
	return l
}
