package wasm

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/tetratelabs/wazero/api"

	"github.com/cubelinux/cube/vm"
)

// ModuleName is the import module of ABI v1. The version is part of the
// name, so a module built for another version fails at Compile with
// KindABIVersion instead of misbehaving at run time.
const ModuleName = "cube_v1"

// Statuses returned by every ABI function (docs/ABI.md).
const (
	StatusOK       = 0 // done
	StatusNotFound = 1 // no value, edge or path
	StatusTooSmall = 2 // the buffer is too small; the size needed was written to the out-pointer
	StatusLimit    = 3 // a limit was reached; the run has failed, return promptly
	StatusReadOnly = 4 // a write in a read-only run; the run has failed
	StatusAborted  = 5 // the run was cancelled or timed out
	StatusBadArg   = 6 // a malformed argument (direction, order, cursor handle, ...)
	StatusError    = 7 // the store reported an error (details in the run's log)
)

const (
	maxCursors  = 256     // open cursors per run
	maxLabel    = 4 << 10 // bytes in an edge label
	maxErrorMsg = 4 << 10 // bytes kept from set_error
)

// runState is what the host functions of one run share. It is the
// context passed to the guest call (see runctx.go), so a host function
// finds it with a type assertion on its ctx: cheaper than ctx.Value, the
// cost of which was most of what a host call adds to an empty wazero host
// function. Instances need no back-pointer. A program pools its
// runStates; endRun says what one keeps from run to run (buffers, never
// data).
type runState struct {
	stopCtx
	host    vm.Host
	dims    int
	args    []byte
	g       vm.Guard // by value: one allocation less per run
	errMsg  string
	hasErr  bool
	cursors []*cursor // handle h is cursors[h-1]; nil = free
	scratch [8]int32
	cache   packCache
	keyBuf  []byte    // the cache key of the current call (see key)
	stack   [1]uint64 // run's result
	outside bool      // a cube_v1 call found no host (Compile's trial)
}

// packCache keeps the last packed walk or path, so a guest that retries
// with a bigger buffer after StatusTooSmall does not pay for it twice.
// Every write clears it.
type packCache struct {
	key    string
	data   []byte
	status uint64
	weight float64
	count  int // records in data (nearby)
}

type cursor struct {
	points vm.Cursor[vm.Point]
	edges  vm.Cursor[vm.Edge]
	fill   vm.PointFiller  // points, when it packs records itself
	cols   vm.ColumnFiller // points, when it copies columns itself
	pp     *vm.Point       // a record that did not fit the last buffer
	pe     *vm.Edge
}

func (rs *runState) closeCursors() {
	for i, c := range rs.cursors {
		if c != nil {
			c.close()
			rs.cursors[i] = nil
		}
	}
}

func (c *cursor) close() {
	if c.points != nil {
		c.points.Close()
	}
	if c.edges != nil {
		c.edges.Close()
	}
}

type stateKey struct{}

// runOf returns the run whose context ctx is or derives from, or nil.
func runOf(ctx context.Context) *runState {
	if rs, ok := ctx.(*runState); ok {
		return rs
	}
	return derivedRun(ctx)
}

//go:noinline // keeps runOf within the inlining budget
func derivedRun(ctx context.Context) *runState {
	rs, _ := ctx.Value(stateKey{}).(*runState)
	return rs
}

// enter starts every ABI call: it finds the run, ends the guest if the run
// has already failed, and counts the call. A nil result means stack[0]
// holds the status to return.
func enter(ctx context.Context, stack []uint64) *runState {
	rs := runOf(ctx)
	if rs == nil || rs.host == nil {
		// Outside a run: Compile's trial instantiation, whose _initialize
		// or start function has no store to talk to.
		if rs != nil {
			rs.outside = true
		}
		stack[0] = StatusError
		return nil
	}
	if e := rs.g.Err(); e != nil {
		panic(e) // the run failed earlier and the guest went on: stop it
	}
	if e := rs.g.Call(); e != nil {
		stack[0] = StatusLimit
		return nil
	}
	return rs
}

