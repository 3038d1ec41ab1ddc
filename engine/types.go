package engine

// Direction selects which edges of a coordinate to follow.
type Direction uint8

const (
	Out  Direction = iota // edges leaving the coordinate
	In                    // edges arriving at it
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

// Edge is a directed, labelled edge From -[Label]-> To.
type Edge struct {
	From, To []int32
	Label    string
	Weight   float64
	Value    []byte
}

// Order is the visiting order of a walk.
type Order uint8

const (
	BFS Order = iota // breadth first: nodes by increasing depth
	DFS              // depth first
)

// WalkOptions bound a built-in walk. The zero value walks one hop of
// outgoing edges of any label with no limit on the number of nodes.
type WalkOptions struct {
	Order     Order
	MaxDepth  int       // hops from the start; 0 means 1
	Label     string    // "" = any label
	Direction Direction // Out, In or Both
	Limit     int       // at most this many nodes (the start included); 0 = no limit
}

// Step is one node a walk reached.
type Step struct {
	Coord []int32
	Depth int     // 0 for the start
	From  []int32 // the node it was reached from; nil for the start
}

// Path is a least-weight path and its total weight.
type Path struct {
	Coords [][]int32
	Weight float64
}
