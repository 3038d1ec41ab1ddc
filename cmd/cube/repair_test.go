package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifyRepair: a store whose log is damaged mid-way (a flipped byte
// in a record that later records follow, as a bad disk leaves it) is
// refused by verify, which names the place and says that --repair cuts
// it; verify --repair cuts it, keeps a copy, reports the writes lost and
// leaves a store that verifies clean. Damage in a checkpoint is refused
// by both, with the advice to restore from a backup. Breaks it caught:
// the --repair flag not reaching the store's options (the repair run
// refused like the first), and the advice not told apart (a damaged
// checkpoint was offered --repair, which cannot mend it).
func TestVerifyRepair(t *testing.T) {
	data := filepath.Join(shortDir(t), "d")
	d, out := cubeProc(t, nil, "serve", "--data", data)
	waitSocket(t, filepath.Join(data, "cube.sock"), out)
	if code, _, errs := cubeWith(t, nil, "", "--data", data, "ns.create", "w", "DIMS", "1"); code != 0 {
		t.Fatalf("ns.create: %s", errs)
	}
	var csv strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&csv, "%d,value %d\n", i, i)
	}
	if code, _, errs := cubeWith(t, nil, csv.String(), "--data", data, "-n", "w", "import", "-", "--format", "csv"); code != 0 {
		t.Fatalf("import: %s", errs)
	}
	// A write after the import has returned: its record is the log's
	// proof that every record before it was synced, so damage among them
	// is damage, not a torn tail. (The daemon commits an import's
	// pipelined batches behind one sync, and without a later record a
	// damaged one among them looks like a write the crash tore.)
	if code, _, errs := cubeWith(t, nil, "", "--data", data, "put", "w", "5000", "after"); code != 0 {
		t.Fatalf("put: %s", errs)
	}
	// SIGKILL: the writes are in the log only, no checkpoint after them.
	d.Process.Kill()
	d.Wait()

	seg := biggestLogSegment(t, filepath.Join(data, "wal"))
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	end := len(bytes.TrimRight(b, "\x00"))
	flip(t, seg, int64(end/3))

	code, stdout, errs := cubeWith(t, nil, "", "verify", data)
	if code != 1 || !strings.Contains(errs, "is damaged") || !strings.Contains(errs, "'cube verify --repair "+data+"'") {
		t.Fatalf("verify of a damaged log: exit %d\n%s%s", code, stdout, errs)
	}
	code, stdout, errs = cubeWith(t, nil, "", "verify", "--repair", data)
	if code != 0 || !strings.Contains(stdout, "REPAIRED") || !strings.Contains(stdout, "lost LSNs") || !strings.Contains(stdout, ": ok") {
		t.Fatalf("verify --repair: exit %d\n%s%s", code, stdout, errs)
	}
	cuts, _ := filepath.Glob(seg + ".cut-*")
	if len(cuts) != 1 {
		t.Fatalf("copies of the cut bytes: %v, want one beside %s", cuts, seg)
	}
	if code, stdout, errs = cubeWith(t, nil, "", "verify", data); code != 0 || strings.Contains(stdout, "REPAIRED") {
		t.Fatalf("verify after the repair: exit %d\n%s%s", code, stdout, errs)
	}

	// Damage in a checkpoint: not the log's, so --repair cannot cut it.
	cks, _ := filepath.Glob(filepath.Join(data, "checkpoint", "*"))
	var ck string
	for _, p := range cks {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Size() > 1000 {
			ck = p
		}
	}
	if ck == "" {
		t.Fatalf("no checkpoint file of any size in %v", cks)
	}
	fi, _ := os.Stat(ck)
	flip(t, ck, fi.Size()/2)
	for _, args := range [][]string{{"verify", data}, {"verify", "--repair", data}} {
		code, stdout, errs = cubeWith(t, nil, "", args...)
		if code != 1 || !strings.Contains(errs, "restore the data directory from a backup") || strings.Contains(errs, "'cube verify --repair") {
			t.Fatalf("%v of a damaged checkpoint: exit %d\n%s%s", args, code, stdout, errs)
		}
	}
}

// biggestLogSegment is the log segment holding the most data.
func biggestLogSegment(t *testing.T, dir string) string {
	t.Helper()
	segs, _ := filepath.Glob(filepath.Join(dir, "*.wal"))
	best, most := "", -1
	for _, s := range segs {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(bytes.TrimRight(b, "\x00")); n > most {
			best, most = s, n
		}
	}
	if best == "" {
		t.Fatalf("no log segments in %s", dir)
	}
	return best
}

// flip inverts one bit of the byte at off in file.
func flip(t *testing.T, file string, off int64) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x10
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}
