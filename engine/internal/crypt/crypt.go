package crypt

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
)

// KeySize is the length of a key: AES-256.
const KeySize = 32

// NonceSize and TagSize make up Overhead.
const (
	NonceSize = 12
	TagSize   = 16
	Overhead  = NonceSize + TagSize
)

// Errors.
var (
	// ErrKeySize: the key is not KeySize bytes.
	ErrKeySize = errors.New("crypt: key must be 32 bytes (AES-256)")
	// ErrAuth: a sealed message does not open under this key: the key is
	// wrong or the bytes were changed.
	ErrAuth = errors.New("crypt: message authentication failed (wrong key or corrupted data)")
)

// Cipher seals and opens messages. It is safe for concurrent use.
type Cipher struct {
	aead cipher.AEAD
	hi   uint32 // high 32 bits of the starting nonce
	lo   uint64 // low 64 bits of the starting nonce
	n    atomic.Uint64
}

// New returns a Cipher for a 32-byte key.
func New(key []byte) (*Cipher, error) {
	if len(key) != KeySize {
		return nil, ErrKeySize
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("crypt: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("crypt: %w", err)
	}
	var seed [NonceSize]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return nil, fmt.Errorf("crypt: nonce seed: %w", err)
	}
	return &Cipher{
		aead: aead,
		hi:   binary.BigEndian.Uint32(seed[:4]),
		lo:   binary.BigEndian.Uint64(seed[4:]),
	}, nil
}

// nextNonce writes a fresh nonce: the starting nonce plus a counter, as a
// 96-bit big-endian integer.
func (c *Cipher) nextNonce(dst []byte) {
	n := c.n.Add(1) - 1
	lo := c.lo + n
	hi := c.hi
	if lo < c.lo { // carry
		hi++
	}
	binary.BigEndian.PutUint32(dst[:4], hi)
	binary.BigEndian.PutUint64(dst[4:NonceSize], lo)
}

// Seal appends nonce || ciphertext || tag of plaintext to dst and returns
// it. ad is authenticated but not stored (pass the record's header so a
// sealed body cannot be moved to another record).
func (c *Cipher) Seal(dst, plaintext, ad []byte) []byte {
	off := len(dst)
	dst = append(dst, make([]byte, NonceSize)...)
	c.nextNonce(dst[off : off+NonceSize])
	nonce := dst[off : off+NonceSize]
	return c.aead.Seal(dst, nonce, plaintext, ad)
}

// Open appends the plaintext of a message made by Seal to dst. It fails
// with ErrAuth when the key is wrong or the message or ad changed.
func (c *Cipher) Open(dst, sealed, ad []byte) ([]byte, error) {
	if len(sealed) < Overhead {
		return nil, ErrAuth
	}
	out, err := c.aead.Open(dst, sealed[:NonceSize], sealed[NonceSize:], ad)
	if err != nil {
		return nil, ErrAuth
	}
	return out, nil
}
