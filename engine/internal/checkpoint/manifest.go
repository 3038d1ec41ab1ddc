package checkpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/cubelinux/cube/engine/vfs"
)

// ManifestName is the manifest's file name in its directory; the manifest
// is written as ManifestName+".tmp" first.
const ManifestName = "MANIFEST"

const (
	manifestTmp       = ManifestName + ".tmp"
	manifestMagic     = "CUBEMANI"
	manifestHdrLen    = 16
	maxManifestSize   = 16 << 20
	maxFileNameLength = 255
)

// Manifest names the checkpoint files that make up the current chain:
// a base and the deltas that apply on it, in order. Names are file names
// inside the manifest's directory, not paths.
type Manifest struct {
	// Base is the base checkpoint's file name; "" only if there is none
	// yet (and then there are no deltas).
	Base   string
	Deltas []string
	// LSN is the LSN the last file of the chain covers: recovery replays
	// the log after it.
	LSN uint64
	// Seq numbers manifests; the engine increments it with every write.
	Seq uint64
}

// Files returns the names the manifest refers to, base first.
func (m Manifest) Files() []string {
	if m.Base == "" {
		return nil
	}
	return append([]string{m.Base}, m.Deltas...)
}

func (m Manifest) validate() error {
	if m.Base == "" && len(m.Deltas) > 0 {
		return errors.New("deltas without a base")
	}
	seen := make(map[string]bool, len(m.Deltas)+1)
	for _, name := range m.Files() {
		if err := validName(name); err != nil {
			return err
		}
		if seen[name] {
			return fmt.Errorf("file %q named twice", name)
		}
		seen[name] = true
	}
	return nil
}

func validName(name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return fmt.Errorf("file name %q", name)
	case len(name) > maxFileNameLength:
		return fmt.Errorf("file name of %d bytes (at most %d)", len(name), maxFileNameLength)
	case strings.ContainsAny(name, "/\\\x00"):
		return fmt.Errorf("file name %q is not a plain name", name)
	case name == ManifestName || name == manifestTmp:
		return fmt.Errorf("file name %q is the manifest's", name)
	}
	return nil
}

// encodeManifest lays out the manifest as doc.go describes.
func encodeManifest(m Manifest) []byte {
	b := make([]byte, manifestHdrLen, 64+len(m.Base)+len(m.Deltas)*48)
	copy(b, manifestMagic)
	le.PutUint16(b[8:], Version)
	b = le.AppendUint64(b, m.Seq)
	b = le.AppendUint64(b, m.LSN)
	b = appendString(b, m.Base)
	b = binary.AppendUvarint(b, uint64(len(m.Deltas)))
	for _, d := range m.Deltas {
		b = appendString(b, d)
	}
	le.PutUint32(b[12:], uint32(len(b)-manifestHdrLen))
	return le.AppendUint32(b, crc32Update(0, b))
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// decodeManifest parses manifest bytes; file names errors.
func decodeManifest(file string, b []byte) (Manifest, error) {
	if len(b) < manifestHdrLen+4 {
		return Manifest{}, corrupt(file, 0, "manifest of %d bytes is too short", len(b))
	}
	if string(b[:8]) != manifestMagic {
		return Manifest{}, corrupt(file, 0, "not a manifest (magic %q)", b[:8])
	}
	n := int64(le.Uint32(b[12:]))
	if manifestHdrLen+n+4 != int64(len(b)) {
		return Manifest{}, corrupt(file, 12, "body length %d does not fit a %d-byte file", n, len(b))
	}
	end := manifestHdrLen + int(n)
	if got, want := crc32Update(0, b[:end]), le.Uint32(b[end:]); got != want {
		return Manifest{}, corrupt(file, int64(end), "manifest checksum mismatch (stored %#08x, computed %#08x)", want, got)
	}
	switch v := le.Uint16(b[8:]); {
	case v > Version:
		return Manifest{}, newer(file, v)
	case v == 0:
		return Manifest{}, corrupt(file, 8, "format version 0")
	}
	if le.Uint16(b[10:]) != 0 {
		return Manifest{}, corrupt(file, 10, "reserved bytes set")
	}
	d := mdec{file: file, b: b[:end], off: manifestHdrLen}
	var m Manifest
	m.Seq = d.u64()
	m.LSN = d.u64()
	m.Base = d.str()
	count := d.uvarint()
	if d.err == nil && count > uint64(end-d.off) { // each name takes at least one byte
		d.fail("%d deltas cannot fit in %d bytes", count, end-d.off)
	}
	if count > 0 && d.err == nil {
		m.Deltas = make([]string, 0, count)
		for i := uint64(0); i < count && d.err == nil; i++ {
			m.Deltas = append(m.Deltas, d.str())
		}
	}
	if d.err == nil && d.off != end {
		d.fail("%d bytes left over after the fields", end-d.off)
	}
	if d.err != nil {
		return Manifest{}, d.err
	}
	if err := m.validate(); err != nil {
		return Manifest{}, corrupt(file, manifestHdrLen, "%v", err)
	}
	return m, nil
}

// mdec reads the manifest's fields and remembers the first error.
type mdec struct {
	file string
	b    []byte
	off  int
	err  error
}

func (d *mdec) fail(format string, args ...any) {
	if d.err == nil {
		d.err = corrupt(d.file, int64(d.off), format, args...)
	}
}

func (d *mdec) u64() uint64 {
	if d.err != nil {
		return 0
	}
	if len(d.b)-d.off < 8 {
		d.fail("field cut short")
		return 0
	}
	v := le.Uint64(d.b[d.off:])
	d.off += 8
	return v
}

func (d *mdec) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, k := binary.Uvarint(d.b[d.off:])
	if k <= 0 {
		d.fail("bad length")
		return 0
	}
	d.off += k
	return v
}

