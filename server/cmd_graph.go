package server

import (
	"math"
	"strconv"

	"github.com/cubelinux/cube"
)

// edge parses the opening LINK and UNLINK share: ns from(d) to(d) label,
// and (for LINK) options after it.
func (cl *call) edge(optional bool) (ns *cube.Namespace, from, to []int32, label string, err error) {
	ns, cs, err := cl.coords(1, optional, "from", "to")
	if err != nil {
		return nil, nil, nil, "", err
	}
	return ns, cs[0], cs[1], string(cl.args[2+2*ns.Dims()]), nil
}

// LINK ns from(d) to(d) label [WEIGHT w] [VALUE v]
func prepLink(cl *call) (*cube.Namespace, txOp, error) {
	ns, from, to, label, err := cl.edge(true)
	if err != nil {
		return nil, nil, err
	}
	weight := 1.0
	var value []byte
	err = cl.options(3+2*ns.Dims(), map[string]int{"WEIGHT": 1, "VALUE": 1}, func(key string, v [][]byte) error {
		if key == "VALUE" {
			value = v[0]
			return nil
		}
		w, err := strconv.ParseFloat(string(v[0]), 64)
		// The engine refuses the same (cube.ErrBadWeight); saying it here
		// quotes the argument as typed.
		if err != nil || !(w >= 0) || math.IsInf(w, 1) {
			return usageErr("WEIGHT must be a finite number >= 0, got '%s'", clip(v[0]))
		}
		weight = w
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	cl.at, cl.label, cl.weight, cl.value = [2][]int32{from, to}, label, weight, value
	return ns, linkOp, nil
}

func linkOp(cl *call, tx *cube.Tx) error {
	if err := tx.Link(cl.at[0], cl.at[1], cl.label, cl.weight, cl.value); err != nil {
		return err
	}
	cl.w.OK()
	return nil
}

// UNLINK ns from(d) to(d) label
func prepUnlink(cl *call) (*cube.Namespace, txOp, error) {
	ns, from, to, label, err := cl.edge(false)
	if err != nil {
		return nil, nil, err
	}
	cl.at, cl.label = [2][]int32{from, to}, label
	return ns, unlinkOp, nil
}

func unlinkOp(cl *call, tx *cube.Tx) error {
	ok, err := tx.Unlink(cl.at[0], cl.at[1], cl.label)
	if err != nil {
		return err
	}
	cl.w.Flag(ok)
	return nil
}

// EDGES ns c(d) [OUT|IN|BOTH] [LABEL l]
func cmdEdges(cl *call) error {
	ns, cs, err := cl.coords(0, true, "")
	if err != nil {
		return err
	}
	d, c := ns.Dims(), cs[0]
	dir, label := cube.Out, ""
	err = cl.options(2+d, map[string]int{"OUT": 0, "IN": 0, "BOTH": 0, "LABEL": 1}, func(key string, v [][]byte) error {
		if key == "LABEL" {
			label = string(v[0])
			return nil
		}
		dir, _ = parseDir([]byte(key))
		return nil
	})
	if err != nil {
		return err
	}
	edges, err := ns.Edges(cl.ctx, c, dir, label)
	if err != nil {
		return err
	}
	cl.w.Array(len(edges))
	for _, e := range edges {
		cl.w.Array(5)
		cl.coordOut(e.From)
		cl.coordOut(e.To)
		cl.w.BulkString(e.Label)
		cl.w.Double(e.Weight)
		if len(e.Value) == 0 { // no value: null, before and after a restart
			cl.w.Null()
		} else {
			cl.w.Bulk(e.Value)
		}
	}
	return nil
}

// WALK ns start(d) [DEPTH n] [LABEL l] [DIR OUT|IN|BOTH] [ORDER BFS|DFS] [LIMIT n]
func cmdWalk(cl *call) error {
	ns, cs, err := cl.coords(0, true, "start")
	if err != nil {
		return err
	}
	d, start := ns.Dims(), cs[0]
	var o cube.WalkOptions
	err = cl.options(2+d, map[string]int{"DEPTH": 1, "LABEL": 1, "DIR": 1, "ORDER": 1, "LIMIT": 1}, func(key string, v [][]byte) error {
		var err error
		switch key {
		case "DEPTH":
			o.MaxDepth, err = parseCount(v[0], "DEPTH")
		case "LIMIT":
			o.Limit, err = parseCount(v[0], "LIMIT")
		case "LABEL":
			o.Label = string(v[0])
		case "DIR":
			var ok bool
			if o.Direction, ok = parseDir(v[0]); !ok {
				err = usageErr("DIR must be OUT, IN or BOTH, got '%s'", clip(v[0]))
			}
		case "ORDER":
			switch string(upper(v[0])) {
			case "BFS":
				o.Order = cube.BFS
			case "DFS":
				o.Order = cube.DFS
			default:
				err = usageErr("ORDER must be BFS or DFS, got '%s'", clip(v[0]))
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	steps, err := ns.Walk(cl.ctx, start, o)
	if err != nil {
		return err
	}
	cl.w.Array(len(steps))
	for _, s := range steps {
		cl.w.Array(3)
		cl.coordOut(s.Coord)
		cl.w.Int(int64(s.Depth))
		if s.From == nil {
			cl.w.NullArray()
		} else {
			cl.coordOut(s.From)
		}
	}
	return nil
}

// PATH ns from(d) to(d) [LABEL l] [DIR OUT|IN|BOTH] [MAXHOPS n]
func cmdPath(cl *call) error {
	ns, cs, err := cl.coords(0, true, "from", "to")
	if err != nil {
		return err
	}
	d, from, to := ns.Dims(), cs[0], cs[1]
	var o cube.PathOptions
	err = cl.options(2+2*d, map[string]int{"LABEL": 1, "DIR": 1, "MAXHOPS": 1}, func(key string, v [][]byte) (err error) {
		switch key {
		case "LABEL":
			o.Label = string(v[0])
		case "MAXHOPS":
			o.MaxHops, err = parseCount(v[0], "MAXHOPS")
		default:
			var ok bool
			if o.Direction, ok = parseDir(v[0]); !ok {
				return usageErr("DIR must be OUT, IN or BOTH, got '%s'", clip(v[0]))
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	p, ok, err := ns.ShortestPathWith(cl.ctx, from, to, o)
	if err != nil {
		return err
	}
	if !ok {
		cl.w.NullArray()
		return nil
	}
	cl.w.Array(2)
	cl.w.Array(len(p.Coords))
	for _, c := range p.Coords {
		cl.coordOut(c)
	}
	cl.w.Double(p.Weight)
	return nil
}

func upper(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		out[i] = c
	}
	return out
}
