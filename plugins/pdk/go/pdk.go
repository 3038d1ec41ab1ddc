package pdk

import (
	"fmt"
	"iter"
	"math"
	"slices"
	"unsafe"
)

// statusNotWASM is what the stand-in imports return outside GOOS=wasip1.
const statusNotWASM = -1

// Statuses of ABI v1.
const (
	statusOK       = 0
	statusNotFound = 1
	statusTooSmall = 2
	statusLimit    = 3
	statusReadOnly = 4
	statusAborted  = 5
	statusBadArg   = 6
	statusError    = 7
)

// batchBytes is the size of a fresh batch buffer for region and edge
// records; a buffer grows when one record does not fit.
const batchBytes = 64 << 10

// Direction selects which edges of a coordinate are followed.
type Direction uint32

const (
	Out  Direction = 0 // edges leaving the coordinate
	In   Direction = 1 // edges arriving at the coordinate
	Both Direction = 2 // both
)

// Order is the order of a built-in walk.
type Order uint32

const (
	BFS Order = 0
	DFS Order = 1
)

// Edge is a directed, labelled edge From -[Label]-> To.
type Edge struct {
	From, To []int32
	Label    string
	Weight   float64
	Value    []byte
}

// WalkOptions bound a built-in walk. The zero value means BFS, depth 1,
// outgoing edges, any label, no limit.
type WalkOptions struct {
	Order     Order
	MaxDepth  int
	Direction Direction
	Label     string
	Limit     int
}

// Step is one node reached by a walk: the start has Depth 0 and From equal
// to its own coordinate.
type Step struct {
	Coord []int32
	Depth int
	From  []int32
}

// Path is a weighted shortest path, start and end included.
type Path struct {
	Coords [][]int32
	Weight float64
}

// PathOptions choose the edges ShortestPathWith follows and bound the
// path's length. The zero value means any label, outgoing edges, any
// number of edges.
type PathOptions struct {
	Label     string
	Direction Direction
	MaxHops   int // at most this many edges; 0 = no bound
}

// Neighbor is a point Nearby found, with its distance from the centre.
type Neighbor struct {
	Coord []int32
	Value []byte
	Dist  float64
}

// Per-run state, reset by Run.
var (
	args    []byte
	argsOK  bool
	dims    int
	iterErr error
	// scratch holds encoded coordinates for calls.
	scratch []byte
	// free holds batch buffers between iterations (8-aligned: []uint64
	// viewed as bytes).
	free [][]byte
)

// Run runs f as the program's body and returns the status run must return:
// 0 on success; otherwise f's error (or the first failed iteration's) is
// the run's error message.
//
//	//go:wasmexport run
//	func run() int32 { return pdk.Run(body) }
func Run(f func() error) int32 {
	args, argsOK, dims, iterErr = nil, false, 0, nil
	err := f()
	if err == nil {
		err = iterErr
	}
	if err == nil {
		return 0
	}
	msg := err.Error()
	if msg == "" {
		msg = "error"
	}
	abiSetError(unsafe.Pointer(unsafe.StringData(msg)), uint32(len(msg)))
	return 1
}

// Err returns the first failure of a Region or Edges iteration in this run.
// Unless cleared with ClearErr, it fails the run when the body returns.
func Err() error { return iterErr }

// ClearErr returns the first failure of a Region or Edges iteration in this
// run and forgets it, for a program that handles the failure itself, such
// as ErrBadArgument for an inverted box (min > max on some axis), which
// does not fail the run. After ErrLimit or ErrReadOnly the run has failed
// whatever the program does.
func ClearErr() error {
	err := iterErr
	iterErr = nil
	return err
}

// statusErr turns a status into an error naming op; nil for OK.
func statusErr(op string, st int32) error {
	var e error
	switch st {
	case statusOK:
		return nil
	case statusLimit:
		e = ErrLimit
	case statusReadOnly:
		e = ErrReadOnly
	case statusAborted:
		e = ErrAborted
	case statusBadArg:
		e = ErrBadArgument
	case statusError:
		e = ErrStore
	case statusNotWASM:
		e = ErrNotWASM
	default:
		return fmt.Errorf("pdk: %s: %w %d", op, ErrStatus, st)
	}
	return fmt.Errorf("pdk: %s: %w", op, e)
}

// Dims returns the namespace's number of dimensions.
func Dims() int {
	if dims == 0 {
		dims = int(abiDims())
	}
	return dims
}