// write counts a write against the limits; ok=false means stack[0] holds
// the status.
func (rs *runState) write(op string, stack []uint64) bool {
	if e := rs.g.Write(op); e != nil {
		stack[0] = statusOf(e.Kind)
		return false
	}
	rs.cache = packCache{}
	return true
}

// removed is the status of a delete (del, unlink): whether there was
// something to remove, or the host's error.
func (rs *runState) removed(fn string, existed bool, err error) uint64 {
	switch {
	case err != nil:
		return rs.hostErr(fn, err)
	case !existed:
		return StatusNotFound
	}
	return StatusOK
}

func statusOf(k vm.ErrorKind) uint64 {
	if k == vm.KindReadOnly {
		return StatusReadOnly
	}
	return StatusLimit
}

// hostErr turns a Host error into a status. A read-only host fails the run
// as the Guard would have; cancellation becomes StatusAborted; anything else
// is logged and reported as StatusError, for the guest to handle.
func (rs *runState) hostErr(fn string, err error) uint64 {
	switch {
	case errors.Is(err, vm.ErrReadOnly):
		rs.g.Fail(&vm.Error{Kind: vm.KindReadOnly, Msg: fn + " in a read-only program", Err: err})
		return StatusReadOnly
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return StatusAborted
	}
	rs.g.Log(fmt.Sprintf("%s.%s: %v", ModuleName, fn, err))
	return StatusError
}

func (rs *runState) newCoord(m api.Memory, fn, what string, ptr uint32) []int32 {
	return coord(m, fn, what, ptr, make([]int32, rs.dims))
}

func label(m api.Memory, fn string, ptr, n uint32) (string, bool) {
	if n > maxLabel {
		return "", false
	}
	return string(view(m, fn, "label", ptr, n)), true
}

func direction(v uint32) (vm.Direction, bool) {
	return vm.Direction(v), v <= uint32(vm.Both)
}

func u32(v uint64) uint32 { return uint32(v) }

type hostFunc struct {
	name    string
	params  []api.ValueType
	results []api.ValueType
	fn      api.GoModuleFunc
}

const (
	i32 = api.ValueTypeI32
	f64 = api.ValueTypeF64
)

func i32s(n int) []api.ValueType {
	p := make([]api.ValueType, n)
	for i := range p {
		p[i] = i32
	}
	return p
}

// call makes an ABI function body a wazero host function that enters the
// run first (see enter): the body runs only in a run that has not failed,
// with the call counted.
func call(body func(ctx context.Context, rs *runState, m api.Module, s []uint64)) api.GoModuleFunc {
	return func(ctx context.Context, m api.Module, s []uint64) {
		if rs := enter(ctx, s); rs != nil {
			body(ctx, rs, m, s)
		}
	}
}

