package wasm_test

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/vmtest"
	"github.com/cubelinux/cube/vm/wasm"
)

// Indices of the probe's dispatch table (testdata/probe.wat).
const (
	fArgsLen = iota
	fArgsRead
	fOutputWrite
	fLog
	fSetError
	fDims
	fGet
	fPut
	fDel
	fRegionOpen
	fRegionNext
	fEdgesOpen
	fEdgesNext
	fCursorClose
	fLink
	fUnlink
	fWalk
	fShortestPath
	fNearby
	fWithinOpen
	fShortestPathHops
	fRegionColumns
	nFuncs
)

const (
	dataAt = 0x800  // where probe args put their data
	outAt  = 0x1000 // the memory the probe outputs after the statuses
	bad    = 0xfffffff0
)

type call struct {
	fn   int
	args []uint64
}

func probeArgs(data []byte, calls ...call) []byte {
	b := make([]byte, dataAt+len(data))
	binary.LittleEndian.PutUint32(b, uint32(len(calls)))
	for i, c := range calls {
		r := b[8+88*i:]
		binary.LittleEndian.PutUint32(r, uint32(c.fn))
		for k, a := range c.args {
			binary.LittleEndian.PutUint64(r[8+8*k:], a)
		}
	}
	copy(b[dataAt:], data)
	return b
}

func f64(v float64) uint64 { return math.Float64bits(v) }

// probe runs the calls and returns their statuses and memory [outAt, +1 KiB).
func probe(t *testing.T, p vm.Program, h vm.Host, data []byte, calls ...call) ([]uint32, []byte, error) {
	t.Helper()
	res, err := p.Run(ctx, h, probeArgs(data, calls...))
	if err != nil {
		return nil, nil, err
	}
	st := make([]uint32, len(calls))
	for i := range st {
		st[i] = binary.LittleEndian.Uint32(res.Output[4*i:])
	}
	return st, res.Output[4*len(calls):], nil
}