func (d *mdec) str() string {
	start := d.off
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)-d.off) {
		d.off = start
		d.fail("name of %d bytes runs past the end", n)
		return ""
	}
	s := string(d.b[d.off : d.off+int(n)])
	d.off += int(n)
	return s
}

// WriteManifest replaces the manifest in dir with m, atomically and
// durably: it writes MANIFEST.tmp, syncs it, renames it over MANIFEST and
// syncs dir. Once it returns nil, a crash leaves m (and Finish already made
// the files it names durable); if it fails or a crash interrupts it, the
// previous manifest stays. A failed sync is not retried: the caller must
// treat the state on disk as unknown, i.e. stop writing.
func WriteManifest(fsys vfs.FS, dir string, m Manifest) error {
	if err := m.validate(); err != nil {
		return fmt.Errorf("%w: manifest: %v", ErrInvalid, err)
	}
	tmp := filepath.Join(dir, manifestTmp)
	f, err := fsys.Create(tmp)
	if err != nil {
		return fmt.Errorf("checkpoint: write manifest: %w", err)
	}
	_, err = f.Write(encodeManifest(m))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.Rename(tmp, filepath.Join(dir, ManifestName))
	}
	if err != nil {
		fsys.Remove(tmp)
		return fmt.Errorf("checkpoint: write manifest %s: %w", tmp, err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("checkpoint: sync directory %s: %w", dir, err)
	}
	return nil
}

// ReadManifest reads the manifest in dir. exists is false, with a nil
// error, if there is none (a new store). A damaged manifest is a
// *base.CorruptionError.
func ReadManifest(fsys vfs.FS, dir string) (m Manifest, exists bool, err error) {
	path := filepath.Join(dir, ManifestName)
	f, err := fsys.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Manifest{}, false, nil
	}
	if err != nil {
		return Manifest{}, false, fmt.Errorf("checkpoint: read manifest: %w", err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return Manifest{}, true, fmt.Errorf("checkpoint: read manifest %s: %w", path, err)
	}
	if size > maxManifestSize {
		return Manifest{}, true, corrupt(path, 0, "manifest of %d bytes is larger than %d", size, maxManifestSize)
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil && !(errors.Is(err, io.EOF) && size == 0) {
		return Manifest{}, true, fmt.Errorf("checkpoint: read manifest %s: %w", path, err)
	}
	m, err = decodeManifest(path, b)
	return m, true, err
}

// RemoveUnreferenced deletes the checkpoint files in dir (names ending in
// Ext) that m does not name, and a leftover MANIFEST.tmp, then syncs dir.
// Call it after reading the manifest at open, and after WriteManifest
// retired files. It returns the names it removed. With a zero Manifest it
// removes every checkpoint file: without a manifest none is part of a chain.
func RemoveUnreferenced(fsys vfs.FS, dir string, m Manifest) ([]string, error) {
	names, err := fsys.List(dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: list %s: %w", dir, err)
	}
	keep := make(map[string]bool, len(m.Deltas)+1)
	for _, n := range m.Files() {
		keep[n] = true
	}
	var removed []string
	for _, n := range names {
		if keep[n] || (!strings.HasSuffix(n, Ext) && n != manifestTmp) {
			continue
		}
		if err := fsys.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, fmt.Errorf("checkpoint: remove %s: %w", filepath.Join(dir, n), err)
		}
		removed = append(removed, n)
	}
	if len(removed) > 0 {
		if err := fsys.SyncDir(dir); err != nil {
			return removed, fmt.Errorf("checkpoint: sync directory %s: %w", dir, err)
		}
	}
	return removed, nil
}
