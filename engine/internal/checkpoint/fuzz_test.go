package checkpoint_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cubelinux/cube/engine/internal/base"
	"github.com/cubelinux/cube/engine/internal/checkpoint"
	"github.com/cubelinux/cube/engine/vfs"
)

// FuzzReader feeds arbitrary bytes as a checkpoint file, plain and with a
// key: no panic, and a file that reads without error must state its record
// count truthfully.
func FuzzReader(f *testing.F) {
	dir := f.TempDir()
	c := newCipher(f, 9)
	for i, recs := range [][][]byte{nil, {[]byte("a"), {}, bytes.Repeat([]byte("z"), 300)}} {
		for _, enc := range []bool{false, true} {
			path := filepath.Join(dir, "seed"+string(rune('0'+i))+map[bool]string{false: "p", true: "e"}[enc]+".ckpt")
			if enc {
				writeFile(f, vfs.OS(), path, checkpoint.Header{Kind: checkpoint.Delta, LSN: 5, Prev: 2}, c, recs)
			} else {
				writeFile(f, vfs.OS(), path, checkpoint.Header{Kind: checkpoint.Base, LSN: 5}, nil, recs)
			}
			b, _ := os.ReadFile(path)
			f.Add(b)
		}
	}
	f.Add([]byte("CUBECKPT"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const path = "f.ckpt"
		// Once as given, once with every checksum made to hold, so that
		// mutations reach the record and footer checks behind them.
		for _, b := range [][]byte{data, fixChecksums(bytes.Clone(data))} {
			fsys := memWith(t, path, b)
			recs, _, err := readAll(fsys, path, c)
			if err == nil {
				info, verr := checkpoint.Verify(fsys, path, c)
				if verr != nil || info.Records != uint64(len(recs)) {
					t.Fatalf("read %d records, Verify = %+v, %v", len(recs), info, verr)
				}
			}
		}
	})
}

// FuzzManifest feeds arbitrary bytes as a MANIFEST: no panic, and whatever
// reads back writes and reads back the same.
func FuzzManifest(f *testing.F) {
	dir := f.TempDir()
	for _, m := range []checkpoint.Manifest{{}, {Base: "b.ckpt", Deltas: []string{"d1.ckpt", "d2.ckpt"}, LSN: 9, Seq: 3}} {
		if err := checkpoint.WriteManifest(vfs.OS(), dir, m); err != nil {
			f.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(dir, checkpoint.ManifestName))
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, ok, err := checkpoint.ReadManifest(memWith(t, filepath.Join("d", checkpoint.ManifestName), data), "d")
		if !ok {
			t.Fatal("manifest not found")
		}
		if err != nil {
			if !base.IsCorruption(err) && !isNewer(err) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		dir := t.TempDir()
		if err := checkpoint.WriteManifest(vfs.OS(), dir, m); err != nil {
			t.Fatalf("rewrite of a manifest that read fine: %v", err)
		}
		m2, _, err := checkpoint.ReadManifest(vfs.OS(), dir)
		if err != nil || !reflect.DeepEqual(m, m2) {
			t.Fatalf("reread %+v, %v; want %+v", m2, err, m)
		}
	})
}

// fixChecksums rewrites the header CRC and every block CRC it can find
// (layout in doc.go).
func fixChecksums(b []byte) []byte {
	if len(b) < headerLen {
		return b
	}
	tab := crc32.MakeTable(crc32.Castagnoli)
	binary.LittleEndian.PutUint32(b[12:], crc32.Update(crc32.Update(0, tab, b[:12]), tab, b[16:headerLen]))
	salt := binary.LittleEndian.Uint32(b[20:])
	for off := headerLen; off+blockHdrLen <= len(b); {
		n := int(binary.LittleEndian.Uint32(b[off:]))
		end := off + blockHdrLen + n
		if n < 0 || end > len(b) || end < off {
			break
		}
		crc := crc32.Update(crc32.Update(salt, tab, b[off:off+12]), tab, b[off+blockHdrLen:end])
		binary.LittleEndian.PutUint32(b[off+12:], crc)
		off = end
	}
	return b
}