// abiFuncs is ABI v1. docs/ABI.md documents each function; keep the two in
// step.
var abiFuncs = []hostFunc{
	{"args_len", nil, i32s(1), call(func(_ context.Context, rs *runState, _ api.Module, s []uint64) {
		s[0] = uint64(len(rs.args))
	})},
	{"args_read", i32s(2), i32s(1), call(func(ctx context.Context, rs *runState, m api.Module, s []uint64) {
		if u32(s[1]) < uint32(len(rs.args)) {
			s[0] = StatusTooSmall
			return
		}
		copy(view(memory(m), "args_read", "buffer", u32(s[0]), uint32(len(rs.args))), rs.args)
		s[0] = StatusOK
	})},
	{"output_write", i32s(2), i32s(1), call(func(ctx context.Context, rs *runState, m api.Module, s []uint64) {
		if e := rs.g.Output(view(memory(m), "output_write", "data", u32(s[0]), u32(s[1]))); e != nil {
			s[0] = StatusLimit
			return
		}
		s[0] = StatusOK
	})},
	{"log", i32s(2), i32s(1), call(func(ctx context.Context, rs *runState, m api.Module, s []uint64) {
		rs.g.Log(string(view(memory(m), "log", "message", u32(s[0]), u32(s[1]))))
		s[0] = StatusOK
	})},
	{"set_error", i32s(2), i32s(1), call(func(ctx context.Context, rs *runState, m api.Module, s []uint64) {
		b := view(memory(m), "set_error", "message", u32(s[0]), u32(s[1]))
		if len(b) > maxErrorMsg {
			b = b[:maxErrorMsg]
		}
		rs.errMsg, rs.hasErr = string(b), true
		s[0] = StatusOK
	})},
	{"dims", nil, i32s(1), call(func(_ context.Context, rs *runState, _ api.Module, s []uint64) {
		s[0] = uint64(rs.dims)
	})},
	{"get", i32s(4), i32s(1), call(hostGet)},
	{"put", i32s(3), i32s(1), call(func(ctx context.Context, rs *runState, m api.Module, s []uint64) {
		mem := memory(m)
		c := rs.newCoord(mem, "put", "coordinate", u32(s[0]))
		v := bytes.Clone(view(mem, "put", "value", u32(s[1]), u32(s[2])))
		if !rs.write("put", s) {
			return
		}
		if err := rs.host.Put(ctx, c, v); err != nil {
			s[0] = rs.hostErr("put", err)
			return
		}
		s[0] = StatusOK
	})},
	{"del", i32s(1), i32s(1), call(func(ctx context.Context, rs *runState, m api.Module, s []uint64) {
		c := rs.newCoord(memory(m), "del", "coordinate", u32(s[0]))
		if !rs.write("del", s) {
			return
		}
		existed, err := rs.host.Delete(ctx, c)
		s[0] = rs.removed("del", existed, err)
	})},
	{"region_open", i32s(3), i32s(1), call(func(ctx context.Context, rs *runState, m api.Module, s []uint64) {
		mem := memory(m)
		lo := rs.newCoord(mem, "region_open", "min", u32(s[0]))
		hi := rs.newCoord(mem, "region_open", "max", u32(s[1]))
		view(mem, "region_open", "cursor out-pointer", u32(s[2]), 4)
		for i := range lo {
			if lo[i] > hi[i] {
				// An inverted box is the guest's mistake, and every host
				// must report it the same way: here, before any host sees it.
				s[0] = StatusBadArg
				return
			}
		}
		rs.open(mem, u32(s[2]), pointsCursor(rs.host.Region(ctx, lo, hi)), s)
	})},
	{"region_next", i32s(5), i32s(1), call(hostRegionNext)},
	{"edges_open", i32s(5), i32s(1), call(func(ctx context.Context, rs *runState, m api.Module, s []uint64) {
		mem := memory(m)
		c := rs.newCoord(mem, "edges_open", "coordinate", u32(s[0]))
		dir, ok1 := direction(u32(s[1]))
		lab, ok2 := label(mem, "edges_open", u32(s[2]), u32(s[3]))
		view(mem, "edges_open", "cursor out-pointer", u32(s[4]), 4)
		if !ok1 || !ok2 {
			s[0] = StatusBadArg
			return
		}
		rs.open(mem, u32(s[4]), &cursor{edges: rs.host.Edges(ctx, c, dir, lab)}, s)
	})},
	{"edges_next", i32s(5), i32s(1), call(hostEdgesNext)},
	{"cursor_close", i32s(1), i32s(1), call(func(ctx context.Context, rs *runState, _ api.Module, s []uint64) {
		h := u32(s[0])
		if h == 0 || h > uint32(len(rs.cursors)) || rs.cursors[h-1] == nil {
			s[0] = StatusBadArg
			return
		}
		rs.cursors[h-1].close()
		rs.cursors[h-1] = nil
		s[0] = StatusOK
	})},
	{"link", append(i32s(4), f64, i32, i32), i32s(1), call(func(ctx context.Context, rs *runState, m api.Module, s []uint64) {
		mem := memory(m)
		e := vm.Edge{
			From:   rs.newCoord(mem, "link", "from", u32(s[0])),
			To:     rs.newCoord(mem, "link", "to", u32(s[1])),
			Weight: api.DecodeF64(s[4]),
			Value:  bytes.Clone(view(mem, "link", "value", u32(s[5]), u32(s[6]))),
		}
		lab, ok := label(mem, "link", u32(s[2]), u32(s[3]))
		if !ok || math.IsNaN(e.Weight) {
			s[0] = StatusBadArg
			return
		}
		e.Label = lab
		if !rs.write("link", s) {
			return
		}
		if err := rs.host.Link(ctx, e); err != nil {
			s[0] = rs.hostErr("link", err)
			return
		}
		s[0] = StatusOK
	})},
	{"unlink", i32s(4), i32s(1), call(func(ctx context.Context, rs *runState, m api.Module, s []uint64) {
		mem := memory(m)
		from := rs.newCoord(mem, "unlink", "from", u32(s[0]))
		to := rs.newCoord(mem, "unlink", "to", u32(s[1]))
		lab, ok := label(mem, "unlink", u32(s[2]), u32(s[3]))
		if !ok {
			s[0] = StatusBadArg
			return
		}
		if !rs.write("unlink", s) {
			return
		}
		existed, err := rs.host.Unlink(ctx, from, to, lab)
		s[0] = rs.removed("unlink", existed, err)
	})},
	{"walk", i32s(10), i32s(1), call(hostWalk)},
	{"shortest_path", i32s(9), i32s(1), call(hostShortestPath)},
	// Added to v1 later (docs/ABI.md §9: v1 only grows); modules that do
	// not import them are unaffected.
	{"nearby", []api.ValueType{i32, i32, f64, i32, i32, i32, i32}, i32s(1), call(hostNearby)},
	{"within_open", []api.ValueType{i32, f64, i32}, i32s(1), call(hostWithinOpen)},
	{"shortest_path_hops", i32s(10), i32s(1), call(hostShortestPathHops)},
	{"region_columns", i32s(8), i32s(1), call(hostRegionColumns)},
}

