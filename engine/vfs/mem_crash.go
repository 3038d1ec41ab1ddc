package vfs

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
)

// SectorSize is the unit in which a crash decides whether an unsynced
// overwrite of durable bytes reached the disk: each such sector keeps its
// old bytes, takes its new ones, or is torn.
const SectorSize = 512

// TornMax bounds the torn region at the end of a file's kept unsynced
// appended bytes: torn bytes lie within the last TornMax bytes kept.
const TornMax = 4096

// CrashClean simulates a power loss that keeps exactly the durable state:
// every directory holds the entries of its last SyncDir (the root's, and
// recursively those of the directories that survive), every surviving file
// holds the contents and size of its last Sync, and nothing unsynced
// survives. Every handle and lock taken before the crash is dead: using or
// closing it returns ErrCrashed. Locks are released.
func (fs *MemFS) CrashClean() { fs.Crash(nil) }

// Crash simulates a power loss, choosing with rng what the disk happened to
// keep of what was not yet durable. Directories revert exactly as in
// CrashClean. Each surviving file keeps its durable contents and, of what
// was written since its last Sync:
//   - of bytes appended past the durable size, a prefix of random length
//     (none, all or in between), whose last up to TornMax bytes may then be
//     torn: replaced by zeros or random bytes;
//   - of each SectorSize sector of durable bytes overwritten, either the old
//     bytes, the new bytes, or a torn mix (the new bytes up to a point, then
//     zeros or random bytes in the positions that were changed);
//   - of an unsynced truncation, either the old size or the new.
//
// Bytes that are durable and were not rewritten since are never changed.
// A nil rng means CrashClean. Every handle and lock taken before the crash
// is dead, as in CrashClean.
func (fs *MemFS) Crash(rng *rand.Rand) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.gen++
	clear(fs.locks)
	seen := map[*memNode]bool{}
	var walk func(d *memNode)
	walk = func(d *memNode) {
		d.children = maps.Clone(d.syncedChildren)
		for _, name := range slices.Sorted(maps.Keys(d.children)) { // sorted: rng use is reproducible
			n := d.children[name]
			if seen[n] {
				continue // reached twice through an unsynced cross-directory rename
			}
			seen[n] = true
			if n.isDir {
				walk(n)
			} else {
				n.crash(rng)
			}
		}
	}
	walk(fs.root)
}

// crash replaces the inode's contents by what the disk kept.
func (n *memNode) crash(rng *rand.Rand) {
	if rng == nil || n.dirtyLo >= n.dirtyHi {
		n.data = slices.Clone(n.synced)
		n.clean()
		return
	}
	old, cur := n.synced, n.data
	ds, vs := int64(len(old)), int64(len(cur))
	res := slices.Clone(old)

	// Durable bytes overwritten since the last Sync, sector by sector.
	common := min(ds, vs)
	for lo := n.dirtyLo / SectorSize * SectorSize; lo < min(n.dirtyHi, common); lo += SectorSize {
		a, b := max(lo, n.dirtyLo), min(lo+SectorSize, n.dirtyHi, common)
		if bytes.Equal(old[a:b], cur[a:b]) {
			continue
		}
		switch rng.IntN(5) {
		case 0, 1: // the old sector stays
		case 2, 3:
			copy(res[a:b], cur[a:b])
		default:
			split := a + rng.Int64N(b-a)
			zeros := rng.IntN(2) == 0
			for i := a; i < b; i++ {
				if old[i] == cur[i] {
					continue
				}
				switch {
				case i < split:
					res[i] = cur[i]
				case zeros:
					res[i] = 0
				default:
					res[i] = byte(rng.Uint32())
				}
			}
		}
	}

	switch {
	case vs > ds: // appended: keep a prefix, maybe torn at its end
		var keep int64
		switch rng.IntN(4) {
		case 0:
			keep = ds
		case 1:
			keep = vs
		default:
			keep = ds + rng.Int64N(vs-ds+1)
		}
		res = append(res, cur[ds:keep]...)
		if keep > ds && rng.IntN(3) == 0 {
			from := max(ds, keep-TornMax)
			start := from + rng.Int64N(keep-from)
			zeros := rng.IntN(2) == 0
			for i := start; i < keep; i++ {
				if zeros {
					res[i] = 0
				} else {
					res[i] = byte(rng.Uint32())
				}
			}
		}
	case vs < ds: // truncated: the new size reached the disk or did not
		if rng.IntN(2) == 0 {
			res = res[:vs]
		}
	}
	n.synced = res
	n.data = slices.Clone(res)
	n.clean()
}

// String describes the whole tree for debugging: each entry with its
// volatile size and durable size, and whether its directory entry is
// durable ("+" volatile only, "-" durable only: removed or renamed away
// without SyncDir, " " both).
func (fs *MemFS) String() string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var sb strings.Builder
	sb.WriteString("/\n")
	var walk func(d *memNode, prefix string)
	walk = func(d *memNode, prefix string) {
		names := map[string]bool{}
		for k := range d.children {
			names[k] = true
		}
		for k := range d.syncedChildren {
			names[k] = true
		}
		for _, name := range slices.Sorted(maps.Keys(names)) {
			v, inV := d.children[name]
			s, inS := d.syncedChildren[name]
			mark := " "
			switch {
			case inV && (!inS || s != v):
				mark = "+"
			case !inV:
				mark = "-"
			}
			n := v
			if !inV {
				n = s
			}
			if n.isDir {
				fmt.Fprintf(&sb, "%s%s%s/\n", mark, prefix, name)
				walk(n, prefix+name+"/")
				continue
			}
			dirty := ""
			if n.dirtyLo < n.dirtyHi {
				dirty = fmt.Sprintf(" dirty=[%d,%d)", n.dirtyLo, n.dirtyHi)
			}
			fmt.Fprintf(&sb, "%s%s%s size=%d synced=%d%s\n", mark, prefix, name, len(n.data), len(n.synced), dirty)
			if inV && inS && s != v {
				fmt.Fprintf(&sb, "-%s%s (durable entry: another inode, size=%d synced=%d)\n", prefix, name, len(s.data), len(s.synced))
			}
		}
	}
	walk(fs.root, "/")
	return sb.String()
}
