package vfs_test

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cubelinux/cube/engine/vfs"
)

// crashes runs fn once after CrashClean and once after Crash with each of
// many seeds: what fn checks must hold after any crash.
func eachCrash(t *testing.T, setup func(fsys *vfs.MemFS), check func(t *testing.T, fsys *vfs.MemFS)) {
	t.Helper()
	t.Run("clean", func(t *testing.T) {
		fsys := vfs.NewMem()
		setup(fsys)
		fsys.CrashClean()
		check(t, fsys)
	})
	for seed := uint64(1); seed <= 50; seed++ {
		fsys := vfs.NewMem()
		setup(fsys)
		fsys.Crash(rand.New(rand.NewPCG(seed, seed)))
		check(t, fsys)
		if t.Failed() {
			t.Fatalf("after Crash with seed %d", seed)
		}
	}
}

func TestMem_SyncedDataSurvives(t *testing.T) {
	a, b := pattern(3000, 1), pattern(5000, 2)
	eachCrash(t, func(fsys *vfs.MemFS) {
		writeDurable(t, fsys, "/", "/f", a)
		f, _ := fsys.OpenReadWrite("/f")
		f.WriteAt(b, int64(len(a))) // unsynced
	}, func(t *testing.T, fsys *vfs.MemFS) {
		got, ok := contents(t, fsys, "/f")
		if !ok || len(got) < len(a) || !bytes.Equal(got[:len(a)], a) {
			t.Fatalf("synced prefix lost: %d bytes %q", len(got), clip(got))
		}
	})
}

func TestMem_CrashCleanKeepsExactlySynced(t *testing.T) {
	fsys := vfs.NewMem()
	f := mustCreate(t, fsys, "/f", []byte("durable"))
	mustSync(t, f)
	mustSyncDir(t, fsys, "/")
	f.Write([]byte(" volatile"))
	f.WriteAt([]byte("D"), 0)
	fsys.CrashClean()
	wantContents(t, fsys, "/f", []byte("durable"))
}

func TestMem_SyncDoesNotPersistEntry(t *testing.T) {
	eachCrash(t, func(fsys *vfs.MemFS) {
		f := mustCreate(t, fsys, "/f", []byte("data"))
		mustSync(t, f)
	}, func(t *testing.T, fsys *vfs.MemFS) {
		wantMissing(t, fsys, "/f")
	})
}

func TestMem_SyncDirWithoutSyncKeepsEmptyFile(t *testing.T) {
	fsys := vfs.NewMem()
	mustCreate(t, fsys, "/f", []byte("data"))
	mustSyncDir(t, fsys, "/")
	fsys.CrashClean()
	wantContents(t, fsys, "/f", nil)
}

func TestMem_RenameUndoneWithoutSyncDir(t *testing.T) {
	eachCrash(t, func(fsys *vfs.MemFS) {
		writeDurable(t, fsys, "/", "/a", []byte("A"))
		writeDurable(t, fsys, "/", "/b", []byte("B"))
		if err := fsys.Rename("/a", "/b"); err != nil {
			t.Fatal(err)
		}
		if err := fsys.Rename("/b", "/c"); err != nil {
			t.Fatal(err)
		}
	}, func(t *testing.T, fsys *vfs.MemFS) {
		wantContents(t, fsys, "/a", []byte("A"))
		wantContents(t, fsys, "/b", []byte("B"))
		wantMissing(t, fsys, "/c")
	})
}

func TestMem_RenameKeepsDurableContents(t *testing.T) {
	// The classic atomic replace: the inode moves with its synced bytes.
	eachCrash(t, func(fsys *vfs.MemFS) {
		writeDurable(t, fsys, "/", "/CURRENT", []byte("old"))
		f := mustCreate(t, fsys, "/CURRENT.tmp", []byte("new"))
		mustSync(t, f)
		if err := fsys.Rename("/CURRENT.tmp", "/CURRENT"); err != nil {
			t.Fatal(err)
		}
		mustSyncDir(t, fsys, "/")
	}, func(t *testing.T, fsys *vfs.MemFS) {
		wantContents(t, fsys, "/CURRENT", []byte("new"))
		wantMissing(t, fsys, "/CURRENT.tmp")
	})
}