// Args returns the run's argument bytes. The slice is shared by every call
// in the run; do not modify it.
func Args() []byte {
	if !argsOK {
		n := abiArgsLen()
		args = make([]byte, n)
		if n > 0 {
			abiArgsRead(unsafe.Pointer(&args[0]), uint32(n))
		}
		argsOK = true
	}
	return args
}

// ptr is the address of b's first byte, or nil for an empty slice (the
// host reads nothing then).
func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

func strPtr(s string) unsafe.Pointer { return unsafe.Pointer(unsafe.StringData(s)) }

// Output appends b to the run's result.
func Output(b []byte) error { return statusErr("output", abiOutputWrite(ptr(b), uint32(len(b)))) }

// OutputString appends s to the run's result.
func OutputString(s string) error {
	return statusErr("output", abiOutputWrite(strPtr(s), uint32(len(s))))
}

// Log adds a line to the run's log.
func Log(msg string) { abiLog(strPtr(msg), uint32(len(msg))) }

// Logf adds a formatted line to the run's log.
func Logf(format string, a ...any) { Log(fmt.Sprintf(format, a...)) }

// coords encodes coordinates, each of which must have Dims() elements,
// into the scratch buffer.
func coords(op string, cs ...[]int32) ([]byte, error) {
	d := Dims()
	for _, c := range cs {
		if len(c) != d {
			return nil, fmt.Errorf("pdk: %s: %w (%d, want %d)", op, ErrDims, len(c), d)
		}
	}
	scratch = encodeCoords(scratch[:0], cs...)
	return scratch, nil
}

// Get returns the value at c, or ok == false if there is none. The slice is
// the caller's.
func Get(c []int32) (value []byte, ok bool, err error) {
	k, err := coords("get", c)
	if err != nil {
		return nil, false, err
	}
	buf := make([]byte, 256)
	for {
		var n uint32
		st := abiGet(ptr(k), ptr(buf), uint32(len(buf)), unsafe.Pointer(&n))
		switch st {
		case statusOK:
			return buf[:n:n], true, nil
		case statusNotFound:
			return nil, false, nil
		case statusTooSmall:
			buf = make([]byte, n)
		default:
			return nil, false, statusErr("get", st)
		}
	}
}

// Put writes (replaces) the value at c, as part of the run's transaction.
func Put(c []int32, value []byte) error {
	k, err := coords("put", c)
	if err != nil {
		return err
	}
	return statusErr("put", abiPut(ptr(k), ptr(value), uint32(len(value))))
}

// Delete removes the value at c and reports whether there was one.
func Delete(c []int32) (existed bool, err error) {
	k, err := coords("delete", c)
	if err != nil {
		return false, err
	}
	st := abiDel(ptr(k))
	if st == statusNotFound {
		return false, nil
	}
	return st == statusOK, statusErr("delete", st)
}

func getBuf() []byte {
	if n := len(free); n > 0 {
		b := free[n-1]
		free = free[:n-1]
		return b
	}
	return alignedBuf(batchBytes)
}

func putBuf(b []byte) { free = append(free, b) }

// alignedBuf returns n bytes (rounded up to 8) aligned to 8, so that records
// can be read in place.
func alignedBuf(n int) []byte {
	w := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), 8*len(w))
}

// cursorNext is region_next or edges_next.
type cursorNext func(cursor uint32, buf unsafe.Pointer, cap uint32, nOut, bytesOut unsafe.Pointer) int32

// batches calls next until the cursor is exhausted, handing each batch of
// records to f, growing the buffer when a single record does not fit. It
// records a failure in iterErr.
func batches(op string, cursor uint32, next cursorNext, f func(b []byte, n int) bool) {
	buf := getBuf()
	defer func() { putBuf(buf) }()
	defer abiCursorClose(cursor)
	for {
		var n, bytes uint32
		st := next(cursor, ptr(buf), uint32(len(buf)), unsafe.Pointer(&n), unsafe.Pointer(&bytes))
		if st == statusTooSmall {
			buf = alignedBuf(int(bytes))
			continue
		}
		if st != statusOK {
			fail(statusErr(op, st))
			return
		}
		if n == 0 || !f(buf[:bytes], int(n)) {
			return
		}
	}
}

func fail(err error) {
	if iterErr == nil {
		iterErr = err
	}
}

// Region iterates the points in the box [min, max] (inclusive on every
// axis), reading many per host call:
//
//	for c, v := range pdk.Region(min, max) { ... }
//
// c and v are valid only until the loop moves on; copy what you keep. The
// order is the namespace's curve order; do not depend on it. A failure ends
// the loop and fails the run (see Err).
func Region(min, max []int32) iter.Seq2[[]int32, []byte] {
	return func(yield func([]int32, []byte) bool) {
		if cursor, ok := openRegion(min, max); ok {
			points("region", cursor, yield)
		}
	}
}

