package engine_test

import (
	"encoding/binary"
	"fmt"
	"path"
	"testing"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/engine/vfs"
)

// FuzzOpenMangled mangles one file of a small data directory (log segment,
// checkpoint, manifest, format) at fuzzer-chosen places and opens it, with
// and without Repair. Open must never panic or hang: it either recovers or
// returns an error; a recovered store must answer reads.
func FuzzOpenMangled(f *testing.F) {
	f.Add(uint8(0), uint32(40), []byte{0xff})
	f.Add(uint8(1), uint32(100), []byte{1, 2, 3, 4})
	f.Add(uint8(2), uint32(8), []byte{0})
	f.Add(uint8(3), uint32(0), []byte("{\"format\":1}"))
	f.Fuzz(func(t *testing.T, which uint8, off uint32, patch []byte) {
		mem := vfs.NewMem()
		fs, kill := incarnation(mem, 0)
		// Not verified at the end: the point is to mangle it, and a
		// mangled file Open refuses stays mangled.
		db := mustOpen(t, "/d", engine.Options{FS: fs, SegmentSize: 2 << 10, CheckpointInterval: -1}, noVerify("one of its files is mangled"))
		ns, _ := db.CreateNamespace(ctx, "m", engine.NamespaceOptions{Dims: 2})
		for i := int32(0); i < 40; i++ {
			ns.Put(ctx, []int32{i, i}, fmt.Appendf(nil, "v%d", i))
			if i == 20 {
				db.Checkpoint(ctx)
			}
		}
		ns.Link(ctx, []int32{1, 1}, []int32{2, 2}, "e", 1, nil)
		kill()
		mem.CrashClean()
		db.Close()

		var files []string
		for _, dir := range []string{"/d", "/d/wal", "/d/checkpoint"} {
			names, _ := mem.List(dir)
			for _, n := range names {
				p := path.Join(dir, n)
				if st, err := mem.Stat(p); err == nil && !st.IsDir() && n != "LOCK" {
					files = append(files, p)
				}
			}
		}
		target := files[int(which)%len(files)]
		fh, err := mem.OpenReadWrite(target)
		if err != nil {
			t.Fatal(err)
		}
		size, _ := fh.Size()
		if size > 0 {
			at := int64(off) % size
			fh.WriteAt(patch, at)
			if len(patch) > 0 && patch[0]&1 == 1 {
				fh.Truncate(at + int64(binary.LittleEndian.Uint16(append(patch, 0, 0)[:2]))%64)
			}
		}
		fh.Sync()
		fh.Close()

		for _, repair := range []bool{false, true} {
			db, err := openStore(t, "/d", engine.Options{FS: mem, Repair: repair, CheckpointInterval: -1})
			if err != nil {
				continue
			}
			if ns, err := db.Namespace("m"); err == nil {
				seq, err := ns.Region(ctx, []int32{-100, -100}, []int32{100, 100}, 0)
				if err == nil {
					for range seq {
					}
				}
				ns.Walk(ctx, []int32{1, 1}, engine.WalkOptions{MaxDepth: 3})
			}
			db.Close()
		}
	})
}