func TestStatuses(t *testing.T) {
	s := newSandbox(t)
	p := compile(t, s, "probe", vm.Limits{})
	h := vmtest.NewHost(2)
	_ = h.Put(ctx, []int32{1, 1}, []byte("abcdef"))
	_ = h.Put(ctx, []int32{1, 2}, []byte("xy"))
	_ = h.Link(ctx, vm.Edge{From: []int32{1, 1}, To: []int32{1, 2}, Label: "r", Weight: 2.5, Value: []byte("v")})
	_ = h.Link(ctx, vm.Edge{From: []int32{1, 2}, To: []int32{3, 3}, Label: "r", Weight: 1})
	// data: c11 at +0, c12 at +8, c33 at +16, c99 at +24, label "r" at +32, box max at +40
	data := append(coords(1, 1, 1, 2, 3, 3, 9, 9), 'r', 0, 0, 0, 0, 0, 0, 0)
	data = append(data, coords(5, 5)...)
	d := func(off int) uint64 { return uint64(dataAt + off) }
	o := func(off int) uint64 { return uint64(outAt + off) }
	for _, tc := range []struct {
		name  string
		calls []call
		want  []uint32
		check func(t *testing.T, mem []byte)
	}{
		{"get ok", []call{{fGet, []uint64{d(0), o(8), 64, o(0)}}}, []uint32{wasm.StatusOK}, func(t *testing.T, m []byte) {
			if n := binary.LittleEndian.Uint32(m); n != 6 || string(m[8:14]) != "abcdef" {
				t.Errorf("len %d value %q", n, m[8:14])
			}
		}},
		{"get not found", []call{{fGet, []uint64{d(24), o(8), 64, o(0)}}}, []uint32{wasm.StatusNotFound}, nil},
		{"get too small", []call{{fGet, []uint64{d(0), o(8), 3, o(0)}}}, []uint32{wasm.StatusTooSmall}, func(t *testing.T, m []byte) {
			if n := binary.LittleEndian.Uint32(m); n != 6 {
				t.Errorf("needed %d, want 6", n)
			}
		}},
		{"del", []call{{fDel, []uint64{d(8)}}, {fDel, []uint64{d(8)}}}, []uint32{wasm.StatusOK, wasm.StatusNotFound}, nil},
		{"region packed", []call{
			{fRegionOpen, []uint64{d(0), d(40), o(0)}},
			{fRegionNext, []uint64{1, o(16), 512, o(4), o(8)}},
			{fRegionNext, []uint64{1, o(16), 512, o(4), o(8)}},
			{fCursorClose, []uint64{1}},
			{fCursorClose, []uint64{1}},
		}, []uint32{0, 0, 0, 0, wasm.StatusBadArg}, func(t *testing.T, m []byte) {
			if h := binary.LittleEndian.Uint32(m); h != 1 {
				t.Errorf("cursor handle %d", h)
			}
			// second region_next: exhausted (n = 0); the first batch is
			// still in the buffer: (1,1) "abcdef" pad 2, (1,2) "xy" pad 2
			if n := binary.LittleEndian.Uint32(m[4:]); n != 0 {
				t.Errorf("second batch n = %d", n)
			}
			want := append(coords(1, 1, 6), "abcdef\x00\x00"...)
			want = append(append(want, coords(1, 2, 2)...), "xy\x00\x00"...)
			if got := m[16 : 16+len(want)]; string(got) != string(want) {
				t.Errorf("records\n got %x\nwant %x", got, want)
			}
		}},
		{"region too small", []call{
			{fRegionOpen, []uint64{d(0), d(40), o(0)}},
			{fRegionNext, []uint64{1, o(16), 10, o(4), o(8)}},
		}, []uint32{0, wasm.StatusTooSmall}, func(t *testing.T, m []byte) {
			if need := binary.LittleEndian.Uint32(m[8:]); need != 20 {
				t.Errorf("needed %d, want 20", need)
			}
		}},
		{"edges packed", []call{
			{fEdgesOpen, []uint64{d(0), 0, d(32), 1, o(0)}},
			{fEdgesNext, []uint64{1, o(16), 512, o(4), o(8)}},
		}, []uint32{0, 0}, func(t *testing.T, m []byte) {
			r := m[16:]
			if n, used := binary.LittleEndian.Uint32(m[4:]), binary.LittleEndian.Uint32(m[8:]); n != 1 || used != 40 {
				t.Fatalf("n %d bytes %d", n, used)
			}
			if w := math.Float64frombits(binary.LittleEndian.Uint64(r)); w != 2.5 ||
				binary.LittleEndian.Uint32(r[8:]) != 1 || binary.LittleEndian.Uint32(r[12:]) != 1 ||
				string(r[16:32]) != string(coords(1, 1, 1, 2)) || string(r[32:34]) != "rv" {
				t.Errorf("edge record %x", r[:40])
			}
		}},
		{"bad args", []call{
			{fEdgesOpen, []uint64{d(0), 3, d(32), 1, o(0)}},
			{fRegionNext, []uint64{9, o(16), 64, o(4), o(8)}},
			{fWalk, []uint64{d(0), 2, 1, 0, d(32), 0, 0, o(16), 64, o(0)}},
			{fLink, []uint64{d(0), d(8), d(32), 1, f64(math.NaN()), 0, 0}},
		}, []uint32{wasm.StatusBadArg, wasm.StatusBadArg, wasm.StatusBadArg, wasm.StatusBadArg}, nil},
		{"walk", []call{{fWalk, []uint64{d(0), 0, 2, 0, d(32), 1, 0, o(16), 64, o(0)}}}, []uint32{0}, func(t *testing.T, m []byte) {
			if need := binary.LittleEndian.Uint32(m); need != 3*20 {
				t.Fatalf("needed %d", need)
			}
			want := append(coords(0, 1, 1, 1, 1), coords(1, 1, 2, 1, 1)...)
			want = append(want, coords(2, 3, 3, 1, 2)...)
			if string(m[16:76]) != string(want) {
				t.Errorf("steps\n got %x\nwant %x", m[16:76], want)
			}
		}},
		{"walk too small", []call{{fWalk, []uint64{d(0), 0, 2, 0, 0, 0, 0, o(16), 8, o(0)}}}, []uint32{wasm.StatusTooSmall}, nil},
		{"path", []call{{fShortestPath, []uint64{d(0), d(16), 0, 0, 0, o(8), o(16), 64, o(0)}}}, []uint32{0}, func(t *testing.T, m []byte) {
			if w := math.Float64frombits(binary.LittleEndian.Uint64(m[8:])); w != 3.5 || binary.LittleEndian.Uint32(m) != 24 {
				t.Errorf("weight %v needed %d", w, binary.LittleEndian.Uint32(m))
			}
			if string(m[16:40]) != string(coords(1, 1, 1, 2, 3, 3)) {
				t.Errorf("path %x", m[16:40])
			}
		}},
		{"no path", []call{{fShortestPath, []uint64{d(16), d(0), 0, 0, 0, o(8), o(16), 64, o(0)}}}, []uint32{wasm.StatusNotFound}, nil},
		{"link unlink", []call{
			{fLink, []uint64{d(16), d(24), d(32), 1, f64(1), d(0), 4}},
			{fUnlink, []uint64{d(16), d(24), d(32), 1}},
			{fUnlink, []uint64{d(16), d(24), d(32), 1}},
		}, []uint32{0, 0, wasm.StatusNotFound}, nil},
		{"args dims", []call{{fDims, nil}, {fArgsRead, []uint64{o(0), 4}}}, []uint32{2, wasm.StatusTooSmall}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tx := h.Begin()
			defer tx.Rollback()
			st, mem, err := probe(t, p, tx, data, tc.calls...)
			if err != nil {
				t.Fatal(err)
			}
			for i := range st {
				if st[i] != tc.want[i] {
					t.Errorf("call %d: status %d, want %d", i, st[i], tc.want[i])
				}
			}
			if tc.check != nil {
				tc.check(t, mem)
			}
		})
	}

	// Host errors are status 7, logged.
	h.SetError(errBoom)
	res, err := p.Run(ctx, h, probeArgs(data, call{fGet, []uint64{d(0), o(8), 64, o(0)}}))
	h.SetError(nil)
	if err != nil || binary.LittleEndian.Uint32(res.Output) != wasm.StatusError || !strings.Contains(strings.Join(res.Logs, "\n"), "boom") {
		t.Fatalf("host error: %v %x %q", err, res.Output[:4], res.Logs)
	}
}