func hostGet(ctx context.Context, rs *runState, m api.Module, s []uint64) {
	mem := memory(m)
	c := coord(mem, "get", "coordinate", u32(s[0]), rs.scratch[:rs.dims])
	lenOut := view(mem, "get", "length out-pointer", u32(s[3]), 4)
	buf := view(mem, "get", "value buffer", u32(s[1]), u32(s[2]))
	v, ok, err := rs.host.Get(ctx, c)
	switch {
	case err != nil:
		s[0] = rs.hostErr("get", err)
	case !ok:
		s[0] = StatusNotFound
	default:
		binary.LittleEndian.PutUint32(lenOut, uint32(len(v)))
		if len(v) > len(buf) {
			s[0] = StatusTooSmall
			return
		}
		copy(buf, v)
		s[0] = StatusOK
	}
}

// open registers a cursor and writes its handle (1-based) to out.
func (rs *runState) open(mem api.Memory, out uint32, c *cursor, s []uint64) {
	h := -1
	for i, x := range rs.cursors {
		if x == nil {
			h = i
			break
		}
	}
	if h < 0 {
		if len(rs.cursors) >= maxCursors {
			c.close()
			rs.g.Fail(&vm.Error{Kind: vm.KindHostCallLimit, Msg: fmt.Sprintf("more than %d open cursors", maxCursors)})
			s[0] = StatusLimit
			return
		}
		rs.cursors = append(rs.cursors, nil)
		h = len(rs.cursors) - 1
	}
	rs.cursors[h] = c
	putU32(mem, "open", "cursor out-pointer", out, uint32(h+1))
	s[0] = StatusOK
}

// next validates the arguments common to region_next and edges_next:
// (cursor, buf, cap, n_out, bytes_out). It returns the buffer and the out
// slots, or nil when stack[0] holds the status.
func (rs *runState) next(mem api.Memory, fn string, s []uint64, wantPoints bool) (*cursor, []byte, []byte, []byte) {
	nOut := view(mem, fn, "count out-pointer", u32(s[3]), 4)
	bOut := view(mem, fn, "bytes out-pointer", u32(s[4]), 4)
	buf := view(mem, fn, "buffer", u32(s[1]), u32(s[2]))
	c := rs.cursorOf(u32(s[0]), wantPoints)
	if c == nil {
		s[0] = StatusBadArg
		return nil, nil, nil, nil
	}
	return c, buf, nOut, bOut
}

