package crypt_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cubelinux/cube/engine/internal/crypt"
)

func key(b byte) []byte { return bytes.Repeat([]byte{b}, crypt.KeySize) }

func TestSealOpen(t *testing.T) {
	c, err := crypt.New(key(1))
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("hello, cube")
	ad := []byte("header")
	s := c.Seal(nil, msg, ad)
	if len(s) != len(msg)+crypt.Overhead {
		t.Fatalf("sealed len %d, want %d", len(s), len(msg)+crypt.Overhead)
	}
	got, err := c.Open(nil, s, ad)
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("open = %q, %v", got, err)
	}
	// A second cipher with the same key opens it too (the nonce travels).
	c2, _ := crypt.New(key(1))
	if got, err := c2.Open(nil, s, ad); err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("other cipher open = %q, %v", got, err)
	}
}

func TestWrongKeyAndTamper(t *testing.T) {
	c, _ := crypt.New(key(1))
	wrong, _ := crypt.New(key(2))
	s := c.Seal(nil, []byte("secret"), nil)
	if _, err := wrong.Open(nil, s, nil); !errors.Is(err, crypt.ErrAuth) {
		t.Fatalf("wrong key: %v", err)
	}
	for i := range s {
		bad := bytes.Clone(s)
		bad[i] ^= 0x40
		if _, err := c.Open(nil, bad, nil); !errors.Is(err, crypt.ErrAuth) {
			t.Fatalf("flip at %d opened: %v", i, err)
		}
	}
	if _, err := c.Open(nil, s, []byte("other ad")); !errors.Is(err, crypt.ErrAuth) {
		t.Fatalf("wrong ad: %v", err)
	}
	if _, err := c.Open(nil, s[:5], nil); !errors.Is(err, crypt.ErrAuth) {
		t.Fatalf("short: %v", err)
	}
	if _, err := crypt.New([]byte("short")); !errors.Is(err, crypt.ErrKeySize) {
		t.Fatalf("short key: %v", err)
	}
}

func TestNoncesNeverRepeat(t *testing.T) {
	seen := map[string]bool{}
	for range 4 {
		c, _ := crypt.New(key(3))
		for range 1000 {
			s := c.Seal(nil, []byte("x"), nil)
			n := string(s[:crypt.NonceSize])
			if seen[n] {
				t.Fatal("nonce reused")
			}
			seen[n] = true
		}
	}
}

func BenchmarkSeal1K(b *testing.B) {
	c, _ := crypt.New(key(1))
	msg := make([]byte, 1024)
	buf := make([]byte, 0, 2048)
	b.SetBytes(1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = c.Seal(buf[:0], msg, nil)
	}
}

func BenchmarkOpen1K(b *testing.B) {
	c, _ := crypt.New(key(1))
	s := c.Seal(nil, make([]byte, 1024), nil)
	buf := make([]byte, 0, 2048)
	b.SetBytes(1024)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = c.Open(buf[:0], s, nil)
	}
}
