package engine_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"path"
	"strings"
	"testing"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/engine/vfs"
)

// logged makes a store whose state lives only in its log: n puts in tiny
// segments, then a crash before any checkpoint. opts go to openStore: a
// test that damages the log and leaves it so passes noVerify.
func logged(t *testing.T, n int, opts ...storeOpt) *vfs.MemFS {
	t.Helper()
	mem := vfs.NewMem()
	fs, kill := incarnation(mem, 0)
	db := mustOpen(t, "/d", engine.Options{FS: fs, SegmentSize: 4 << 10, CheckpointInterval: -1}, append([]storeOpt{verifyOn(mem)}, opts...)...)
	ns, err := db.CreateNamespace(ctx, "c", engine.NamespaceOptions{Dims: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := ns.Put(ctx, []int32{int32(i)}, fmt.Appendf(nil, "value number %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	kill()
	mem.CrashClean()
	db.Close()
	return mem
}

func readFile(t *testing.T, fs vfs.FS, name string) []byte {
	t.Helper()
	f, err := fs.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, fs vfs.FS, name string, off int64, b []byte) {
	t.Helper()
	f, err := fs.OpenReadWrite(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

func segments(t *testing.T, fs vfs.FS) []string {
	t.Helper()
	names, err := fs.List("/d/wal")
	if err != nil {
		t.Fatal(err)
	}
	var segs []string
	for _, n := range names {
		if strings.HasSuffix(n, ".wal") {
			segs = append(segs, path.Join("/d/wal", n))
		}
	}
	if len(segs) < 3 {
		t.Fatalf("want several segments, have %v", names)
	}
	return segs
}

// dataEnd is the end of the non-zero bytes of a (preallocated) segment.
func dataEnd(b []byte) int {
	n := len(b)
	for n > 0 && b[n-1] == 0 {
		n--
	}
	return n
}

func TestCorruptionMidLogRefusesToOpen(t *testing.T) {
	mem := logged(t, 300)
	seg := segments(t, mem)[1]
	const off = 300
	b := readFile(t, mem, seg)
	writeFile(t, mem, seg, off, []byte{b[off] ^ 0x10})

	_, err := engine.Open("/d", engine.Options{FS: mem})
	var ce *engine.CorruptionError
	if !errors.As(err, &ce) || !engine.IsCorruption(err) {
		t.Fatalf("open = %v, want a CorruptionError", err)
	}
	if !strings.HasSuffix(ce.File, path.Base(seg)) || ce.Offset > off || ce.Offset < off-100 {
		t.Fatalf("error names %s at %d; the flip is in %s at %d", ce.File, ce.Offset, seg, off)
	}
	if !strings.Contains(err.Error(), "Repair") {
		t.Fatalf("error does not say what to do: %v", err)
	}
	// Refusing changed nothing.
	if !bytes.Equal(readFile(t, mem, seg)[:off], b[:off]) {
		t.Fatal("refused open modified the segment")
	}

	db, err := openStore(t, "/d", engine.Options{FS: mem, Repair: true})
	if err != nil {
		t.Fatalf("open with repair: %v", err)
	}
	defer db.Close()
	rep := db.Stats().Recovery
	if rep.Repaired == "" || len(rep.CutFiles) == 0 || rep.LostFirst == 0 {
		t.Fatalf("repair report: %+v", rep)
	}
	ns, _ := db.Namespace("c")
	n := ns.Info().Values
	if n == 0 || n >= 300 {
		t.Fatalf("after repair %d values, want the prefix before the damage", n)
	}
	for i := 0; i < n; i++ {
		if _, err := ns.Get(ctx, []int32{int32(i)}); err != nil {
			t.Fatalf("value %d of the kept prefix: %v", i, err)
		}
	}
	t.Logf("repair: %s", rep)
}

func TestTornTailRecovers(t *testing.T) {
	mem := logged(t, 300)
	segs := segments(t, mem)
	last := segs[len(segs)-1]
	b := readFile(t, mem, last)
	end := dataEnd(b)
	if end < 40 {
		t.Fatalf("last segment holds %d bytes", end)
	}
	// Tear the last record: garbage over its final bytes.
	writeFile(t, mem, last, int64(end-5), []byte{0xde, 0xad, 0xbe, 0xef, 0x01})
	db, err := openStore(t, "/d", engine.Options{FS: mem})
	if err != nil {
		t.Fatalf("open with a torn tail: %v", err)
	}
	defer db.Close()
	rep := db.Stats().Recovery
	if rep.TornSegment == "" || rep.BytesDropped == 0 {
		t.Fatalf("torn tail not reported: %+v", rep)
	}
	ns, _ := db.Namespace("c")
	if n := ns.Info().Values; n != 299 {
		t.Fatalf("%d values after cutting one torn record", n)
	}
	t.Logf("torn: %s", rep)
}

func TestOpenRefusals(t *testing.T) {
	key := bytes.Repeat([]byte{1}, 32)
	other := bytes.Repeat([]byte{2}, 32)
	mem := vfs.NewMem()
	fs, kill := incarnation(mem, 0)
	db := mustOpen(t, "/d", engine.Options{FS: fs, EncryptionKey: key}, verifyOn(mem))
	ns, _ := db.CreateNamespace(ctx, "s", engine.NamespaceOptions{Dims: 1})
	ns.Put(ctx, []int32{1}, []byte("secret"))

	// The directory is locked while open.
	if _, err := engine.Open("/d", engine.Options{FS: mem, EncryptionKey: key}); !errors.Is(err, engine.ErrLocked) {
		t.Fatalf("second open: %v", err)
	}
	kill()
	mem.CrashClean()
	db.Close()

	before := snapshotFiles(t, mem, "/d")
	for _, k := range [][]byte{other, nil} {
		if _, err := engine.Open("/d", engine.Options{FS: mem, EncryptionKey: k}); !errors.Is(err, engine.ErrWrongKey) {
			t.Fatalf("open with key %x: %v", k, err)
		}
	}
	if after := snapshotFiles(t, mem, "/d"); !equalFiles(before, after) {
		t.Fatal("a refused open changed the data directory")
	}
	db = mustOpen(t, "/d", engine.Options{FS: mem, EncryptionKey: key})
	ns, _ = db.Namespace("s")
	if v, err := ns.Get(ctx, []int32{1}); err != nil || string(v) != "secret" {
		t.Fatalf("get = %q, %v", v, err)
	}
	db.Close()

	// A plain store refuses a key; a newer format is refused.
	plain := vfs.NewMem()
	// The FORMAT written below claims a format this engine does not read.
	db = mustOpen(t, "/p", engine.Options{FS: plain}, noVerify("its FORMAT is made to claim format 99"))
	db.Close()
	if _, err := engine.Open("/p", engine.Options{FS: plain, EncryptionKey: key}); !errors.Is(err, engine.ErrWrongKey) {
		t.Fatalf("key on a plain store: %v", err)
	}
	f, _ := plain.Create("/p/FORMAT")
	f.Write([]byte(`{"format": 99}`))
	f.Close()
	if _, err := engine.Open("/p", engine.Options{FS: plain}); !errors.Is(err, engine.ErrNewerFormat) {
		t.Fatalf("newer format: %v", err)
	}
}

func TestLockAcrossProcessesOnOS(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, engine.Options{})
	defer db.Close()
	if _, err := engine.Open(dir, engine.Options{}); !errors.Is(err, engine.ErrLocked) {
		t.Fatalf("second open of %s: %v", dir, err)
	}
}

func snapshotFiles(t *testing.T, fs vfs.FS, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	names, err := fs.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		p := path.Join(dir, n)
		st, err := fs.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.IsDir() {
			for k, v := range snapshotFiles(t, fs, p) {
				out[k] = v
			}
			continue
		}
		out[p] = readFile(t, fs, p)
	}
	return out
}

func equalFiles(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !bytes.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

func TestVerify(t *testing.T) {
	mem := logged(t, 300, noVerify("a byte of its log is flipped to see Verify find it"))
	rep, err := engine.Verify("/d", engine.VerifyOptions{FS: mem})
	if err != nil {
		t.Fatalf("verify of a sound directory: %v", err)
	}
	if rep.Log.LastLSN != 301 {
		t.Fatalf("verify report: %+v", rep)
	}
	seg := segments(t, mem)[1]
	before := snapshotFiles(t, mem, "/d")
	b := readFile(t, mem, seg)
	writeFile(t, mem, seg, 300, []byte{b[300] ^ 1})
	before[seg][300] ^= 1
	if _, err := engine.Verify("/d", engine.VerifyOptions{FS: mem}); !engine.IsCorruption(err) {
		t.Fatalf("verify of a flipped byte: %v", err)
	}
	if !equalFiles(before, snapshotFiles(t, mem, "/d")) {
		t.Fatal("verify changed the directory")
	}
	if _, err := engine.Verify("/nowhere", engine.VerifyOptions{FS: mem}); err == nil {
		t.Fatal("verify of a missing directory succeeded")
	}
}

// TestCorruptionNamesTheFileAndSaysWhatToDo: whichever layer finds the
// damage, the error matches ErrCorruption, errors.As finds the file and
// offset, and the text says what to do: Repair for the damage it mends,
// a backup for the rest. A record whose checksum holds but whose op does
// not decode is found by the engine, which does not know the file; the
// log names it (base.Locate). It caught translate advising Repair for
// damage Repair cannot mend, and the engine's replay naming "wal" at the
// payload's offset instead of the segment at the record's.
func TestCorruptionNamesTheFileAndSaysWhatToDo(t *testing.T) {
	t.Run("op that does not decode", func(t *testing.T) {
		mem := logged(t, 10, noVerify("its first record is made an op that does not decode"))
		seg := "/d/wal/00000000000000000001.wal"
		b := readFile(t, mem, seg)
		const rec = 64 // the first record: the namespace's creation
		n := binary.LittleEndian.Uint32(b[rec+4:])
		body := b[rec : rec+24+int(n)]
		body[24] = 0xff // an op kind that does not exist
		salt := binary.LittleEndian.Uint32(b[12:16])
		binary.LittleEndian.PutUint32(body, crc32.Update(salt, crc32.MakeTable(crc32.Castagnoli), body[4:]))
		writeFile(t, mem, seg, rec, body)
		// Verify finds it too, where Open does (it caught Verify checking
		// only the record's frame and calling this store ok).
		_, err := engine.Verify("/d", engine.VerifyOptions{FS: mem})
		var vce *engine.CorruptionError
		if !errors.As(err, &vce) || vce.File != seg || vce.Offset != rec || !strings.Contains(vce.Reason, "unknown kind 255") {
			t.Fatalf("verify = %v, want the corruption at %s offset %d", err, seg, rec)
		}
		for _, repair := range []bool{false, true} {
			_, err := engine.Open("/d", engine.Options{FS: mem, Repair: repair})
			var ce *engine.CorruptionError
			if !errors.As(err, &ce) || !errors.Is(err, engine.ErrCorruption) {
				t.Fatalf("repair=%v: open = %v, want corruption", repair, err)
			}
			if ce.File != seg || ce.Offset != rec || !strings.Contains(ce.Reason, "unknown kind 255") {
				t.Fatalf("repair=%v: names %s at %d (%s), want %s at %d", repair, ce.File, ce.Offset, ce.Reason, seg, rec)
			}
			if !strings.Contains(err.Error(), "backup") || strings.Contains(err.Error(), "cuts") {
				t.Fatalf("repair=%v: advice %q, want a backup, not Repair", repair, err)
			}
		}
	})
	t.Run("checkpoint block", func(t *testing.T) {
		mem := vfs.NewMem()
		db := mustOpen(t, "/d", engine.Options{FS: mem, CheckpointInterval: -1, SegmentSize: 64 << 10}, noVerify("a byte of its checkpoint is flipped"))
		ns, err := db.CreateNamespace(ctx, "c", engine.NamespaceOptions{Dims: 1})
		if err != nil {
			t.Fatal(err)
		}
		if err := ns.Put(ctx, []int32{1}, []byte("value")); err != nil {
			t.Fatal(err)
		}
		ci, err := db.Checkpoint(ctx)
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
		file := "/d/checkpoint/" + ci.File
		b := readFile(t, mem, file)
		off := len(b) / 2
		writeFile(t, mem, file, int64(off), []byte{b[off] ^ 1})
		_, err = engine.Open("/d", engine.Options{FS: mem})
		var ce *engine.CorruptionError
		if !errors.As(err, &ce) || !engine.IsCorruption(err) || ce.File != file || ce.Offset > int64(off) {
			t.Fatalf("open = %v, want corruption in %s before %d", err, file, off)
		}
		if !strings.Contains(err.Error(), "backup") {
			t.Fatalf("advice %q, want a backup", err)
		}
	})
}
