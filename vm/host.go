package vm

import (
	"context"
	"encoding/binary"
)

// Direction selects which edges of a coordinate an edge query follows.
type Direction uint8

const (
	Out  Direction = iota // edges leaving the coordinate
	In                    // edges arriving at the coordinate
	Both                  // both
)

// String returns "out", "in" or "both".
func (d Direction) String() string {
	switch d {
	case Out:
		return "out"
	case In:
		return "in"
	case Both:
		return "both"
	}
	return "direction(?)"
}

// Point is a value at a coordinate. Coord has Host.Dims() elements.
type Point struct {
	Coord []int32
	Value []byte
}

// Edge is a directed, labelled edge from -[Label]-> To with a weight and
// optional bytes.
type Edge struct {
	From   []int32
	To     []int32
	Label  string
	Weight float64
	Value  []byte
}

// Cursor is a pull iterator. Next returns false when the cursor is
// exhausted or failed; Err tells which. Close releases it early and is safe
// to call more than once. Values returned by Next are valid until the next
// call to Next; copy what you keep.
type Cursor[T any] interface {
	Next() (T, bool)
	Err() error
	Close()
}

// WalkOrder is the order of a built-in walk.
type WalkOrder uint8

const (
	BFS WalkOrder = iota
	DFS
)

// WalkOptions bound a built-in walk. Zero values mean: depth 1, any
// label, outgoing edges, no result limit beyond Limits.
type WalkOptions struct {
	Order     WalkOrder
	MaxDepth  int
	Label     string // "" = any label
	Direction Direction
	Limit     int // at most this many nodes returned; 0 = no limit
}

// WalkStep is one node reached by a walk: the coordinate, its depth from
// the start (the start has depth 0), and the coordinate it was reached from
// (nil for the start).
type WalkStep struct {
	Coord []int32
	Depth int
	From  []int32
}

// Neighbor is a point a nearest-neighbour query found, with its Euclidean
// distance from the query's centre (metres in a geo namespace).
type Neighbor struct {
	Coord []int32
	Value []byte
	Dist  float64
}

// PathOptions choose the edges a shortest path follows and bound its
// length. Zero values mean: any label, outgoing edges, any number of edges.
type PathOptions struct {
	Label     string // "" = any label
	Direction Direction
	MaxHops   int // at most this many edges; 0 = no bound
}

// Path is a weighted shortest path: the coordinates from start to end
// inclusive and the sum of the edge weights.
type Path struct {
	Coords [][]int32
	Weight float64
}

// Host is the namespace as a running program sees it. Every method is
// called from the goroutine running the program; implementations need not
// be safe for concurrent use. Coordinates always have Dims() elements; the
// sandboxes check that before calling.
//
// Errors: Get returns ok=false for an absent value, not an error. A write
// on a read-only host returns an error wrapping ErrReadOnly. Any other
// error aborts the call and is reported to the guest as a failed status.
type Host interface {
	// Dims is the namespace's number of dimensions (1–8).
	Dims() int
	// Geo reports whether the namespace is geographic: 2 dimensions,
	// (longitude, latitude) in units of 1e-7 degree, and Nearby and
	// Within in metres on the sphere (haversine). The JavaScript sandbox
	// then reads and writes coordinates in degrees; WebAssembly guests
	// keep the raw units.
	Geo() bool
	// Get returns the value at c. The slice is valid until the next call
	// into the host.
	Get(ctx context.Context, c []int32) (value []byte, ok bool, err error)
	// Put writes value at c inside the running transaction.
	Put(ctx context.Context, c []int32, value []byte) error
	// Delete removes the value at c and reports whether there was one.
	Delete(ctx context.Context, c []int32) (existed bool, err error)
	// Region iterates the points inside the box [min, max] (inclusive on
	// every axis) in the namespace's curve order.
	Region(ctx context.Context, min, max []int32) Cursor[Point]
	// Nearby returns the k points nearest to c by Euclidean distance over
	// the integer coordinates (k >= 1), nearest first; points at the same
	// distance come in curve order. maxDist > 0 leaves out points farther
	// than it (a point at exactly maxDist stays); 0 means no bound. In a
	// geo namespace distances are metres on the sphere.
	Nearby(ctx context.Context, c []int32, k int, maxDist float64) ([]Neighbor, error)
	// Within iterates the points at Euclidean distance at most r from c
	// (r >= 0, +Inf for all), in curve order.
	Within(ctx context.Context, c []int32, r float64) Cursor[Point]
	// Edges iterates the edges of c in the given direction; label "" means
	// any label.
	Edges(ctx context.Context, c []int32, dir Direction, label string) Cursor[Edge]
	// Link creates or replaces the edge e.From -[e.Label]-> e.To.
	Link(ctx context.Context, e Edge) error
	// Unlink removes an edge and reports whether it existed.
	Unlink(ctx context.Context, from, to []int32, label string) (existed bool, err error)
	// Walk runs the store's built-in BFS or DFS from start.
	Walk(ctx context.Context, start []int32, o WalkOptions) ([]WalkStep, error)
	// ShortestPath returns the least-weight path from one coordinate to
	// another following edges with o.Label ("" = any) in o.Direction,
	// among the paths of at most o.MaxHops edges (0 = any number). ok is
	// false when no such path exists.
	ShortestPath(ctx context.Context, from, to []int32, o PathOptions) (p Path, ok bool, err error)
}