// Within iterates the points at distance at most r from c (a point at
// exactly r is inside; math.Inf(1) for every point), reading many per host
// call, like Region:
//
//	for c, v := range pdk.Within(centre, 100) { ... }
//
// c and v are valid only until the loop moves on. The order is the
// namespace's curve order; do not depend on it. Distances are Euclidean
// over the coordinates (metres on the sphere in a GEO namespace). A
// failure ends the loop and fails the run (see Err): ErrBadArgument for an
// r that is NaN or negative.
func Within(c []int32, r float64) iter.Seq2[[]int32, []byte] {
	return func(yield func([]int32, []byte) bool) {
		if cursor, ok := openWithin(c, r); ok {
			points("within", cursor, yield)
		}
	}
}

// openRegion opens a region cursor on the box [min, max]; on failure it
// fails the run (see Err) and reports false.
func openRegion(min, max []int32) (cursor uint32, ok bool) {
	k, err := coords("region", min, max)
	if err != nil {
		fail(err)
		return 0, false
	}
	cw := 4 * Dims()
	if st := abiRegionOpen(ptr(k), ptr(k[cw:]), unsafe.Pointer(&cursor)); st != statusOK {
		fail(statusErr("region", st))
		return 0, false
	}
	return cursor, true
}

// openWithin opens a cursor on the points at distance at most r from c;
// on failure it fails the run and reports false.
func openWithin(c []int32, r float64) (cursor uint32, ok bool) {
	k, err := coords("within", c)
	if err != nil {
		fail(err)
		return 0, false
	}
	if st := abiWithinOpen(ptr(k), r, unsafe.Pointer(&cursor)); st != statusOK {
		fail(statusErr("within", st))
		return 0, false
	}
	return cursor, true
}

// points hands the point records of an open cursor to yield, batch by
// batch, and closes the cursor.
func points(op string, cursor uint32, yield func([]int32, []byte) bool) {
	c := make([]int32, Dims())
	batches(op, cursor, abiRegionNext, func(b []byte, n int) bool {
		for ; n > 0; n-- {
			v, size := pointRecord(b, c)
			if size == 0 {
				fail(fmt.Errorf("pdk: %s: %w: short record", op, ErrStore))
				return false
			}
			if !yield(c, v) {
				return false
			}
			b = b[size:]
		}
		return true
	})
}

// Nearby returns the k points nearest to c, nearest first (points at the
// same distance in curve order), leaving out those farther than maxDist
// (a point at exactly maxDist stays; math.Inf(1) for no bound, 0 for the
// point at c alone). Fewer than k come back when there are fewer. The
// slices are the caller's. Distances are Euclidean over the coordinates
// (metres on the sphere in a GEO namespace).
//
// # Errors
//
// ErrBadArgument for k < 1 or a maxDist that is NaN or negative.
func Nearby(c []int32, k int, maxDist float64) ([]Neighbor, error) {
	key, err := coords("nearby", c)
	if err != nil {
		return nil, err
	}
	if k > math.MaxInt32 {
		k = math.MaxInt32 // the host cuts k to what memory could hold anyway
	}
	buf := alignedBuf(256)
	for {
		var n, need uint32
		st := abiNearby(ptr(key), int32(max(k, -1)), maxDist, ptr(buf), uint32(len(buf)), unsafe.Pointer(&n), unsafe.Pointer(&need))
		if st == statusTooSmall {
			buf = alignedBuf(int(need))
			continue
		}
		if st != statusOK {
			return nil, statusErr("nearby", st)
		}
		out := make([]Neighbor, 0, n)
		b := buf[:need]
		for ; n > 0; n-- {
			nb := Neighbor{Coord: make([]int32, Dims())}
			var size int
			nb.Dist, nb.Value, size = neighborRecord(b, nb.Coord)
			if size == 0 {
				return nil, fmt.Errorf("pdk: nearby: %w: short record", ErrStore)
			}
			nb.Value = slices.Clone(nb.Value)
			out = append(out, nb)
			b = b[size:]
		}
		return out, nil
	}
}

