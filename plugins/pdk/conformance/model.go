package conformance

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/cubelinux/cube/vm"
)

// The reference model: the three programs in plain Go against vm.Host. The
// table's larger cases take their expectations from it; the small cases are
// written out by hand, and a test checks that the model agrees with them.

// errGuest is a program's own failure (a guest error in a sandbox).
type errGuest string

func (e errGuest) Error() string { return string(e) }

// maxPath is the longest path walk follows before giving up.
const maxPath = 64

// parseInt reports the value of a decimal integer: an optional '-' and 1 to
// 18 ASCII digits, nothing else.
func parseInt(v []byte) (int64, bool) {
	d := v
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if v[0] == '-' {
		n = -n
	}
	return n, true
}

func corners(name string, dims int, args []byte) (lo, hi []int32, err error) {
	if len(args) != 8*dims {
		return nil, nil, errGuest(name + ": bad arguments")
	}
	c := decodeCoords(args)
	return c[:dims], c[dims:], nil
}

func decodeCoords(b []byte) []int32 {
	c := make([]int32, len(b)/4)
	for i := range c {
		c[i] = int32(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24)
	}
	return c
}

func model(ctx context.Context, program string, h vm.Host, args []byte) (string, error) {
	switch program {
	case Aggregate:
		lo, hi, err := corners(Aggregate, h.Dims(), args)
		if err != nil {
			return "", err
		}
		var sum, count int64
		cur := h.Region(ctx, lo, hi)
		defer cur.Close()
		for p, ok := cur.Next(); ok; p, ok = cur.Next() {
			if n, ok := parseInt(p.Value); ok {
				sum += n
				count++
			}
		}
		if err := cur.Err(); err != nil {
			return "", err
		}
		return "sum=" + strconv.FormatInt(sum, 10) + " count=" + strconv.FormatInt(count, 10), nil
	case Writer:
		lo, hi, err := corners(Writer, h.Dims(), args)
		if err != nil {
			return "", err
		}
		var todo []vm.Point
		cur := h.Region(ctx, lo, hi)
		for p, ok := cur.Next(); ok; p, ok = cur.Next() {
			if n, ok := parseInt(p.Value); ok {
				todo = append(todo, vm.Point{Coord: slices.Clone(p.Coord), Value: strconv.AppendInt(nil, 2*n, 10)})
			}
		}
		cur.Close()
		if err := cur.Err(); err != nil {
			return "", err
		}
		for _, p := range todo {
			if err := h.Put(ctx, p.Coord, p.Value); err != nil {
				return "", err
			}
		}
		return "wrote=" + strconv.Itoa(len(todo)), nil
	case Kitcheck:
		return kitcheckModel(ctx, h, args)
	case Walk:
		dims := h.Dims()
		if len(args) < 4*dims {
			return "", errGuest("walk: bad arguments")
		}
		at, target := decodeCoords(args[:4*dims]), args[4*dims:]
		var path []string
		for {
			path = append(path, coordText(at))
			v, ok, err := h.Get(ctx, at)
			if err != nil {
				return "", err
			}
			if ok && bytes.Equal(v, target) {
				return strings.Join(path, " "), nil
			}
			if len(path) == maxPath {
				return "", errGuest("walk: not found")
			}
			var best *vm.Edge
			cur := h.Edges(ctx, at, vm.Out, "")
			for e, ok := cur.Next(); ok; e, ok = cur.Next() {
				if best == nil || better(e, *best) {
					e := vm.Edge{To: slices.Clone(e.To), Label: e.Label, Weight: e.Weight}
					best = &e
				}
			}
			cur.Close()
			if err := cur.Err(); err != nil {
				return "", err
			}
			if best == nil {
				return "", errGuest("walk: not found")
			}
			at = best.To
		}
	}
	return "", errors.New("conformance: no program " + program)
}

// better reports whether walk prefers edge a to edge b.
func better(a, b vm.Edge) bool {
	if a.Weight != b.Weight {
		return a.Weight < b.Weight
	}
	if c := slices.Compare(a.To, b.To); c != 0 {
		return c < 0
	}
	return a.Label < b.Label
}

func coordText(c []int32) string {
	s := make([]string, len(c))
	for i, x := range c {
		s[i] = strconv.Itoa(int(x))
	}
	return strings.Join(s, ",")
}