func TestMem_CrossDirectoryRename(t *testing.T) {
	setup := func(syncDirs ...string) func(*vfs.MemFS) {
		return func(fsys *vfs.MemFS) {
			fsys.MkdirAll("/d1", 0o755)
			fsys.MkdirAll("/d2", 0o755)
			mustSyncDir(t, fsys, "/")
			writeDurable(t, fsys, "/d1", "/d1/f", []byte("F"))
			if err := fsys.Rename("/d1/f", "/d2/f"); err != nil {
				t.Fatal(err)
			}
			for _, d := range syncDirs {
				mustSyncDir(t, fsys, d)
			}
		}
	}
	eachCrash(t, setup("/d1", "/d2"), func(t *testing.T, fsys *vfs.MemFS) {
		wantMissing(t, fsys, "/d1/f")
		wantContents(t, fsys, "/d2/f", []byte("F"))
	})
	eachCrash(t, setup("/d1"), func(t *testing.T, fsys *vfs.MemFS) {
		wantMissing(t, fsys, "/d1/f") // lost under both names
		wantMissing(t, fsys, "/d2/f")
	})
	// Only the target synced: both names survive, on one inode.
	fsys := vfs.NewMem()
	setup("/d2")(fsys)
	fsys.CrashClean()
	wantContents(t, fsys, "/d1/f", []byte("F"))
	wantContents(t, fsys, "/d2/f", []byte("F"))
	f, _ := fsys.OpenReadWrite("/d1/f")
	f.Write([]byte("G"))
	f.Close()
	wantContents(t, fsys, "/d2/f", []byte("G"))
}

func TestMem_RemovedFileReappears(t *testing.T) {
	eachCrash(t, func(fsys *vfs.MemFS) {
		writeDurable(t, fsys, "/", "/f", []byte("still here"))
		if err := fsys.Remove("/f"); err != nil {
			t.Fatal(err)
		}
	}, func(t *testing.T, fsys *vfs.MemFS) {
		wantContents(t, fsys, "/f", []byte("still here"))
	})
	fsys := vfs.NewMem()
	writeDurable(t, fsys, "/", "/f", []byte("gone"))
	fsys.Remove("/f")
	mustSyncDir(t, fsys, "/")
	fsys.CrashClean()
	wantMissing(t, fsys, "/f")
}

func TestMem_MkdirNeedsParentSyncDir(t *testing.T) {
	setup := func(syncRoot bool) func(*vfs.MemFS) {
		return func(fsys *vfs.MemFS) {
			if err := fsys.MkdirAll("/d/e", 0o755); err != nil {
				t.Fatal(err)
			}
			writeDurable(t, fsys, "/d/e", "/d/e/f", []byte("x"))
			mustSyncDir(t, fsys, "/d")
			if syncRoot {
				mustSyncDir(t, fsys, "/")
			}
		}
	}
	eachCrash(t, setup(false), func(t *testing.T, fsys *vfs.MemFS) {
		wantMissing(t, fsys, "/d")
	})
	eachCrash(t, setup(true), func(t *testing.T, fsys *vfs.MemFS) {
		wantContents(t, fsys, "/d/e/f", []byte("x"))
	})
}

// TestMem_TornTailOnlyUnsynced checks the appended-bytes rule: a prefix of
// the unsynced bytes is kept, and only its last TornMax bytes may differ
// from what was written. It also checks that crashes do produce every
// outcome, so that the engine's tests see them.
func TestMem_TornTailOnlyUnsynced(t *testing.T) {
	a := pattern(3000, 1)
	b := pattern(20000, 2)
	var none, all, partial, torn int
	for seed := uint64(0); seed < 400; seed++ {
		fsys := vfs.NewMem()
		writeDurable(t, fsys, "/", "/wal", a)
		f, _ := fsys.OpenReadWrite("/wal")
		for off := 0; off < len(b); off += 100 {
			f.WriteAt(b[off:off+100], int64(len(a)+off))
		}
		fsys.Crash(rand.New(rand.NewPCG(seed, 7)))
		got, _ := contents(t, fsys, "/wal")
		if len(got) < len(a) || len(got) > len(a)+len(b) {
			t.Fatalf("seed %d: size %d outside [%d, %d]", seed, len(got), len(a), len(a)+len(b))
		}
		if !bytes.Equal(got[:len(a)], a) {
			t.Fatalf("seed %d: synced bytes changed", seed)
		}
		tail := got[len(a):]
		exact := max(0, len(tail)-vfs.TornMax)
		if !bytes.Equal(tail[:exact], b[:exact]) {
			t.Fatalf("seed %d: unsynced bytes changed before the last %d", seed, vfs.TornMax)
		}
		switch {
		case len(tail) == 0:
			none++
		case !bytes.Equal(tail, b[:len(tail)]):
			torn++
		case len(tail) == len(b):
			all++
		default:
			partial++
		}
	}
	t.Logf("none %d, all %d, partial %d, torn %d", none, all, partial, torn)
	if none == 0 || all == 0 || partial == 0 || torn == 0 {
		t.Fatalf("some outcome never happened: none %d, all %d, partial %d, torn %d", none, all, partial, torn)
	}
}