// cursorOf returns the open cursor with handle h, or nil when there is
// none or it is of the other kind (points or edges).
func (rs *runState) cursorOf(h uint32, wantPoints bool) *cursor {
	if h == 0 || h > uint32(len(rs.cursors)) || rs.cursors[h-1] == nil {
		return nil
	}
	c := rs.cursors[h-1]
	if (c.points != nil) != wantPoints {
		return nil
	}
	return c
}

// pointsCursor is the cursor of a region or radius scan, with the
// host's bulk paths when its cursor has them.
func pointsCursor(p vm.Cursor[vm.Point]) *cursor {
	c := &cursor{points: p}
	c.fill, _ = p.(vm.PointFiller)
	c.cols, _ = p.(vm.ColumnFiller)
	return c
}

func align(n, a int) int { return (n + a - 1) &^ (a - 1) }

// hostRegionNext packs as many point records as fit:
//
//	dims × i32 coordinate | u32 value length | value | pad to 4
func hostRegionNext(ctx context.Context, rs *runState, m api.Module, s []uint64) {
	c, buf, nOut, bOut := rs.next(memory(m), "region_next", s, true)
	if c == nil {
		return
	}
	if c.fill != nil && c.pp == nil {
		n, used, need := c.fill.FillPoints(buf)
		rs.packed("region_next", s, nOut, bOut, n, used, need, c.points.Err)
		return
	}
	n, used, need := packRecords(buf, &c.pp, c.points.Next,
		func(p vm.Point) int { return vm.PointRecordSize(len(p.Coord), len(p.Value)) },
		func(dst []byte, p vm.Point) int { return vm.PackPoint(dst, p.Coord, p.Value) },
		func(p vm.Point) vm.Point { return vm.Point{Coord: slices.Clone(p.Coord), Value: bytes.Clone(p.Value)} })
	rs.packed("region_next", s, nOut, bOut, n, used, need, c.points.Err)
}

// hostEdgesNext packs as many edge records as fit:
//
//	f64 weight | u32 label length | u32 value length | from | to | label | value | pad to 8
func hostEdgesNext(ctx context.Context, rs *runState, m api.Module, s []uint64) {
	c, buf, nOut, bOut := rs.next(memory(m), "edges_next", s, false)
	if c == nil {
		return
	}
	cw := 4 * rs.dims
	head := 16 + 2*cw
	n, used, need := packRecords(buf, &c.pe, c.edges.Next,
		func(e vm.Edge) int { return align(head+len(e.Label)+len(e.Value), 8) },
		func(dst []byte, e vm.Edge) int {
			size := align(head+len(e.Label)+len(e.Value), 8)
			r := dst[:size]
			binary.LittleEndian.PutUint64(r, math.Float64bits(e.Weight))
			binary.LittleEndian.PutUint32(r[8:], uint32(len(e.Label)))
			binary.LittleEndian.PutUint32(r[12:], uint32(len(e.Value)))
			putCoord(r[16:], e.From)
			putCoord(r[16+cw:], e.To)
			copy(r[head:], e.Label)
			copy(r[head+len(e.Label):], e.Value)
			clear(r[head+len(e.Label)+len(e.Value):])
			return size
		},
		func(e vm.Edge) vm.Edge { e.Value = bytes.Clone(e.Value); return e })
	rs.packed("edges_next", s, nOut, bOut, n, used, need, c.edges.Err)
}

