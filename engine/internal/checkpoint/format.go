package checkpoint

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/cubelinux/cube/engine/internal/crypt"
)

// Version is the newest checkpoint and manifest format this build writes
// and reads.
const Version = 1

// BlockSize is the size of a block's body the Writer aims for. A record
// larger than BlockSize gets a block of its own.
const BlockSize = 64 << 10

// MaxRecordSize is the largest record Add accepts.
const MaxRecordSize = 1 << 30

// Ext is the file name extension of checkpoint files; RemoveUnreferenced
// considers only files with it (and MANIFEST.tmp).
const Ext = ".ckpt"

// Kind says whether a checkpoint holds the whole state or a change set.
type Kind uint8

// Kinds.
const (
	// Base holds the whole state as of Header.LSN.
	Base Kind = 1
	// Delta holds what changed between Header.Prev and Header.LSN; it
	// applies on the checkpoint whose LSN is Prev.
	Delta Kind = 2
)

func (k Kind) String() string {
	switch k {
	case Base:
		return "base"
	case Delta:
		return "delta"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Header describes a checkpoint file.
type Header struct {
	Kind Kind
	// LSN: the file holds the state as of this log position; recovery
	// replays the log after it.
	LSN uint64
	// Prev is the LSN of the checkpoint a Delta applies on; 0 for a Base.
	Prev uint64
	// Created is when the checkpoint was taken (stored in nanoseconds; the
	// zero Time is stored as 0 and read back as the zero Time).
	Created time.Time
}

func (h Header) validate() error {
	switch h.Kind {
	case Base:
		if h.Prev != 0 {
			return fmt.Errorf("%w: base checkpoint with Prev %d (must be 0)", ErrInvalid, h.Prev)
		}
	case Delta:
		if h.Prev > h.LSN {
			return fmt.Errorf("%w: delta checkpoint with Prev %d after LSN %d", ErrInvalid, h.Prev, h.LSN)
		}
	default:
		return fmt.Errorf("%w: checkpoint kind %d", ErrInvalid, uint8(h.Kind))
	}
	return nil
}

// FileName is the conventional name of a checkpoint file:
// base-<LSN>.ckpt or delta-<Prev>-<LSN>.ckpt, zero-padded so that names
// sort by LSN.
func FileName(h Header) string {
	if h.Kind == Delta {
		return fmt.Sprintf("delta-%020d-%020d%s", h.Prev, h.LSN, Ext)
	}
	return fmt.Sprintf("base-%020d%s", h.LSN, Ext)
}

// Layout; doc.go describes it byte by byte.
const (
	magic         = "CUBECKPT"
	prologueLen   = 16 // magic, version, header length, header CRC
	headerLenV1   = 80
	maxHeaderLen  = 4096
	keyCheckOff   = 48
	keyCheckLen   = crypt.Overhead // the seal of an empty message
	blockHdrLen   = 16
	footerBodyLen = 32
	// blockBufLen holds a full block, sealed, and the next block's header.
	blockBufLen = blockHdrLen + BlockSize + binary.MaxVarintLen64 + crypt.Overhead + blockHdrLen

	blockData   = 1
	blockFooter = 2

	flagEncrypted = 1
)

var (
	le         = binary.LittleEndian
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
)

// fileHeader is the decoded header of a file.
type fileHeader struct {
	Header
	salt      uint32
	encrypted bool
	length    int64
}

// encodeHeader returns the header bytes; c, if not nil, seals the key check.
func encodeHeader(h Header, salt uint32, c *crypt.Cipher) []byte {
	b := make([]byte, headerLenV1)
	copy(b, magic)
	le.PutUint16(b[8:], Version)
	le.PutUint16(b[10:], headerLenV1)
	b[16] = byte(h.Kind)
	if c != nil {
		b[17] = flagEncrypted
	}
	le.PutUint32(b[20:], salt)
	le.PutUint64(b[24:], h.LSN)
	le.PutUint64(b[32:], h.Prev)
	var created int64
	if !h.Created.IsZero() {
		created = h.Created.UnixNano()
	}
	le.PutUint64(b[40:], uint64(created))
	if c != nil {
		// The key check authenticates the header fields under the key:
		// if the CRC holds but this does not open, the key is wrong.
		copy(b[keyCheckOff:], c.Seal(nil, nil, b[16:keyCheckOff]))
	}
	le.PutUint32(b[12:], headerCRC(b))
	return b
}

func headerCRC(b []byte) uint32 {
	crc := crc32.Update(0, castagnoli, b[:12])
	return crc32.Update(crc, castagnoli, b[16:])
}

// putBlockHeader fills the first 12 bytes of a block header; the CRC goes
// into hdr[12:16] once the body is final.
func putBlockHeader(hdr []byte, length int, index uint32, typ byte) {
	le.PutUint32(hdr[0:], uint32(length))
	le.PutUint32(hdr[4:], index)
	hdr[8], hdr[9], hdr[10], hdr[11] = typ, 0, 0, 0
}

// blockCRC is CRC32C seeded with the file's salt over the block header
// (without its CRC field) and the body as stored.
func blockCRC(salt uint32, hdr, body []byte) uint32 {
	crc := crc32.Update(salt, castagnoli, hdr[:12])
	return crc32.Update(crc, castagnoli, body)
}

// blockAD is the additional data a block's seal authenticates: the block
// header without the CRC, and the file's salt, so that a sealed body cannot
// be moved to another position or another file.
func blockAD(ad *[16]byte, hdr []byte, salt uint32) []byte {
	copy(ad[:12], hdr[:12])
	le.PutUint32(ad[12:], salt)
	return ad[:]
}

// footer is the footer block's body.
type footer struct {
	records   uint64
	blocks    uint64 // data blocks
	dataBytes uint64 // bytes of data blocks, headers included
	rolling   uint32
}

func (f footer) encode(b []byte) []byte {
	b = le.AppendUint64(b, f.records)
	b = le.AppendUint64(b, f.blocks)
	b = le.AppendUint64(b, f.dataBytes)
	b = le.AppendUint32(b, f.rolling)
	return le.AppendUint32(b, 0)
}

func decodeFooter(b []byte) (footer, bool) {
	if len(b) != footerBodyLen || le.Uint32(b[28:]) != 0 {
		return footer{}, false
	}
	return footer{
		records:   le.Uint64(b[0:]),
		blocks:    le.Uint64(b[8:]),
		dataBytes: le.Uint64(b[16:]),
		rolling:   le.Uint32(b[24:]),
	}, true
}

// footerLen is the size of the footer block on disk.
func footerLen(encrypted bool) int64 {
	if encrypted {
		return blockHdrLen + footerBodyLen + crypt.Overhead
	}
	return blockHdrLen + footerBodyLen
}

func crc32Update(crc uint32, b []byte) uint32 { return crc32.Update(crc, castagnoli, b) }