// TestMem_OverwriteSectors checks the overwrite rule: bytes that were not
// changed are never touched; changed sectors come back old, new or torn.
func TestMem_OverwriteSectors(t *testing.T) {
	const size = 8192
	old := make([]byte, size) // a preallocated, zero-filled log
	neu := slices.Clone(old)
	for i := 700; i < 5000; i++ {
		if i%3 != 0 { // every third byte is rewritten with its old value
			neu[i] = 0xAB
		}
	}
	var sawOld, sawNew, sawTorn bool
	for seed := uint64(0); seed < 100; seed++ {
		fsys := vfs.NewMem()
		writeDurable(t, fsys, "/", "/log", old)
		f, _ := fsys.OpenReadWrite("/log")
		f.WriteAt(neu[700:5000], 700)
		fsys.Crash(rand.New(rand.NewPCG(seed, 9)))
		got, _ := contents(t, fsys, "/log")
		if len(got) != size {
			t.Fatalf("seed %d: size %d, want %d", seed, len(got), size)
		}
		for i := range got {
			if old[i] == neu[i] && got[i] != old[i] {
				t.Fatalf("seed %d: unchanged byte %d became %#x", seed, i, got[i])
			}
		}
		for s := 0; s < size; s += vfs.SectorSize {
			a, b := max(s, 700), min(s+vfs.SectorSize, 5000)
			if a >= b {
				continue
			}
			switch {
			case bytes.Equal(got[a:b], old[a:b]):
				sawOld = true
			case bytes.Equal(got[a:b], neu[a:b]):
				sawNew = true
			default:
				sawTorn = true
			}
		}
	}
	if !sawOld || !sawNew || !sawTorn {
		t.Fatalf("old %v, new %v, torn %v: every outcome must occur", sawOld, sawNew, sawTorn)
	}
}

func TestMem_UnsyncedTruncate(t *testing.T) {
	a := pattern(1000, 3)
	sizes := map[int]bool{}
	eachCrash(t, func(fsys *vfs.MemFS) {
		writeDurable(t, fsys, "/", "/f", a)
		f, _ := fsys.OpenReadWrite("/f")
		f.Truncate(10)
	}, func(t *testing.T, fsys *vfs.MemFS) {
		got, _ := contents(t, fsys, "/f")
		if (len(got) != 10 && len(got) != 1000) || !bytes.Equal(got, a[:len(got)]) {
			t.Fatalf("got %d bytes, want a[:10] or a[:1000]", len(got))
		}
		sizes[len(got)] = true
	})
	if !sizes[10] || !sizes[1000] {
		t.Fatalf("sizes seen %v, want both", sizes)
	}
}

func TestMem_HandlesFailAfterCrash(t *testing.T) {
	fsys := vfs.NewMem()
	writeDurable(t, fsys, "/", "/f", []byte("x"))
	f, _ := fsys.OpenReadWrite("/f")
	l, err := fsys.Lock("/LOCK")
	if err != nil {
		t.Fatal(err)
	}
	fsys.Crash(rand.New(rand.NewPCG(1, 1)))

	buf := make([]byte, 1)
	ops := map[string]error{}
	_, ops["Read"] = f.Read(buf)
	_, ops["ReadAt"] = f.ReadAt(buf, 0)
	_, ops["Write"] = f.Write(buf)
	_, ops["WriteAt"] = f.WriteAt(buf, 0)
	ops["Sync"] = f.Sync()
	ops["Truncate"] = f.Truncate(0)
	_, ops["Size"] = f.Size()
	ops["Preallocate"] = f.Preallocate(0, 1)
	ops["Close"] = f.Close()
	ops["lock Close"] = l.Close()
	for op, err := range ops {
		if !errors.Is(err, vfs.ErrCrashed) {
			t.Errorf("%s after crash: %v, want ErrCrashed", op, err)
		}
	}
	// The crash released the lock; a new incarnation takes it.
	l2, err := fsys.Lock("/LOCK")
	if err != nil {
		t.Fatalf("Lock after crash: %v", err)
	}
	l2.Close()
	// And new handles work.
	wantContents(t, fsys, "/f", []byte("x"))
}

func TestMem_FailedSyncLosesData(t *testing.T) {
	mem := vfs.NewMem()
	fsys := vfs.NewFaulty(mem, vfs.FailOnce(vfs.OpSync, 2, syscall.EIO))
	f := mustCreate(t, fsys, "/wal", []byte("first;"))
	mustSync(t, f)
	mustSyncDir(t, fsys, "/")
	f.Write([]byte("second;"))
	if err := f.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("second Sync: %v, want EIO", err)
	}
	// The page cache still has the bytes and a retried Sync "succeeds" ...
	wantContents(t, mem, "/wal", []byte("first;second;"))
	f.Write([]byte("third;"))
	mustSync(t, f)
	// ... but the bytes of the failed Sync never reach the disk.
	mem.CrashClean()
	want := append([]byte("first;"), make([]byte, len("second;"))...)
	want = append(want, "third;"...)
	wantContents(t, mem, "/wal", want)
}

