package wal

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/cubelinux/cube/engine/internal/crypt"
	"github.com/cubelinux/cube/engine/internal/ddtest"
	"github.com/cubelinux/cube/engine/vfs"
)

// TestDataDriven runs the log's decoder and recovery over the scripts in
// testdata/decode: segments built record by record, damaged byte by byte,
// then decoded and recovered, each outcome printed with its type. go test
// -run TestDataDriven -rewrite writes the expected outputs anew.
//
//	reset                            start a new log with no segments
//	segment first=N salt=S [key=K]   start a segment (K: a one-letter key)
//	append [synced=N]                one record per input line, LSNs in order
//	flip|cut|truncate|set32|zero     damage the last segment (see ddtest.Mangle)
//	decode [salt=S] [key=K]          walk the last segment's records
//	recover [key=K] [after=N] [repair]  Open the segments, printing the replay
//	verify [key=K]                   Verify the segments
//
// Breaks it caught (each made a case's output differ): decodeRecord not
// checking the length field against maxStoredLen (oversize case read as
// a short record), scan treating a bad record before a later synced one
// as torn (the flip case cut the log instead of refusing it), and the
// encrypted scan skipping the key check (wrong-key case replayed nothing
// and said corruption).
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata/decode", func(t *testing.T, path string) {
		var segs []*ddSeg
		next := uint64(1)
		last := func(d *datadriven.TestData) *ddSeg {
			if len(segs) == 0 {
				d.Fatalf(t, "no segment yet")
			}
			return segs[len(segs)-1]
		}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "reset":
				segs, next = nil, 1
				return "no segments"
			case "segment":
				s := &ddSeg{first: uint64(ddtest.Int(t, d, "first", int(next))), salt: uint32(ddtest.Int(t, d, "salt", 1)), c: ddtest.Cipher(t, d)}
				h := segHeader{version: formatVersion, salt: s.salt, firstLSN: s.first}
				if s.c != nil {
					h.flags = flagEncrypted
				}
				s.b = encodeSegHeader(h, s.c)
				segs = append(segs, s)
				next = s.first
				return fmt.Sprintf("%s: header %d bytes", segmentName(s.first), len(s.b))
			case "append":
				s := last(d)
				synced := uint64(ddtest.Int(t, d, "synced", 0))
				var out strings.Builder
				for _, line := range strings.Split(d.Input, "\n") {
					off := len(s.b)
					s.b = appendRecord(s.b, s.salt, next, synced, []byte(line), s.c)
					fmt.Fprintf(&out, "lsn %d at %d: %d bytes\n", next, off, len(s.b)-off)
					next++
				}
				return out.String()
			case "decode":
				s := last(d)
				salt := s.salt
				if _, ok := d.Arg("salt"); ok {
					salt = uint32(ddtest.Int(t, d, "salt", 0))
				}
				return ddDecode(s.b, salt, ddtest.Cipher(t, d))
			case "recover", "verify":
				return ddRecover(t, d, segs)
			}
			s := last(d)
			b, what, ok := ddtest.Mangle(t, d, s.b)
			if !ok {
				d.Fatalf(t, "unknown command %s", d.Cmd)
			}
			s.b = b
			return what
		})
	})
}

type ddSeg struct {
	first uint64
	salt  uint32
	c     *crypt.Cipher
	b     []byte
}

// ddDecode walks one segment's bytes as scan does, without the recovery
// rules: the header, then each record until the first that does not
// decode.
func ddDecode(b []byte, salt uint32, c *crypt.Cipher) string {
	var out strings.Builder
	h, reason := decodeSegHeader(b)
	if reason != "" {
		return "header: " + reason
	}
	fmt.Fprintf(&out, "header: first lsn %d, salt %#x, encrypted %v", h.firstLSN, h.salt, h.flags&flagEncrypted != 0)
	if c != nil {
		fmt.Fprintf(&out, ", key check %v", checkKey(b, c))
	}
	out.WriteString("\n")
	for off := segHeaderSize; off < len(b); {
		r, st := decodeRecord(b[off:], salt)
		switch st {
		case recZero:
			if isZero(b[off:]) {
				fmt.Fprintf(&out, "%d: zeros to the end\n", off)
			} else {
				fmt.Fprintf(&out, "%d: zeroed record\n", off)
			}
			return out.String()
		case recShort:
			fmt.Fprintf(&out, "%d: truncated record (%d bytes left)\n", off, len(b)-off)
			return out.String()
		case recBad:
			fmt.Fprintf(&out, "%d: bad record checksum\n", off)
			return out.String()
		}
		payload := r.body
		if c != nil {
			p, err := c.Open(nil, r.body, b[off+4:off+recHeaderSize])
			if err != nil {
				fmt.Fprintf(&out, "%d: lsn %d fails authentication\n", off, r.lsn)
				return out.String()
			}
			payload = p
		}
		fmt.Fprintf(&out, "%d: lsn %d synced %d %q\n", off, r.lsn, r.synced, payload)
		off += r.size
	}
	out.WriteString("end of file\n")
	return out.String()
}

// ddRecover writes the segments into a fresh in-memory directory and
// runs Open (recover) or Verify on it.
func ddRecover(t *testing.T, d *datadriven.TestData, segs []*ddSeg) string {
	fs := vfs.NewMem()
	if err := fs.MkdirAll("w", 0o700); err != nil {
		t.Fatal(err)
	}
	for _, s := range segs {
		f, err := fs.Create(filepath.Join("w", segmentName(s.first)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(s.b); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	c := ddtest.Cipher(t, d)
	var out strings.Builder
	var rep Report
	var err error
	if d.Cmd == "verify" {
		rep, err = Verify(fs, "w", c, nil)
	} else {
		opts := Options{FS: fs, Dir: "w", Cipher: c, Repair: d.HasArg("repair"), NoPreallocate: true}
		var l *Log
		l, rep, err = Open(opts, uint64(ddtest.Int(t, d, "after", 0)), func(lsn uint64, payload []byte) error {
			fmt.Fprintf(&out, "replay %d %q\n", lsn, payload)
			return nil
		})
		if err == nil {
			if err := l.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	fmt.Fprintf(&out, "log %d..%d in %d segments", rep.FirstLSN, rep.LastLSN, rep.Segments)
	if rep.TornSegment != "" {
		fmt.Fprintf(&out, "; torn tail cut in %s at %d, %d bytes dropped", filepath.Base(rep.TornSegment), rep.TornOffset, rep.BytesDropped)
	}
	if rep.Repaired != nil {
		fmt.Fprintf(&out, "; repaired at %d, lost %d..%d, %d files kept", rep.Repaired.Offset, rep.LostFirst, rep.LostLast, len(rep.CutFiles))
	}
	out.WriteString("\n")
	out.WriteString(ddtest.Outcome(err,
		ddtest.Mark{Name: "ErrRepairable", Err: ErrRepairable},
		ddtest.Mark{Name: "ErrWrongKey", Err: ErrWrongKey},
		ddtest.Mark{Name: "ErrNoKey", Err: ErrNoKey},
		ddtest.Mark{Name: "ErrNotEncrypted", Err: ErrNotEncrypted}))
	return out.String() + "\n"
}