type boom struct{}

func (boom) Error() string { return "boom" }

var errBoom error = boom{}

// TestBadPointers passes an out-of-bounds pointer in each pointer argument
// of each function: every one must trap with a message naming the function,
// and the sandbox must live on.
func TestBadPointers(t *testing.T) {
	s := newSandbox(t)
	p := compile(t, s, "probe", vm.Limits{})
	h := vmtest.NewHost(1)
	ptrs := map[int][]int{ // pointer argument positions
		fArgsRead: {0}, fOutputWrite: {0}, fLog: {0}, fSetError: {0},
		fGet: {0, 1, 3}, fPut: {0, 1}, fDel: {0}, fRegionOpen: {0, 1, 2},
		fEdgesOpen: {0, 2, 4}, fLink: {0, 1, 2, 5}, fUnlink: {0, 1, 2},
		fWalk: {0, 4, 7, 9}, fShortestPath: {0, 1, 2, 5, 6, 8},
		fNearby: {0, 3, 5, 6}, fWithinOpen: {0, 2}, fShortestPathHops: {0, 1, 2, 6, 7, 9},
		fRegionColumns: {1, 2, 3, 6, 7},
	}
	for fn, positions := range ptrs {
		for _, pos := range positions {
			args := []uint64{dataAt, dataAt, dataAt, 8, dataAt, dataAt, 8, dataAt, 8, dataAt}
			if fn == fArgsRead {
				args[1] = 1 << 20 // cap large enough to copy
			}
			args[pos] = bad
			_, _, err := probe(t, p, h, make([]byte, 64), call{fn, args})
			e := wantKind(t, err, vm.KindTrap)
			if !strings.Contains(e.Msg, "cube_v1.") || !strings.Contains(e.Msg, "outside guest memory") {
				t.Errorf("fn %d arg %d: message %q", fn, pos, e.Msg)
			}
		}
	}
	checkAlive(t, s)
}

