package vfs_test

import (
	"bytes"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/cubelinux/cube/engine/vfs"
)

// modelInode is the test's idea of one MemFS inode.
type modelInode struct{ data, synced []byte }

type modelHandle struct {
	f vfs.File
	n *modelInode
}

// TestMem_Model runs random operations against a MemFS and a simple model
// of inodes and directory entries, crashing now and then. After CrashClean
// the file system must equal the model's durable state exactly; after
// Crash it must be within the documented bounds.
func TestMem_Model(t *testing.T) {
	seeds := 20
	if testing.Short() {
		seeds = 4
	}
	base := uint64(time.Now().UnixNano())
	for i := range seeds {
		runModel(t, base+uint64(i), 1500)
		if t.Failed() {
			return
		}
	}
}

func runModel(t *testing.T, seed uint64, steps int) {
	rng := seededRand(t, seed)
	fsys := vfs.NewMem()
	names := []string{"a", "b", "c", "d"}
	dir := map[string]*modelInode{}
	durable := map[string]*modelInode{}
	var handles []modelHandle

	check := func() {
		t.Helper()
		got, err := fsys.List("/")
		if err != nil {
			t.Fatal(err)
		}
		if want := slices.Sorted(maps.Keys(dir)); !slices.Equal(got, want) {
			t.Fatalf("seed %d: List = %q, want %q", seed, got, want)
		}
		for name, n := range dir {
			wantContents(t, fsys, "/"+name, n.data)
		}
	}

	for step := range steps {
		name := "/" + names[rng.IntN(len(names))]
		switch op := rng.IntN(100); {
		case op < 8:
			f, err := fsys.Create(name)
			if err != nil {
				t.Fatal(err)
			}
			n := dir[name[1:]]
			if n == nil {
				n = &modelInode{}
				dir[name[1:]] = n
			}
			n.data = nil
			handles = append(handles, modelHandle{f, n})
		case op < 12:
			n := dir[name[1:]]
			if n == nil {
				continue
			}
			f, err := fsys.OpenReadWrite(name)
			if err != nil {
				t.Fatal(err)
			}
			handles = append(handles, modelHandle{f, n})
		case op < 45 && len(handles) > 0:
			h := handles[rng.IntN(len(handles))]
			off := rng.IntN(len(h.n.data) + 200)
			p := make([]byte, rng.IntN(1500))
			for i := range p {
				p[i] = byte(rng.Uint32())
			}
			if _, err := h.f.WriteAt(p, int64(off)); err != nil {
				t.Fatal(err)
			}
			if end := off + len(p); end > len(h.n.data) {
				h.n.data = append(h.n.data, make([]byte, end-len(h.n.data))...)
			}
			copy(h.n.data[off:], p)
		case op < 50 && len(handles) > 0:
			h := handles[rng.IntN(len(handles))]
			size := rng.IntN(len(h.n.data) + 100)
			if err := h.f.Truncate(int64(size)); err != nil {
				t.Fatal(err)
			}
			if size <= len(h.n.data) {
				h.n.data = h.n.data[:size:size]
			} else {
				h.n.data = append(h.n.data, make([]byte, size-len(h.n.data))...)
			}
		case op < 62 && len(handles) > 0:
			h := handles[rng.IntN(len(handles))]
			if err := h.f.Sync(); err != nil {
				t.Fatal(err)
			}
			h.n.synced = slices.Clone(h.n.data)
		case op < 66 && len(handles) > 0:
			i := rng.IntN(len(handles))
			if err := handles[i].f.Close(); err != nil {
				t.Fatal(err)
			}
			handles = slices.Delete(handles, i, i+1)
		case op < 72:
			to := "/" + names[rng.IntN(len(names))]
			err := fsys.Rename(name, to)
			n := dir[name[1:]]
			if (n == nil) != (err != nil) {
				t.Fatalf("seed %d: Rename(%s, %s) = %v with model entry %v", seed, name, to, err, n != nil)
			}
			if n != nil {
				delete(dir, name[1:])
				dir[to[1:]] = n
			}
		case op < 76:
			err := fsys.Remove(name)
			if (dir[name[1:]] == nil) != (err != nil) {
				t.Fatalf("seed %d: Remove(%s) = %v", seed, name, err)
			}
			delete(dir, name[1:])
		case op < 86:
			mustSyncDir(t, fsys, "/")
			durable = maps.Clone(dir)
		case op < 90:
			check()
		case op < 95:
			fsys.CrashClean()
			handles = nil
			dir = maps.Clone(durable)
			for _, n := range dir {
				n.data = slices.Clone(n.synced)
			}
			check()
		default:
			fsys.Crash(rng)
			handles = nil
			dir = maps.Clone(durable)
			seen := map[*modelInode]bool{}
			for name, n := range dir {
				got, ok := contents(t, fsys, "/"+name)
				if !ok {
					t.Fatalf("seed %d step %d: durable %s vanished", seed, step, name)
				}
				if !seen[n] {
					checkCrashBounds(t, seed, step, name, n, got)
					seen[n] = true
				}
				n.data, n.synced = got, slices.Clone(got)
			}
			check()
		}
	}
}

// checkCrashBounds checks a file's contents after Crash against the
// documented model, given its durable and volatile contents before it.
func checkCrashBounds(t *testing.T, seed uint64, step int, name string, n *modelInode, got []byte) {
	t.Helper()
	s, v := n.synced, n.data
	ds, vs := len(s), len(v)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d step %d %s (synced %d, volatile %d, got %d): "+format,
			append([]any{seed, step, name, ds, vs, len(got)}, args...)...)
	}
	switch {
	case vs > ds && (len(got) < ds || len(got) > vs):
		fail("size out of range")
	case vs < ds && len(got) != ds && len(got) != vs:
		fail("size neither old nor new")
	case vs == ds && len(got) != ds:
		fail("size changed")
	}
	for i := range min(len(got), ds) {
		if (i >= vs || s[i] == v[i]) && got[i] != s[i] {
			fail("durable, unrewritten byte %d changed", i)
		}
	}
	if len(got) > ds {
		exact := max(ds, len(got)-vfs.TornMax)
		if !bytes.Equal(got[ds:exact], v[ds:exact]) {
			fail("appended bytes before the torn region differ")
		}
	}
}
