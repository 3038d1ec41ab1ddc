package cube

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// keySize is the size of an encryption key in bytes (AES-256). A key file
// holds it as 2*keySize hex digits.
const keySize = 32

// keyFileMax bounds what ReadKeyFile reads: a key file is 65 bytes at
// most, and anything much longer is not one.
const keyFileMax = 4 << 10

// ReadKeyFile reads an encryption key from the file at path, for
// engine.Options.EncryptionKey:
//
//	key, err := cube.ReadKeyFile("/etc/cube/store.key")
//	db, err := cube.Open(dir, cube.Options{Engine: engine.Options{EncryptionKey: key}})
//
// A key file holds 64 hex digits (a 32-byte key), optionally followed by
// one newline, as WriteKeyFile writes it.
//
// # Errors
//
// The file is refused if its group or others may read or write it (mode &
// 0o077 != 0): a key anyone else can read protects nothing. The error
// gives the mode and the fix (chmod 600 FILE). A missing file, a directory,
// a file of the wrong length or with a character that is not a hex digit
// are refused saying what was found; no error includes the file's
// contents.
func ReadKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("cube: key file %s does not exist (make one with 'cube keygen %s')", path, path)
	}
	if err != nil {
		return nil, fmt.Errorf("cube: key file: %w", err)
	}
	defer f.Close()
	// The mode of the file opened, not of whatever the name pointed to a
	// moment before.
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cube: key file: %w", err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("cube: key file %s is a directory", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("cube: key file %s has mode %04o: its group or others may read or write it; make it the owner's alone with 'chmod 600 %s'", path, perm, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, keyFileMax+1))
	if err != nil {
		return nil, fmt.Errorf("cube: key file %s: %w", path, err)
	}
	return parseKey(path, b)
}

// parseKey decodes a key file's contents. Its errors say what is wrong in
// lengths and positions, never in the bytes themselves: a key file a digit
// short is still most of a key.
func parseKey(path string, b []byte) ([]byte, error) {
	const want = 2 * keySize
	if len(b) > 0 && b[len(b)-1] == '\n' {
		b = b[:len(b)-1]
	}
	switch {
	case len(b) > keyFileMax:
		return nil, fmt.Errorf("cube: key file %s is over %d bytes; a key file holds %d hex digits (a %d-byte key); make one with 'cube keygen FILE'", path, keyFileMax, want, keySize)
	case len(b) != want:
		return nil, fmt.Errorf("cube: key file %s holds %d characters (besides a final newline), want %d hex digits (a %d-byte key); make one with 'cube keygen FILE'", path, len(b), want, keySize)
	}
	for i, c := range b {
		if !isHex(c) {
			return nil, fmt.Errorf("cube: key file %s: character %d is not a hex digit (0-9, a-f, A-F); a key file holds %d hex digits and at most one final newline", path, i+1, want)
		}
	}
	key := make([]byte, keySize)
	if _, err := hex.Decode(key, b); err != nil { // cannot fail after the checks above
		return nil, fmt.Errorf("cube: key file %s is not hex", path)
	}
	return key, nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// WriteKeyFile makes a new encryption key from crypto/rand and writes it
// to a new file at path, as ReadKeyFile reads it: 64 hex digits and a
// newline, mode 0600. The file and its directory are synced before it
// returns, so a key that encrypted a store is not lost to a crash.
//
// # Errors
//
// It never replaces a file: if path exists (even as a dangling symlink)
// it fails and the file is left as it was, because the store that file's
// key opens would be lost with it. If writing fails after the file was
// created, the file is removed.
func WriteKeyFile(path string) error {
	key := make([]byte, keySize)
	if _, err := rand.Read(key); err != nil {
		return fmt.Errorf("cube: new key: %w", err)
	}
	text := make([]byte, 2*keySize+1)
	hex.Encode(text, key)
	text[len(text)-1] = '\n'
	clear(key)
	defer clear(text)

	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("cube: key file %s already exists; a key file is never overwritten (the store its key opens would be lost): choose another name, or remove it yourself if no store uses it", path)
	}
	if err != nil {
		return fmt.Errorf("cube: create key file: %w", err)
	}
	fail := func(err error) error {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("cube: write key file %s: %w", path, err)
	}
	// Mode 0600 whatever the umask said (it can only have removed bits),
	// and whatever a file system's default ACL added.
	if err := f.Chmod(0o600); err != nil {
		return fail(err)
	}
	if _, err := f.Write(text); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return fmt.Errorf("cube: write key file %s: %w", path, err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("cube: write key file %s: sync its directory: %w", path, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
