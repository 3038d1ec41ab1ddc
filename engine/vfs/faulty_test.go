package vfs_test

import (
	"errors"
	"io"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/cubelinux/cube/engine/vfs"
)

func TestFaulty_ENOSPCShortWrite(t *testing.T) {
	for _, inner := range []struct {
		name string
		fs   func(t *testing.T) (vfs.FS, string)
	}{
		{"Mem", func(t *testing.T) (vfs.FS, string) { return vfs.NewMem(), "/" }},
		{"OS", func(t *testing.T) (vfs.FS, string) { return vfs.OS(), t.TempDir() }},
	} {
		t.Run(inner.name, func(t *testing.T) {
			base, dir := inner.fs(t)
			fsys := vfs.NewFaulty(base, vfs.ENOSPCAfterBytes(100))
			a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			fa, err := fsys.Create(a)
			if err != nil {
				t.Fatal(err)
			}
			defer fa.Close()
			fb, err := fsys.Create(b)
			if err != nil {
				t.Fatal(err)
			}
			defer fb.Close()
			steps := []struct {
				f       vfs.File
				at      int64 // -1: Write
				n, want int
				enospc  bool
			}{
				{fa, -1, 40, 40, false},
				{fb, 10, 40, 40, false}, // the budget is shared by all files
				{fa, -1, 0, 0, false},   // empty writes spend nothing
				{fa, -1, 40, 20, true},  // crosses the budget: short
				{fa, -1, 5, 0, true},
				{fb, 0, 1, 0, true},
			}
			for i, s := range steps {
				p := pattern(s.n, byte(i))
				var n int
				var err error
				if s.at < 0 {
					n, err = s.f.Write(p)
				} else {
					n, err = s.f.WriteAt(p, s.at)
				}
				if n != s.want || errors.Is(err, syscall.ENOSPC) != s.enospc {
					t.Fatalf("step %d: wrote %d, %v; want %d, ENOSPC %v", i, n, err, s.want, s.enospc)
				}
				if err != nil {
					if !errors.Is(err, vfs.ErrInjected) || !strings.Contains(err.Error(), "write") ||
						!strings.Contains(err.Error(), s.f.Name()) {
						t.Fatalf("step %d: error %q must match ErrInjected and name the op and path", i, err)
					}
				}
			}
			// a got 40 + 20 bytes; its offset moved by 60, not 80.
			want := append(pattern(40, 0), pattern(40, 3)[:20]...)
			wantContents(t, fsys, a, want)
			wantContents(t, base, b, append(make([]byte, 10), pattern(40, 1)...))
		})
	}
}

func TestFaulty_FailAfter(t *testing.T) {
	fsys := vfs.NewFaulty(vfs.NewMem(), vfs.FailAfter(vfs.OpSync, 3, syscall.EIO))
	f := mustCreate(t, fsys, "/wal", []byte("x"))
	for i := 1; i <= 5; i++ {
		err := f.Sync()
		if fail := i >= 3; fail != (err != nil) {
			t.Fatalf("sync %d: %v", i, err)
		}
		if err != nil && (!errors.Is(err, syscall.EIO) || !errors.Is(err, vfs.ErrInjected)) {
			t.Fatalf("sync %d: %v does not match EIO and ErrInjected", i, err)
		}
	}
	// Other kinds are untouched.
	if _, err := f.Write([]byte("y")); err != nil {
		t.Fatal(err)
	}
}

func TestFaulty_FailOnce(t *testing.T) {
	fsys := vfs.NewFaulty(vfs.NewMem(), vfs.FailOnce(vfs.OpSyncDir, 2, syscall.EIO))
	for i := 1; i <= 4; i++ {
		err := fsys.SyncDir("/")
		if (i == 2) != errors.Is(err, syscall.EIO) {
			t.Fatalf("syncdir %d: %v", i, err)
		}
	}
}

func TestFaulty_FailedOpsAreNotDone(t *testing.T) {
	mem := vfs.NewMem()
	writeDurable(t, mem, "/", "/a", []byte("A"))
	fail := vfs.InjectorFunc(func(op vfs.Op) error {
		switch op.Kind {
		case vfs.OpCreate, vfs.OpRename, vfs.OpRemove, vfs.OpMkdir, vfs.OpTruncate, vfs.OpWrite:
			return syscall.EROFS
		}
		return nil
	})
	fsys := vfs.NewFaulty(mem, fail)
	if _, err := fsys.Create("/new"); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("Create: %v", err)
	}
	err := fsys.Rename("/a", "/b")
	if !errors.Is(err, syscall.EROFS) || !strings.Contains(err.Error(), "/a -> /b") {
		t.Fatalf("Rename: %v", err)
	}
	if err := fsys.Remove("/a"); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("Remove: %v", err)
	}
	if err := fsys.MkdirAll("/d", 0o755); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("MkdirAll: %v", err)
	}
	f, err := fsys.OpenReadWrite("/a")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(0); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("Truncate: %v", err)
	}
	if n, err := f.WriteAt([]byte("Z"), 0); n != 0 || !errors.Is(err, syscall.EROFS) {
		t.Fatalf("WriteAt: %d, %v", n, err)
	}
	f.Close()
	wantContents(t, mem, "/a", []byte("A"))
	wantMissing(t, mem, "/new")
	wantMissing(t, mem, "/b")
	wantMissing(t, mem, "/d")
}

