package server

import (
	"math"
	"strconv"

	"github.com/cubelinux/cube"
)

// cmdNearby: NEARBY ns c1..cd K [MAXDIST d] [COUNT]
//
// The K nearest values to the coordinate, nearest first (ties in curve
// order), each as [[c1..cd], value, distance]; with COUNT, their number.
func cmdNearby(cl *call) error {
	ns, cs, err := cl.coords(1, true, "")
	if err != nil {
		return err
	}
	d := ns.Dims()
	k, err := parseK(cl.args[2+d])
	if err != nil {
		return err
	}
	var o cube.NearbyOptions
	count := false
	err = cl.options(3+d, map[string]int{"MAXDIST": 1, "COUNT": 0}, func(key string, v [][]byte) error {
		if key == "COUNT" {
			count = true
			return nil
		}
		md, err := cl.distance(v[0], "MAXDIST")
		if err != nil {
			return err
		}
		// The engine's 0 means no bound; MAXDIST 0 means the centre
		// only, which the smallest positive bound gives: floor(r²) is 0.
		o.MaxDist = max(md, math.SmallestNonzeroFloat64)
		return nil
	})
	if err != nil {
		return err
	}
	near, err := ns.Nearby(cl.ctx, cs[0], k, o)
	if err != nil {
		return err
	}
	if count {
		cl.w.Int(int64(len(near)))
		return nil
	}
	cl.w.Array(len(near))
	for _, n := range near {
		cl.w.Array(3)
		cl.coordOut(n.Coord)
		cl.w.Bulk(n.Value)
		cl.w.Double(n.Dist)
	}
	return nil
}

// cmdWithin: WITHIN ns c1..cd r [LIMIT n] [COUNT]
//
// The values at distance at most r from the coordinate, in curve order, as
// [[c1..cd], value] pairs (REGION's shape); with COUNT, their number.
func cmdWithin(cl *call) error {
	ns, cs, err := cl.coords(1, true, "")
	if err != nil {
		return err
	}
	d := ns.Dims()
	r, err := cl.distance(cl.args[2+d], "the radius r")
	if err != nil {
		return err
	}
	var o cube.WithinOptions
	count := false
	err = cl.options(3+d, map[string]int{"LIMIT": 1, "COUNT": 0}, func(key string, v [][]byte) error {
		if key == "COUNT" {
			count = true
			return nil
		}
		o.Limit, err = parseCount(v[0], "LIMIT")
		return err
	})
	if err != nil {
		return err
	}
	if count {
		if o.Limit > 0 {
			return usageErr("WITHIN: COUNT and LIMIT do not go together (COUNT counts them all)")
		}
		n, err := ns.CountWithin(cl.ctx, cs[0], r)
		if err != nil {
			return err
		}
		cl.w.Int(int64(n))
		return nil
	}
	seq, err := ns.Within(cl.ctx, cs[0], r, o)
	if err != nil {
		return err
	}
	cl.pairs(seq)
	return nil
}

// parseK reads NEARBY's K.
func parseK(b []byte) (int, error) {
	k, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || k < 1 || k > math.MaxInt32 {
		return 0, usageErr("NEARBY: K (how many neighbours, after the coordinate) must be an integer >= 1, got '%s'", clip(b))
	}
	return int(k), nil
}

// distance reads a distance: a number >= 0, or inf; metres in a geo
// namespace.
func (cl *call) distance(b []byte, what string) (float64, error) {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || !(f >= 0) {
		units := "in the namespace's units"
		if cl.geo {
			units = "in metres"
		}
		return 0, usageErr("%s must be a number >= 0 (a distance %s, or inf), got '%s'", what, units, clip(b))
	}
	return f, nil
}