// hostWalk: (start, order, max_depth, dir, label, label_len, limit, buf,
// cap, needed_out). Steps are packed as i32 depth | coordinate | from
// (the start's from is itself).
func hostWalk(ctx context.Context, rs *runState, m api.Module, s []uint64) {
	mem := memory(m)
	rawStart := view(mem, "walk", "start", u32(s[0]), uint32(4*rs.dims))
	lab, okLabel := label(mem, "walk", u32(s[4]), u32(s[5]))
	needOut := view(mem, "walk", "needed out-pointer", u32(s[9]), 4)
	buf := view(mem, "walk", "buffer", u32(s[7]), u32(s[8]))
	order, depth, dir, limit := u32(s[1]), int32(u32(s[2])), u32(s[3]), int32(u32(s[6]))
	d, okDir := direction(dir)
	if !okLabel || !okDir || order > uint32(vm.DFS) || depth < 0 || limit < 0 {
		s[0] = StatusBadArg
		return
	}
	key := rs.key("walk", []uint64{uint64(order), uint64(depth), uint64(dir), uint64(limit)}, rawStart, []byte(lab))
	if rs.cache.key != string(key) {
		start := rs.newCoord(mem, "walk", "start", u32(s[0]))
		steps, err := rs.host.Walk(ctx, start, vm.WalkOptions{Order: vm.WalkOrder(order), MaxDepth: int(depth), Label: lab, Direction: d, Limit: int(limit)})
		if err != nil {
			s[0] = rs.hostErr("walk", err)
			return
		}
		cw := 4 * rs.dims
		data := make([]byte, len(steps)*(4+2*cw))
		for i, st := range steps {
			r := data[i*(4+2*cw):]
			binary.LittleEndian.PutUint32(r, uint32(st.Depth))
			putCoord(r[4:], st.Coord)
			from := st.From
			if from == nil {
				from = st.Coord
			}
			putCoord(r[4+cw:], from)
		}
		rs.cache = packCache{key: string(key), data: data}
	}
	binary.LittleEndian.PutUint32(needOut, uint32(len(rs.cache.data)))
	rs.cache.copyTo(buf, s)
}

// hostShortestPath: (from, to, label, label_len, dir, weight_out, buf,
// cap, needed_out). The path is packed as its coordinates, start first.
func hostShortestPath(ctx context.Context, rs *runState, m api.Module, s []uint64) {
	rs.shortestPath(ctx, "shortest_path", memory(m), s, 0, 5)
}

// hostShortestPathHops: (from, to, label, label_len, dir, max_hops,
// weight_out, buf, cap, needed_out): shortest_path among the paths of at
// most max_hops edges (0 = any number; negative is StatusBadArg).
func hostShortestPathHops(ctx context.Context, rs *runState, m api.Module, s []uint64) {
	rs.shortestPath(ctx, "shortest_path_hops", memory(m), s, int(int32(u32(s[5]))), 6)
}

// shortestPath serves both path functions; rest is the index of
// weight_out, after which come buf, cap and needed_out. A negative hops is
// StatusBadArg, once every pointer has been checked.
func (rs *runState) shortestPath(ctx context.Context, fn string, mem api.Memory, s []uint64, hops, rest int) {
	cw := uint32(4 * rs.dims)
	rawFrom := view(mem, fn, "from", u32(s[0]), cw)
	rawTo := view(mem, fn, "to", u32(s[1]), cw)
	lab, okLabel := label(mem, fn, u32(s[2]), u32(s[3]))
	d, okDir := direction(u32(s[4]))
	wOut := view(mem, fn, "weight out-pointer", u32(s[rest]), 8)
	needOut := view(mem, fn, "needed out-pointer", u32(s[rest+3]), 4)
	buf := view(mem, fn, "buffer", u32(s[rest+1]), u32(s[rest+2]))
	if !okLabel || !okDir || hops < 0 {
		s[0] = StatusBadArg
		return
	}
	key := rs.key("path", []uint64{uint64(d), uint64(hops)}, rawFrom, rawTo, []byte(lab))
	if rs.cache.key != string(key) {
		from := rs.newCoord(mem, fn, "from", u32(s[0]))
		to := rs.newCoord(mem, fn, "to", u32(s[1]))
		p, ok, err := rs.host.ShortestPath(ctx, from, to, vm.PathOptions{Label: lab, Direction: d, MaxHops: hops})
		if err != nil {
			s[0] = rs.hostErr(fn, err)
			return
		}
		c := packCache{key: string(key), status: StatusOK, weight: p.Weight}
		if !ok {
			c.status = StatusNotFound
		}
		c.data = make([]byte, len(p.Coords)*int(cw))
		for i, x := range p.Coords {
			putCoord(c.data[i*int(cw):], x)
		}
		rs.cache = c
	}
	binary.LittleEndian.PutUint32(needOut, uint32(len(rs.cache.data)))
	if rs.cache.status != StatusOK {
		s[0] = rs.cache.status
		return
	}
	binary.LittleEndian.PutUint64(wOut, math.Float64bits(rs.cache.weight))
	rs.cache.copyTo(buf, s)
}