// Edges iterates the edges of c in direction dir with the label ("" = any
// label). The Edge's slices are valid only until the loop moves on. A
// failure ends the loop and fails the run (see Err).
func Edges(c []int32, dir Direction, label string) iter.Seq[Edge] {
	return func(yield func(Edge) bool) {
		k, err := coords("edges", c)
		if err != nil {
			fail(err)
			return
		}
		var cursor uint32
		if st := abiEdgesOpen(ptr(k), uint32(dir), strPtr(label), uint32(len(label)), unsafe.Pointer(&cursor)); st != statusOK {
			fail(statusErr("edges", st))
			return
		}
		e := Edge{From: make([]int32, Dims()), To: make([]int32, Dims())}
		batches("edges", cursor, abiEdgesNext, func(b []byte, n int) bool {
			for ; n > 0; n-- {
				size := edgeRecord(b, &e)
				if size == 0 {
					fail(fmt.Errorf("pdk: edges: %w: short record", ErrStore))
					return false
				}
				if !yield(e) {
					return false
				}
				b = b[size:]
			}
			return true
		})
	}
}

// Link creates or replaces the edge e.From -[e.Label]-> e.To.
func Link(e Edge) error {
	k, err := coords("link", e.From, e.To)
	if err != nil {
		return err
	}
	cw := 4 * Dims()
	return statusErr("link", abiLink(ptr(k), ptr(k[cw:]), strPtr(e.Label), uint32(len(e.Label)), e.Weight, ptr(e.Value), uint32(len(e.Value))))
}

// Unlink removes an edge and reports whether it existed.
func Unlink(from, to []int32, label string) (existed bool, err error) {
	k, err := coords("unlink", from, to)
	if err != nil {
		return false, err
	}
	st := abiUnlink(ptr(k), ptr(k[4*Dims():]), strPtr(label), uint32(len(label)))
	if st == statusNotFound {
		return false, nil
	}
	return st == statusOK, statusErr("unlink", st)
}

// Walk runs the store's built-in walk from start.
func Walk(start []int32, o WalkOptions) ([]Step, error) {
	k, err := coords("walk", start)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 4096)
	for {
		var need uint32
		st := abiWalk(ptr(k), uint32(o.Order), int32(o.MaxDepth), uint32(o.Direction), strPtr(o.Label), uint32(len(o.Label)),
			int32(o.Limit), ptr(buf), uint32(len(buf)), unsafe.Pointer(&need))
		if st == statusTooSmall {
			buf = make([]byte, need)
			continue
		}
		if st != statusOK {
			return nil, statusErr("walk", st)
		}
		return walkSteps(buf[:need], Dims()), nil
	}
}

// ShortestPath returns the least-weight path from one coordinate to another
// following edges with the label ("" = any) in direction dir; ok is false
// when there is none.
func ShortestPath(from, to []int32, label string, dir Direction) (p Path, ok bool, err error) {
	k, err := coords("shortest path", from, to)
	if err != nil {
		return Path{}, false, err
	}
	cw := 4 * Dims()
	buf := make([]byte, 64*cw)
	for {
		var need uint32
		st := abiShortestPath(ptr(k), ptr(k[cw:]), strPtr(label), uint32(len(label)), uint32(dir),
			unsafe.Pointer(&p.Weight), ptr(buf), uint32(len(buf)), unsafe.Pointer(&need))
		switch st {
		case statusTooSmall:
			buf = make([]byte, need)
			continue
		case statusNotFound:
			return Path{}, false, nil
		case statusOK:
			p.Coords = pathCoords(buf[:need], Dims())
			return p, true, nil
		}
		return Path{}, false, statusErr("shortest path", st)
	}
}

// ShortestPathWith is ShortestPath with options: o.MaxHops > 0 finds the
// least-weight path among those of at most o.MaxHops edges, which may
// weigh more than the unbounded one; ok is false when no path is that
// short. A negative MaxHops is ErrBadArgument.
func ShortestPathWith(from, to []int32, o PathOptions) (p Path, ok bool, err error) {
	k, err := coords("shortest path", from, to)
	if err != nil {
		return Path{}, false, err
	}
	hops := int32(min(max(o.MaxHops, -1), math.MaxInt32))
	cw := 4 * Dims()
	buf := make([]byte, 64*cw)
	for {
		var need uint32
		st := abiShortestPathHops(ptr(k), ptr(k[cw:]), strPtr(o.Label), uint32(len(o.Label)), uint32(o.Direction), hops,
			unsafe.Pointer(&p.Weight), ptr(buf), uint32(len(buf)), unsafe.Pointer(&need))
		switch st {
		case statusTooSmall:
			buf = make([]byte, need)
			continue
		case statusNotFound:
			return Path{}, false, nil
		case statusOK:
			p.Coords = pathCoords(buf[:need], Dims())
			return p, true, nil
		}
		return Path{}, false, statusErr("shortest path", st)
	}
}