func TestMem_CrashIsReproducible(t *testing.T) {
	run := func() string {
		fsys := vfs.NewMem()
		rng := rand.New(rand.NewPCG(42, 42))
		for i := range 5 {
			name := "/f" + strings.Repeat("x", i)
			f := mustCreate(t, fsys, name, pattern(1000+i*777, byte(i)))
			mustSync(t, f)
			f.Write(pattern(3000, byte(i+1)))
			f.WriteAt(pattern(600, 9), 100)
		}
		mustSyncDir(t, fsys, "/")
		fsys.Crash(rng)
		var sb strings.Builder
		names, _ := fsys.List("/")
		for _, n := range names {
			data, _ := contents(t, fsys, "/"+n)
			sb.WriteString(n)
			sb.Write(data)
		}
		return sb.String()
	}
	if a, b := run(), run(); a != b {
		t.Fatal("the same seed and operations gave different crashes")
	}
}

func TestMem_String(t *testing.T) {
	fsys := vfs.NewMem()
	writeDurable(t, fsys, "/", "/kept", []byte("abc"))
	writeDurable(t, fsys, "/", "/gone", nil)
	fsys.Remove("/gone")
	mustCreate(t, fsys, "/new", []byte("de"))
	fsys.MkdirAll("/dir", 0o755)
	got := fsys.String()
	for _, want := range []string{" /kept size=3 synced=3\n", "+/new size=2 synced=0 dirty=[0,2)\n", "+/dir/\n", "-/gone size=0 synced=0\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("String() lacks %q:\n%s", want, got)
		}
	}
}

// TestMem_Hammer has writers append and sync records to their own files
// while readers read, list and stat, until a crash kills them all. Every
// record whose Sync returned before the crash must survive it.
func TestMem_Hammer(t *testing.T) {
	const writers, readers = 4, 3
	dur := 200 * time.Millisecond
	if testing.Short() {
		dur = 50 * time.Millisecond
	}
	seed := uint64(time.Now().UnixNano())
	rng := seededRand(t, seed)
	fsys := vfs.NewMem()
	names := make([]string, writers)
	for i := range names {
		names[i] = "/w" + string(rune('a'+i))
		writeDurable(t, fsys, "/", names[i], nil)
	}
	acked := make([]int, writers)
	synced := make([]atomic.Bool, writers)
	done := make(chan struct{})
	errs := make(chan error, writers+readers)
	for w := range writers {
		go func() {
			f, err := fsys.OpenReadWrite(names[w])
			if err != nil {
				errs <- err
				return
			}
			rec := pattern(128, byte(w))
			for n := 0; ; n++ {
				if _, err := f.Write(rec); err != nil {
					errs <- ignoreCrash(err)
					return
				}
				if n%4 == 3 { // group commit: sync every 4 records
					if err := f.Sync(); err != nil {
						errs <- ignoreCrash(err)
						return
					}
					acked[w] = n + 1 // read only after errs says we stopped
					synced[w].Store(true)
				}
			}
		}()
	}
	for r := range readers {
		go func() {
			buf := make([]byte, 256)
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				if _, err := fsys.List("/"); err != nil {
					errs <- err
					return
				}
				f, err := fsys.Open(names[r%writers])
				if err != nil {
					errs <- err
					return
				}
				if n, _ := f.Size(); n > 0 {
					if _, err := f.ReadAt(buf[:min(n, 256)], 0); err != nil && err != io.EOF && !errors.Is(err, vfs.ErrCrashed) {
						errs <- err
						return
					}
				}
				f.Close()
			}
		}()
	}
	time.Sleep(dur)
	// On a loaded machine (-race, two cores) a writer may not have run
	// yet: crash only once each has synced, or the test checks nothing.
	for w := range writers {
		for deadline := time.Now().Add(time.Minute); !synced[w].Load(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: writer never synced in a minute", names[w])
			}
		}
	}
	fsys.Crash(rng)
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	for range readers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for w, name := range names {
		got, _ := contents(t, fsys, name)
		want := bytes.Repeat(pattern(128, byte(w)), acked[w])
		if len(got) < len(want) || !bytes.Equal(got[:len(want)], want) {
			t.Fatalf("%s: %d acked records, %d bytes survived", name, acked[w], len(got))
		}
		if acked[w] == 0 {
			t.Errorf("%s: writer never synced", name)
		}
	}
}

func ignoreCrash(err error) error {
	if errors.Is(err, vfs.ErrCrashed) {
		return nil
	}
	return err
}
