package engine_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/engine/vfs"
)

var (
	keyA = bytes.Repeat([]byte{0xa1}, 32)
	keyB = bytes.Repeat([]byte{0xb2}, 32)
)

// rekeyMarker is a value written in clear; no file of an encrypted store
// may hold it.
const rekeyMarker = "rekey-marker-7d1f"

// buildRekeyStore makes a store in mem under key with what a rekey must
// carry over: several namespaces (one dropped), values, deletes after a
// checkpoint, edges, metadata, a base and deltas, and a log tail that no
// checkpoint covers. It returns the store's dump.
func buildRekeyStore(t *testing.T, mem vfs.FS, key []byte) string {
	t.Helper()
	db, err := engine.Open("/d", engine.Options{FS: mem, EncryptionKey: key, SegmentSize: 4 << 10, CheckpointInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a, err := db.CreateNamespace(ctx, "a", engine.NamespaceOptions{Dims: 2})
	if err != nil {
		t.Fatal(err)
	}
	b, err := db.CreateNamespace(ctx, "b", engine.NamespaceOptions{Dims: 3})
	if err != nil {
		t.Fatal(err)
	}
	gone, err := db.CreateNamespace(ctx, "gone", engine.NamespaceOptions{Dims: 1})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(gone.Put(ctx, []int32{1}, []byte("dropped")))
	for i := int32(0); i < 60; i++ {
		must(a.Put(ctx, []int32{i % 8, i / 8}, fmt.Appendf(nil, "a%d", i)))
		must(b.Put(ctx, []int32{i, -i, i * 3}, fmt.Appendf(nil, "b%d", i)))
	}
	must(a.Put(ctx, []int32{7, 7}, []byte(rekeyMarker)))
	must(a.Link(ctx, []int32{0, 0}, []int32{1, 0}, "road", 2.5, []byte("edge")))
	must(a.Link(ctx, []int32{1, 0}, []int32{2, 0}, "road", 1, nil))
	must(a.Update(ctx, func(tx *engine.Tx) error { return tx.SetMeta("prog/x", []byte("meta")) }))
	if _, err := db.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	for i := int32(0); i < 10; i++ {
		if _, err := a.Delete(ctx, []int32{i % 8, i / 8}); err != nil {
			t.Fatal(err)
		}
	}
	must(db.DropNamespace(ctx, "gone"))
	if _, err := a.Unlink(ctx, []int32{1, 0}, []int32{2, 0}, "road"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Checkpoint(ctx); err != nil { // a delta
		t.Fatal(err)
	}
	for i := int32(0); i < 20; i++ { // the log tail
		must(b.Put(ctx, []int32{i, i, i}, fmt.Appendf(nil, "tail%d", i)))
	}
	must(a.Update(ctx, func(tx *engine.Tx) error { return tx.SetMeta("prog/y", []byte("tail meta")) }))
	return dumpStore(t, db)
}

// dumpStore renders everything in the store, in order.
func dumpStore(t *testing.T, db *engine.DB) string {
	t.Helper()
	var sb strings.Builder
	for _, info := range db.Namespaces() {
		ns, err := db.Namespace(info.Name)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&sb, "ns %s dims %d\n", info.Name, info.Dims)
		lo, hi := make([]int32, info.Dims), make([]int32, info.Dims)
		for i := range lo {
			lo[i], hi[i] = math.MinInt32, math.MaxInt32
		}
		seq, err := ns.Region(ctx, lo, hi, 0)
		if err != nil {
			t.Fatal(err)
		}
		for c, v := range seq {
			fmt.Fprintf(&sb, "  %v=%q\n", c, v)
			es, err := ns.Edges(ctx, c, engine.Out, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range es {
				fmt.Fprintf(&sb, "  edge %v->%v %s %g %q\n", e.From, e.To, e.Label, e.Weight, e.Value)
			}
		}
		err = ns.View(ctx, func(tx *engine.Tx) error {
			for _, k := range tx.MetaKeys("") {
				v, _ := tx.Meta(k)
				fmt.Fprintf(&sb, "  meta %s=%q\n", k, v)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return sb.String()
}

// copyMem returns a new MemFS holding mem's visible files under /d, all
// durable. mem must be quiet (no store open on it).
func copyMem(t *testing.T, mem vfs.FS) *vfs.MemFS {
	t.Helper()
	out := vfs.NewMem()
	var walk func(p string)
	walk = func(p string) {
		fi, err := mem.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.IsDir() {
			if err := out.MkdirAll(p, fi.Mode().Perm()); err != nil {
				t.Fatal(err)
			}
			names, err := mem.List(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range names {
				walk(path.Join(p, n))
			}
			if err := out.SyncDir(p); err != nil {
				t.Fatal(err)
			}
			return
		}
		b := readFile(t, mem, p)
		f, err := out.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(b); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	walk("/d")
	if err := out.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	return out
}

// treeState hashes every name and file under /d but the lock files (which
// an open creates and a refused open may leave).
func treeState(t *testing.T, fsys vfs.FS) (string, map[string][]byte) {
	t.Helper()
	h := sha256.New()
	files := map[string][]byte{}
	var walk func(p string)
	walk = func(p string) {
		fi, err := fsys.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if path.Base(p) == "LOCK" {
			return
		}
		fmt.Fprintf(h, "%s %v\n", p, fi.IsDir())
		if !fi.IsDir() {
			b := readFile(t, fsys, p)
			files[p] = b
			h.Write(b)
			return
		}
		names, err := fsys.List(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			walk(path.Join(p, n))
		}
	}
	walk("/d")
	return fmt.Sprintf("%x", h.Sum(nil)), files
}

func keyName(k []byte) string {
	switch {
	case k == nil:
		return "plain"
	case bytes.Equal(k, keyA):
		return "keyA"
	default:
		return "keyB"
	}
}

// openDump opens /d under key and returns its dump, or the open's error.
func openDump(t *testing.T, fsys vfs.FS, key []byte) (string, error) {
	t.Helper()
	db, err := engine.Open("/d", engine.Options{FS: fsys, EncryptionKey: key, MustExist: true, CheckpointInterval: -1, SegmentSize: 4 << 10})
	if err != nil {
		return "", err
	}
	d := dumpStore(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return d, nil
}

// underKey finds which of the two keys opens the store, checking that
// exactly one does, with want's data, and that the refused open changed
// no byte and says that a rekey did not finish if one did not. Each key
// is tried on its own copy; mem is then opened under the one that rules.
func underKey(t *testing.T, mem *vfs.MemFS, oldKey, newKey []byte, want, where string) []byte {
	t.Helper()
	leftovers := hasRekeyLeftovers(t, mem)
	var opens [][]byte
	for _, key := range [][]byte{oldKey, newKey} {
		probe := copyMem(t, mem)
		before, _ := treeState(t, probe)
		got, err := openDump(t, probe, key)
		if err == nil {
			if got != want {
				t.Fatalf("%s: under %s the store holds\n%s\nwant\n%s", where, keyName(key), got, want)
			}
			opens = append(opens, key)
			continue
		}
		if !errors.Is(err, engine.ErrWrongKey) {
			t.Fatalf("%s: open under %s: %v", where, keyName(key), err)
		}
		if after, _ := treeState(t, probe); after != before {
			t.Fatalf("%s: the refused open under %s changed the directory", where, keyName(key))
		}
		if leftovers && !strings.Contains(err.Error(), "did not finish") {
			t.Fatalf("%s: the refusal of %s does not say a rekey did not finish: %v", where, keyName(key), err)
		}
	}
	switch len(opens) {
	case 0:
		t.Fatalf("%s: neither %s nor %s opens the store", where, keyName(oldKey), keyName(newKey))
	case 2:
		t.Fatalf("%s: both %s and %s open the store", where, keyName(oldKey), keyName(newKey))
	}
	if got, err := openDump(t, mem, opens[0]); err != nil || got != want {
		t.Fatalf("%s: reopening under %s: %v", where, keyName(opens[0]), err)
	}
	return opens[0]
}

func hasRekeyLeftovers(t *testing.T, fsys vfs.FS) bool {
	names, err := fsys.List("/d")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasPrefix(n, "rekey") {
			return true
		}
	}
	return false
}

// changesDisk says whether op can change what is on disk. The crash test
// cuts a rekey at these: a failing read or list only makes the rekey stop
// before its next change, which the cut at that change covers.
func changesDisk(op vfs.Op) bool {
	switch op.Kind {
	case vfs.OpCreate, vfs.OpWrite, vfs.OpSync, vfs.OpTruncate, vfs.OpRemove, vfs.OpRename, vfs.OpMkdir, vfs.OpSyncDir, vfs.OpChmod:
		return true
	}
	return false
}

var rekeyCases = []struct {
	name           string
	oldKey, newKey []byte
}{
	{"plain-to-encrypted", nil, keyA},
	{"encrypted-to-new-key", keyA, keyB},
	{"encrypted-to-plain", keyA, nil},
}

// TestRekey moves a store through every kind of rekey and checks that the
// data comes along, the old key is refused, writes after it land under the
// new key, and an encrypted store shows none of its values in clear.
func TestRekey(t *testing.T) {
	mem := vfs.NewMem()
	want := buildRekeyStore(t, mem, nil)
	keys := [][]byte{nil, keyA, keyB, nil}
	for i := 1; i < len(keys); i++ {
		oldKey, newKey := keys[i-1], keys[i]
		rep, err := engine.Rekey(ctx, "/d", oldKey, newKey, engine.RekeyOptions{FS: mem})
		if err != nil {
			t.Fatalf("rekey %s -> %s: %v", keyName(oldKey), keyName(newKey), err)
		}
		if rep.Already || rep.Encrypted != (newKey != nil) || rep.Namespaces != 2 || rep.Records == 0 {
			t.Fatalf("rekey %s -> %s: report %+v", keyName(oldKey), keyName(newKey), rep)
		}
		if hasRekeyLeftovers(t, mem) {
			t.Fatal("rekey left its staging directory")
		}
		if got := underKey(t, mem, oldKey, newKey, want, "after rekey"); !bytes.Equal(got, newKey) {
			t.Fatalf("after rekey the store is under %s", keyName(got))
		}
		_, files := treeState(t, mem)
		for p, b := range files {
			if newKey != nil && bytes.Contains(b, []byte(rekeyMarker)) {
				t.Fatalf("under %s, %s holds a value in clear", keyName(newKey), p)
			}
		}
		// Again: nothing to do.
		if rep, err := engine.Rekey(ctx, "/d", oldKey, newKey, engine.RekeyOptions{FS: mem}); err != nil || !rep.Already {
			t.Fatalf("rekey again: %+v, %v", rep, err)
		}
		// A write after the rekey goes to the new log, under the new key.
		db, err := engine.Open("/d", engine.Options{FS: mem, EncryptionKey: newKey, SegmentSize: 4 << 10})
		if err != nil {
			t.Fatal(err)
		}
		ns, err := db.Namespace("a")
		if err != nil {
			t.Fatal(err)
		}
		v := fmt.Sprintf("after %d", i)
		if err := ns.Put(ctx, []int32{100, int32(i)}, []byte(v)); err != nil {
			t.Fatal(err)
		}
		want = dumpStore(t, db)
		db.Close()
		if got, err := openDump(t, mem, newKey); err != nil || got != want {
			t.Fatalf("after a write under the new key: %v\n%s", err, got)
		}
	}
	// Neither key: refused, saying so.
	if _, err := engine.Rekey(ctx, "/d", keyA, keyB, engine.RekeyOptions{FS: mem}); !errors.Is(err, engine.ErrWrongKey) {
		t.Fatalf("rekey with keys that do not open the store: %v", err)
	}
	if _, err := engine.Rekey(ctx, "/nowhere", nil, keyA, engine.RekeyOptions{FS: mem}); !errors.Is(err, engine.ErrNoStore) {
		t.Fatalf("rekey of no store: %v", err)
	}
	if _, err := engine.Rekey(ctx, "/d", nil, []byte("short"), engine.RekeyOptions{FS: mem}); !errors.Is(err, engine.ErrBadOptions) {
		t.Fatalf("rekey to a short key: %v", err)
	}
	db, err := engine.Open("/d", engine.Options{FS: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := engine.Rekey(ctx, "/d", nil, keyA, engine.RekeyOptions{FS: mem}); !errors.Is(err, engine.ErrLocked) {
		t.Fatalf("rekey of an open store: %v", err)
	}
}

// TestRekeyCrash cuts a rekey short at every file operation it does that
// can change the disk (changesDisk), in
// two ways: the process dies there (every later operation fails) and the
// machine loses power (the simulated disk keeps what was durable, and of
// the rest what a seeded rng picks); or that one operation fails and the
// process lives on. After each, exactly one of the two keys must open the
// store, with all its data; the other must be refused saying a rekey did
// not finish, changing nothing; and both a second Rekey and an open under
// the key that rules must finish the job.
//
// Deliberate breaks this test was seen to catch (each made, run, failed,
// restored):
//   - the old log and checkpoints removed (and their directories synced)
//     before the new files are durable, right after stageRekey's MkdirAll:
//     power loss before the commit leaves the old key ruling over a store
//     without its data ("under plain the store holds ..." and nothing);
//   - the commit rename's directory sync dropped (stageRekey returning
//     right after Rename): Rekey then says the store is under the new key
//     when a power loss leaves it under the old one;
//   - finishRekey syncing the source directory before the target when the
//     new base moves (syncDirs(stgCkpt, ckpt)): power loss between the two
//     leaves no base under either name; neither key opens the store;
//   - the same for FORMAT (syncDirs(stg, dir)): the same failure;
//   - resumeRekey not finishing a committed rekey (returning nil): the
//     open under the new key fails on the old files at once.
func TestRekeyCrash(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if *powerSeed != 0 {
		seed = *powerSeed
	}
	t.Logf("seed %d (replay with -seed %d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	for _, tc := range rekeyCases {
		t.Run(tc.name, func(t *testing.T) {
			base := vfs.NewMem()
			want := buildRekeyStore(t, base, tc.oldKey)

			// Count the operations of a whole rekey.
			var total atomic.Int64
			counted := copyMem(t, base)
			if _, err := engine.Rekey(ctx, "/d", tc.oldKey, tc.newKey, engine.RekeyOptions{
				FS: vfs.NewFaulty(counted, vfs.InjectorFunc(func(op vfs.Op) error {
					if changesDisk(op) {
						total.Add(1)
					}
					return nil
				})),
			}); err != nil {
				t.Fatal(err)
			}
			n := int(total.Load())
			t.Logf("%d operations that change the disk", n)
			crashes, errs := 0, 0
			for k := 1; k <= n; k++ {
				for _, mode := range []string{"power loss", "one error"} {
					where := fmt.Sprintf("%s at operation %d of %d (seed %d)", mode, k, n, seed)
					mem := copyMem(t, base)
					var count atomic.Int64
					var failed atomic.Value
					fsys := vfs.NewFaulty(mem, vfs.InjectorFunc(func(op vfs.Op) error {
						if !changesDisk(op) {
							if mode == "power loss" && count.Load() >= int64(k) {
								return syscall.EIO // the process is dead
							}
							return nil
						}
						c := count.Add(1)
						if c == int64(k) {
							failed.Store(op.Kind.String() + " " + op.Path)
						}
						if c == int64(k) || (mode == "power loss" && c > int64(k)) {
							return syscall.EIO
						}
						return nil
					}))
					_, rerr := engine.Rekey(ctx, "/d", tc.oldKey, tc.newKey, engine.RekeyOptions{FS: fsys})
					if op, _ := failed.Load().(string); op != "" {
						where += " (" + op + ")"
					}
					if rerr != nil && !strings.Contains(rerr.Error(), "did not finish") && !strings.Contains(rerr.Error(), "engine: ") {
						t.Fatalf("%s: rekey's error is not the engine's: %v", where, rerr)
					}
					if mode == "power loss" {
						crashes++
						if rng.IntN(2) == 0 {
							mem.CrashClean()
						} else {
							mem.Crash(rng)
						}
					} else {
						errs++
					}
					claim := ""
					if rerr != nil {
						switch msg := rerr.Error(); {
						case strings.Contains(msg, "still under the old key"):
							claim = "old"
						case strings.Contains(msg, "under the new key"):
							claim = "new"
						}
					}
					// One copy is probed by opening, the other rekeyed again.
					again := copyMem(t, mem)
					got := underKey(t, mem, tc.oldKey, tc.newKey, want, where)
					if claim == "old" && !bytes.Equal(got, tc.oldKey) || claim == "new" && !bytes.Equal(got, tc.newKey) {
						t.Fatalf("%s: rekey said the store is under the %s key, but it is under %s: %v", where, claim, keyName(got), rerr)
					}
					if rerr == nil && !bytes.Equal(got, tc.newKey) {
						t.Fatalf("%s: rekey succeeded but the store is under %s", where, keyName(got))
					}
					if _, err := engine.Rekey(ctx, "/d", tc.oldKey, tc.newKey, engine.RekeyOptions{FS: again}); err != nil {
						t.Fatalf("%s: rekey again: %v", where, err)
					}
					if hasRekeyLeftovers(t, again) {
						t.Fatalf("%s: rekey again left its staging directory", where)
					}
					if got := underKey(t, again, tc.oldKey, tc.newKey, want, where+", rekeyed again"); !bytes.Equal(got, tc.newKey) {
						t.Fatalf("%s: after rekey again the store is under %s", where, keyName(got))
					}
				}
			}
			t.Logf("%d operations in a rekey: %d power losses and %d single errors, each checked", n, crashes, errs)
		})
	}
}
