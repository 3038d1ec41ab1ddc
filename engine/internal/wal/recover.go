package wal

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/cubelinux/cube/engine/internal/base"
	"github.com/cubelinux/cube/engine/internal/crypt"
	"github.com/cubelinux/cube/engine/vfs"
)

// Report describes what Open or Verify found.
type Report struct {
	// FirstLSN and LastLSN bound the valid records on disk (0, 0 when the
	// log holds none).
	FirstLSN, LastLSN uint64
	// Segments is the number of segment files read.
	Segments int
	// TornSegment is the segment whose torn tail was (or, for Verify,
	// would be) cut at TornOffset, dropping BytesDropped bytes. Empty when
	// the log ended cleanly.
	TornSegment  string
	TornOffset   int64
	BytesDropped int64
	// Repaired is the corruption that Options.Repair cut the log at.
	// LostFirst..LostLast are the LSNs lost with it (LostLast is the
	// highest LSN found in the cut bytes; 0 if none could be read).
	// CutFiles are the copies of the cut bytes.
	Repaired            *base.CorruptionError
	LostFirst, LostLast uint64
	CutFiles            []string
}

// scanned is the state of one segment after a scan.
type scanned struct {
	name string
	path string
	hdr  segHeader
	end  int64 // end of the last valid record
}

// scanState is the result of reading a whole log.
type scanState struct {
	segs    []scanned
	rep     Report
	next    uint64 // LSN after the last valid record
	corrupt *base.CorruptionError
	cutSeg  int       // index into segs of the corrupt segment
	cutOff  int64     // where it is cut
	rest    []scanned // segments after the corrupt one
	tornEnd int64     // end of the torn bytes in the last segment
}

// scan reads every segment of dir in order and calls replay for each valid
// record with LSN > after. It changes nothing on disk.
func scan(fs vfs.FS, dir string, c *crypt.Cipher, after uint64, replay func(uint64, []byte) error) (*scanState, error) {
	names, err := fs.List(dir)
	if err != nil {
		return nil, fmt.Errorf("wal: list %s: %w", dir, err)
	}
	st := &scanState{cutSeg: -1}
	var files []scanned
	for _, n := range names {
		if first, ok := parseSegmentName(n); ok {
			files = append(files, scanned{name: n, path: filepath.Join(dir, n), hdr: segHeader{firstLSN: first}})
		}
	}
	st.rep.Segments = len(files)
	var buf, plain []byte
	expected := uint64(0)
	for i := range files {
		sf := &files[i]
		last := i == len(files)-1
		buf, err = readFile(fs, sf.path, buf)
		if err != nil {
			return nil, err
		}
		nameLSN := sf.hdr.firstLSN
		corrupt := func(off int64, format string, args ...any) {
			st.corrupt = &base.CorruptionError{File: sf.path, Offset: off, Reason: fmt.Sprintf(format, args...)}
			st.cutSeg, st.cutOff = len(st.segs), off
			st.segs = append(st.segs, *sf)
			if expected == 0 {
				expected = nameLSN
			}
			st.rest = files[i+1:]
			st.lostAfter(fs, files[i+1:], buf, expected)
		}
		h, reason := decodeSegHeader(buf)
		if reason != "" {
			corrupt(0, "%s", reason)
			break
		}
		if h.flags&flagEncrypted != 0 && c == nil {
			return nil, fmt.Errorf("%w (%s)", ErrNoKey, sf.path)
		}
		if h.flags&flagEncrypted == 0 && c != nil {
			return nil, fmt.Errorf("%w (%s)", ErrNotEncrypted, sf.path)
		}
		if c != nil && !checkKey(buf, c) {
			return nil, fmt.Errorf("%w (key check of %s)", ErrWrongKey, sf.path)
		}
		sf.hdr = h
		if h.firstLSN != nameLSN {
			corrupt(0, "header first LSN %d does not match the file name", h.firstLSN)
			break
		}
		if expected != 0 && h.firstLSN != expected {
			corrupt(0, "LSN gap: segment starts at %d, expected %d", h.firstLSN, expected)
			break
		}
		expected = h.firstLSN
		off := segHeaderSize
		bad, tampered := "", false
		for off < len(buf) {
			r, rs := decodeRecord(buf[off:], h.salt)
			if rs != recOK {
				if rs == recZero && isZero(buf[off:]) {
					break // clean end: unwritten or preallocated zeros
				}
				bad = map[recStatus]string{recZero: "zeroed record", recShort: "truncated record", recBad: "bad record checksum"}[rs]
				break
			}
			if r.lsn != expected {
				bad = fmt.Sprintf("record LSN %d, expected %d", r.lsn, expected)
				break
			}
			payload := r.body
			if c != nil {
				plain, err = c.Open(plain[:0], r.body, buf[off+4:off+recHeaderSize])
				if err != nil {
					// The header's key check passed, so the key is right
					// and a record with a valid checksum that fails to
					// open was changed on purpose.
					bad, tampered = "record fails authentication (tampered)", true
					break
				}
				payload = plain
			}
			if st.rep.FirstLSN == 0 {
				st.rep.FirstLSN = r.lsn
			}
			st.rep.LastLSN = r.lsn
			if r.lsn > after && replay != nil {
				if err := replay(r.lsn, payload); err != nil {
					// A payload the caller cannot decode is damage only
					// it can see; this is where its bytes are.
					if base.IsCorruption(err) {
						return nil, base.Locate(err, sf.path, int64(off), fmt.Sprintf("record %d", r.lsn))
					}
					return nil, fmt.Errorf("wal: replay lsn %d: %w", r.lsn, err)
				}
			}
			expected++
			off += r.size
		}
		sf.end = int64(off)
		if bad == "" {
			st.segs = append(st.segs, *sf)
			continue
		}
		// A bad record. In the last segment it is a torn write unless a
		// later record validates and says the bad spot had been synced
		// when it was appended; anywhere else it is corruption.
		later, loff := findValid(buf, off+1, h.salt, expected, h.firstLSN)
		// Records appended before one sync say nothing of each other; a
		// record appended after that sync does, so look past them.
		for loff >= 0 && later.synced < expected {
			later, loff = findValid(buf, loff+later.size, h.salt, later.lsn+1, h.firstLSN)
		}
		if tampered {
			// A crash cannot make a checksum valid: not a torn write.
			corrupt(int64(off), "%s", bad)
			break
		}
		if !last {
			corrupt(int64(off), "%s (segment is not the last)", bad)
			break
		}
		if loff >= 0 && later.synced >= expected {
			corrupt(int64(off), "%s, but record %d at offset %d validates and was appended after LSN %d was synced", bad, later.lsn, loff, later.synced)
			break
		}
		st.segs = append(st.segs, *sf)
		st.tornEnd = int64(lastNonZero(buf))
		st.rep.TornSegment = sf.path
		st.rep.TornOffset = int64(off)
		st.rep.BytesDropped = st.tornEnd - int64(off)
	}
	if expected == 0 {
		expected = after + 1
	}
	st.next = expected
	if st.corrupt != nil {
		st.rep.LostFirst = expected
	}
	return st, nil
}