// PointFiller is an optional interface of the Cursor[Point] a Host's Region
// returns. A sandbox that hands points to its guest as packed records (the
// WASM ABI's region_next) uses it when present, so the host packs records
// straight from its scan into guest memory, with no call per point.
//
// FillPoints packs the cursor's next points into buf as point records
// (PackPoint), as many as fit, and returns how many points and bytes it
// wrote. When the next point's record does not fit an otherwise empty buf,
// it returns n = 0 and need = that record's size, and keeps the point for
// the next call. n = 0 and need = 0 mean the cursor is exhausted or failed;
// Err tells which. Next and FillPoints may be mixed on one cursor.
type PointFiller interface {
	FillPoints(buf []byte) (n, used, need int)
}

// ColumnFiller is an optional interface of the Cursor[Point] a Host's
// Region and Within return. A sandbox that hands points to its guest as
// columns (the WASM ABI's region_columns) uses it when present, so the
// host copies from its scan into guest memory in bulk.
//
// FillColumns copies the cursor's next points into three columns, as
// many as fit: coordinate i at coords[4*dims*i:] (dims little-endian
// i32), its value's length at lens[4*i:] (little-endian u32), and the
// values one after another from the start of vals. It takes at most
// len(lens)/4 points, never writes past any of the three slices (coords
// must hold 4*dims bytes for each of those points), and returns how many
// points it copied and the bytes of vals they used. When not even the
// next point fits (len(lens) < 4, or its value is longer than vals),
// it returns n = 0, stuck = true and need = that value's length, and
// keeps the point for the next call. n = 0 and stuck = false mean the
// cursor is exhausted or failed; Err tells which. Next, FillPoints and
// FillColumns may be mixed on one cursor.
type ColumnFiller interface {
	FillColumns(coords, lens, vals []byte) (n, used int, stuck bool, need int)
}

// PointRecordSize is the size of a packed point record for a coordinate of
// dims axes and a value of valueLen bytes.
func PointRecordSize(dims, valueLen int) int {
	return (4*dims + 4 + valueLen + 3) &^ 3
}

// PackPoint writes the packed point record of (c, v) at the start of dst
// and returns its size, PointRecordSize(len(c), len(v)); dst must be at
// least that long. The record is
//
//	len(c) × little-endian i32 coordinate | u32 value length | value | zero pad to 4
func PackPoint(dst []byte, c []int32, v []byte) int {
	cw := 4 * len(c)
	size := (cw + 4 + len(v) + 3) &^ 3
	r := dst[:size:size]
	for i, x := range c {
		binary.LittleEndian.PutUint32(r[4*i:], uint32(x))
	}
	binary.LittleEndian.PutUint32(r[cw:], uint32(len(v)))
	for i := cw + 4 + copy(r[cw+4:], v); i < size; i++ {
		r[i] = 0 // at most 3 bytes of pad: cheaper than clear's call
	}
	return size
}

// AppendPointRecord appends the packed point record of (c, v) to dst.
func AppendPointRecord(dst []byte, c []int32, v []byte) []byte {
	n := len(dst)
	dst = append(dst, make([]byte, PointRecordSize(len(c), len(v)))...)
	PackPoint(dst[n:], c, v)
	return dst
}