// FuzzHostCallArgs calls host functions with arbitrary arguments through a
// real module. Any outcome but a host panic (which would kill the test
// process) or an untyped error is fine.
func FuzzHostCallArgs(f *testing.F) {
	f.Add(uint8(fGet), uint64(dataAt), uint64(outAt), uint64(64), uint64(outAt), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0))
	f.Add(uint8(fWalk), uint64(dataAt), uint64(1), uint64(3), uint64(2), uint64(bad), uint64(5), uint64(0), uint64(outAt), uint64(1<<31), uint64(outAt))
	f.Add(uint8(fRegionNext), uint64(1), uint64(0), uint64(0xffffffff), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0))
	f.Add(uint8(fLink), uint64(dataAt), uint64(dataAt), uint64(0), uint64(0xffffffff), uint64(0), uint64(0), uint64(0x10000), uint64(0), uint64(0), uint64(0))
	f.Add(uint8(fNearby), uint64(dataAt), uint64(0x7fffffff), f64(math.Inf(1)), uint64(outAt), uint64(8), uint64(outAt), uint64(outAt+4), uint64(0), uint64(0), uint64(0))
	f.Add(uint8(fNearby), uint64(dataAt), uint64(3), f64(math.NaN()), uint64(bad), uint64(0xffffffff), uint64(outAt), uint64(outAt), uint64(0), uint64(0), uint64(0))
	f.Add(uint8(fWithinOpen), uint64(dataAt), f64(1e300), uint64(outAt), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0))
	f.Add(uint8(fRegionColumns), uint64(1), uint64(outAt), uint64(outAt+0x100), uint64(outAt+0x200), uint64(8), uint64(64), uint64(outAt), uint64(outAt+4), uint64(0), uint64(0))
	f.Add(uint8(fRegionColumns), uint64(1), uint64(0), uint64(0), uint64(0), uint64(0x40000000), uint64(0xffffffff), uint64(0), uint64(0), uint64(0), uint64(0))
	f.Add(uint8(fRegionColumns), uint64(1), uint64(outAt), uint64(outAt), uint64(outAt), uint64(0), uint64(0), uint64(outAt), uint64(outAt), uint64(0), uint64(0))
	f.Add(uint8(fShortestPathHops), uint64(dataAt), uint64(dataAt), uint64(0), uint64(0), uint64(2), uint64(0x80000000), uint64(outAt), uint64(outAt), uint64(64), uint64(outAt))
	s := newSandbox(f)
	p := compile(f, s, "probe", vm.Limits{})
	h := vmtest.NewHost(2)
	_ = h.Put(ctx, []int32{0, 0}, []byte("seed"))
	_ = h.Link(ctx, vm.Edge{From: []int32{0, 0}, To: []int32{0, 0}})
	f.Fuzz(func(t *testing.T, fn uint8, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9 uint64) {
		tx := h.Begin()
		defer tx.Rollback()
		// Open a cursor first so that cursor handle 1 exists.
		calls := []call{
			{fRegionOpen, []uint64{dataAt, dataAt + 8, outAt}},
			{int(fn) % nFuncs, []uint64{a0, a1, a2, a3, a4, a5, a6, a7, a8, a9}},
		}
		_, err := p.Run(ctx, tx, probeArgs(coords(-5, -5, 5, 5), calls...))
		if err != nil && vm.KindOf(err) == 0 {
			t.Fatalf("untyped error: %v", err)
		}
	})
}