// lostAfter finds the highest LSN in the bytes a repair would cut: the rest
// of the corrupt segment and every later segment.
func (st *scanState) lostAfter(fs vfs.FS, files []scanned, buf []byte, expected uint64) {
	max := uint64(0)
	if h, reason := decodeSegHeader(buf); reason == "" {
		for off := segHeaderSize; ; {
			r, o := findValid(buf, off, h.salt, expected, h.firstLSN)
			if o < 0 {
				break
			}
			max = r.lsn
			off = o + r.size
		}
	}
	var tmp []byte
	for i := range files {
		data, err := readFile(fs, files[i].path, tmp)
		if err != nil {
			continue
		}
		tmp = data
		h, reason := decodeSegHeader(data)
		if reason != "" {
			continue
		}
		for off := segHeaderSize; ; {
			r, o := findValid(data, off, h.salt, 1, h.firstLSN)
			if o < 0 {
				break
			}
			if r.lsn > max {
				max = r.lsn
			}
			off = o + r.size
		}
	}
	st.rep.LostLast = max
}

func readFile(fs vfs.FS, path string, buf []byte) ([]byte, error) {
	f, err := fs.Open(path)
	if err != nil {
		return buf, fmt.Errorf("wal: open %s: %w", path, err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return buf, fmt.Errorf("wal: size of %s: %w", path, err)
	}
	if int64(cap(buf)) < size {
		buf = make([]byte, size)
	}
	buf = buf[:size]
	n, err := f.ReadAt(buf, 0)
	if err != nil && !(errors.Is(err, io.EOF) && int64(n) == size) {
		return buf, fmt.Errorf("wal: read %s: %w", path, err)
	}
	return buf, nil
}
