package cube_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cubelinux/cube"
)

// TestWriteKeyFile: a new key file is 64 hex digits and a newline, the
// owner's alone, reads back as a 32-byte key, and two are never the same.
func TestWriteKeyFile(t *testing.T) {
	dir := t.TempDir()
	var keys [][]byte
	for _, name := range []string{"a.key", "b.key"} {
		path := filepath.Join(dir, name)
		if err := cube.WriteKeyFile(path); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != 0o600 {
			t.Fatalf("%s: mode %v, want -rw-------", name, fi.Mode())
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != 65 || b[64] != '\n' || strings.Trim(string(b[:64]), "0123456789abcdef") != "" {
			t.Fatalf("%s holds %q, want 64 hex digits and a newline", name, b)
		}
		key, err := cube.ReadKeyFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(key) != 32 || fmt.Sprintf("%x\n", key) != string(b) {
			t.Fatalf("%s reads back as %x", name, key)
		}
		keys = append(keys, key)
	}
	if bytes.Equal(keys[0], keys[1]) {
		t.Fatal("two new key files hold the same key")
	}
}

// TestWriteKeyFileNeverOverwrites: WriteKeyFile refuses a path that
// exists, as a file or as a symlink (dangling or not), and leaves what is
// there as it was: overwriting a key file loses the store it opens.
//
// Deliberate break this test was seen to catch: O_EXCL dropped from
// WriteKeyFile's open (O_CREATE|O_TRUNC instead): the existing key file
// is overwritten ("WriteKeyFile(store.key): <nil>, want a refusal").
func TestWriteKeyFileNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "store.key")
	old := strings.Repeat("ab", 32) + "\n"
	if err := os.WriteFile(existing, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("someone else's file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.key")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling.key")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{existing, link, dangling} {
		err := cube.WriteKeyFile(path)
		if err == nil || !strings.Contains(err.Error(), "already exists") || !strings.Contains(err.Error(), path) {
			t.Fatalf("WriteKeyFile(%s): %v, want a refusal naming the file", filepath.Base(path), err)
		}
	}
	for path, want := range map[string]string{existing: old, target: "someone else's file\n"} {
		if b, err := os.ReadFile(path); err != nil || string(b) != want {
			t.Fatalf("the existing file now holds %q (%v), want %q", b, err, want)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("WriteKeyFile created the target of a dangling symlink: %v", err)
	}
}

// TestReadKeyFileMode: a key file that its group or others may read or
// write is refused, with the mode and the fix in the message; 0600 and
// 0400 are fine.
//
// Deliberate break this test was seen to catch: the mode check dropped
// from ReadKeyFile: every loose mode reads as a key ("mode 0644: read a
// key").
func TestReadKeyFileMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "store.key")
	if err := os.WriteFile(path, []byte(strings.Repeat("0f", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []fs.FileMode{0o600, 0o400} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		if _, err := cube.ReadKeyFile(path); err != nil {
			t.Fatalf("mode %04o: %v", mode, err)
		}
	}
	for _, mode := range []fs.FileMode{0o644, 0o640, 0o604, 0o620, 0o602, 0o610, 0o601, 0o660, 0o666, 0o700 | 0o007} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		key, err := cube.ReadKeyFile(path)
		if err == nil {
			t.Fatalf("mode %04o: read a key", mode)
		}
		msg := err.Error()
		if key != nil || !strings.Contains(msg, fmt.Sprintf("mode %04o", mode)) || !strings.Contains(msg, "chmod 600 "+path) {
			t.Fatalf("mode %04o: %q, want the mode and 'chmod 600 %s'", mode, msg, path)
		}
	}
}

// TestReadKeyFileContents: what a key file may hold, and what the
// refusals say, table-driven. No refusal may show the file's contents.
func TestReadKeyFileContents(t *testing.T) {
	// A recognisable run of digits, to look for in the messages.
	const secret = "5ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2"
	tests := []struct {
		name    string
		content string
		want    string // "" means the key reads; else part of the error
	}{
		{"newline", secret + "\n", ""},
		{"no newline", secret, ""},
		{"upper case", strings.ToUpper(secret) + "\n", ""},
		{"empty", "", "holds 0 characters"},
		{"short", secret[:63] + "\n", "holds 63 characters"},
		{"long", secret + "0\n", "holds 65 characters"},
		{"two newlines", secret + "\n\n", "holds 65 characters"},
		{"crlf", secret + "\r\n", "holds 65 characters"},
		{"raw bytes", string(bytes.Repeat([]byte{0xfe}, 32)), "holds 32 characters"},
		{"not hex", secret[:9] + "g" + secret[10:] + "\n", "character 10 is not a hex digit"},
		{"space", " " + secret[1:], "character 1 is not a hex digit"},
		{"huge", strings.Repeat(secret, 100), "is over 4096 bytes"},
	}
	dir := t.TempDir()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("%d.key", i))
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			key, err := cube.ReadKeyFile(path)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprintf("%x", key) != secret {
					t.Fatalf("read %x", key)
				}
				return
			}
			if err == nil {
				t.Fatalf("read a key from %q", tt.content)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.want) || !strings.Contains(msg, path) {
				t.Fatalf("%q, want %q and the file's name", msg, tt.want)
			}
			if strings.Contains(strings.ToLower(msg), "5ec2e7") || strings.ContainsRune(msg, 0xfe) {
				t.Fatalf("the error shows the file's contents: %q", msg)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		path := filepath.Join(dir, "missing.key")
		_, err := cube.ReadKeyFile(path)
		if err == nil || !strings.Contains(err.Error(), path+" does not exist") || !strings.Contains(err.Error(), "cube keygen") {
			t.Fatalf("%v, want 'does not exist' and how to make one", err)
		}
	})
	t.Run("directory", func(t *testing.T) {
		_, err := cube.ReadKeyFile(dir)
		if err == nil || !strings.Contains(err.Error(), "is a directory") {
			t.Fatalf("%v, want 'is a directory'", err)
		}
	})
}