func TestFaulty_OpsSeen(t *testing.T) {
	var mu sync.Mutex
	var ops []vfs.Op
	rec := vfs.InjectorFunc(func(op vfs.Op) error {
		mu.Lock()
		ops = append(ops, op)
		mu.Unlock()
		return nil
	})
	fsys := vfs.NewFaulty(vfs.NewMem(), rec)
	f, _ := fsys.Create("/f")
	f.Write(make([]byte, 10))
	f.Write(make([]byte, 5))
	f.WriteAt(make([]byte, 3), 100)
	f.ReadAt(make([]byte, 4), 2)
	f.Preallocate(0, 4096)
	f.Truncate(7)
	f.Sync()
	f.Close()
	fsys.Rename("/f", "/g")
	fsys.SyncDir("/")
	want := []vfs.Op{
		{Kind: vfs.OpCreate, Path: "/f"},
		{Kind: vfs.OpWrite, Path: "/f", Offset: 0, Len: 10},
		{Kind: vfs.OpWrite, Path: "/f", Offset: 10, Len: 5},
		{Kind: vfs.OpWrite, Path: "/f", Offset: 100, Len: 3},
		{Kind: vfs.OpRead, Path: "/f", Offset: 2, Len: 4},
		{Kind: vfs.OpPreallocate, Path: "/f", Offset: 0, Len: 4096},
		{Kind: vfs.OpTruncate, Path: "/f", Offset: 7},
		{Kind: vfs.OpSync, Path: "/f"},
		{Kind: vfs.OpClose, Path: "/f"},
		{Kind: vfs.OpRename, Path: "/f", NewPath: "/g"},
		{Kind: vfs.OpSyncDir, Path: "/"},
	}
	if len(ops) != len(want) {
		t.Fatalf("saw %d ops %v, want %d", len(ops), ops, len(want))
	}
	for i := range want {
		if ops[i] != want[i] {
			t.Errorf("op %d = %+v, want %+v", i, ops[i], want[i])
		}
	}
}

func TestFaulty_ShortWrite(t *testing.T) {
	rng := seededRand(t, 5)
	mem := vfs.NewMem()
	fsys := vfs.NewFaulty(mem, vfs.ShortWrite(1, rng))
	f, _ := fsys.Create("/f")
	var want []byte
	for i := range 50 {
		p := pattern(1+i*10, byte(i))
		n, err := f.WriteAt(p, int64(len(want)))
		if n >= len(p) || !errors.Is(err, io.ErrShortWrite) {
			t.Fatalf("write %d of %d: %d, %v; want a short write", i, len(p), n, err)
		}
		want = append(want, p[:n]...)
	}
	wantContents(t, mem, "/f", want)

	never := vfs.NewFaulty(vfs.NewMem(), vfs.ShortWrite(0, rand.New(rand.NewPCG(1, 1))))
	g, _ := never.Create("/g")
	for range 50 {
		if n, err := g.Write(make([]byte, 100)); n != 100 || err != nil {
			t.Fatalf("prob 0: %d, %v", n, err)
		}
	}
}

func TestFaulty_FilterAndChain(t *testing.T) {
	onlyWAL := func(op vfs.Op) bool { return strings.HasSuffix(op.Path, ".wal") }
	inj := vfs.Chain(
		vfs.Filter(onlyWAL, vfs.FailAfter(vfs.OpSync, 2, syscall.EIO)),
		vfs.FailOnce(vfs.OpSync, 1, syscall.ENOSPC),
	)
	fsys := vfs.NewFaulty(vfs.NewMem(), inj)
	wal := mustCreate(t, fsys, "/x.wal", nil)
	other := mustCreate(t, fsys, "/x.ckpt", nil)
	// First sync of all: the WAL filter passes it (its first), FailOnce fails it.
	if err := other.Sync(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("sync 1: %v", err)
	}
	if err := wal.Sync(); err != nil { // the WAL's first sync
		t.Fatalf("wal sync 1: %v", err)
	}
	if err := other.Sync(); err != nil {
		t.Fatalf("other sync: %v", err)
	}
	if err := wal.Sync(); !errors.Is(err, syscall.EIO) { // the WAL's second
		t.Fatalf("wal sync 2: %v", err)
	}
}

func TestFaulty_CloseReleasesAnyway(t *testing.T) {
	mem := vfs.NewMem()
	fsys := vfs.NewFaulty(mem, vfs.FailAfter(vfs.OpClose, 1, syscall.EIO))
	f := mustCreate(t, fsys, "/f", nil)
	if err := f.Close(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Close: %v", err)
	}
	if _, err := f.Write([]byte("x")); err == nil {
		t.Fatal("handle still usable after a failed Close")
	}
}

func TestOpKind_String(t *testing.T) {
	for k, want := range map[vfs.OpKind]string{vfs.OpSync: "sync", vfs.OpSyncDir: "syncdir", 0: "OpKind(0)", 200: "OpKind(200)"} {
		if got := k.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", k, got, want)
		}
	}
}
