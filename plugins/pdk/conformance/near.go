package conformance

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/cubelinux/cube/vm"
)

// The distance queries and hop-bounded paths, as kitcheck runs them with
// the argument "near": nearby, within and the hop-bounded shortest path of
// every kit, on random points (nearData) whose expected answers come from
// the model on the reference host, which finds neighbours by brute force
// with exact distances. The engine's answers must equal them.

// nearCentres are the centres kitcheck's near queries use: the origin,
// one inside the square, and a corner of it.
var nearCentres = [][]int32{{0, 0}, {37, -12}, {-50, 50}}

// nearData is 2-D points at random in [-50, 50]² (a fixed seed, so the
// table is the same on every run), each at a squared distance from every
// centre that no other point shares, so that the k nearest are one set
// whatever order a host gives points at equal distances; values are
// "p<i>", and the origin holds "origin". The "h" edges make paths from
// 0,0 to 9,9 of one, two and three edges, each lighter than the last.
func nearData() Data {
	r := rand.New(rand.NewPCG(10, 2))
	d := Data{Dims: 2, Points: []vm.Point{pt("origin", 0, 0)}}
	seen := map[[2]int32]bool{{0, 0}: true}
	used := make([]map[int64]bool, len(nearCentres))
	for i, c := range nearCentres {
		used[i] = map[int64]bool{dist2(xy(0, 0), c): true}
	}
	for tries := 0; len(d.Points) < 300 && tries < 100_000; tries++ {
		p := xy(r.Int32N(101)-50, r.Int32N(101)-50)
		if seen[[2]int32(p)] {
			continue
		}
		ok := true
		for i, c := range nearCentres {
			ok = ok && !used[i][dist2(p, c)]
		}
		if !ok {
			continue
		}
		seen[[2]int32(p)] = true
		for i, c := range nearCentres {
			used[i][dist2(p, c)] = true
		}
		d.Points = append(d.Points, pt("p"+strconv.Itoa(len(d.Points)), p...))
	}
	d.Edges = []vm.Edge{
		edge(10, "h", xy(0, 0), xy(9, 9)),
		edge(1, "h", xy(0, 0), xy(3, 3)),
		edge(4, "h", xy(3, 3), xy(9, 9)),
		edge(1, "h", xy(0, 0), xy(1, 1)),
		edge(1, "h", xy(1, 1), xy(2, 2)),
		edge(1, "h", xy(2, 2), xy(9, 9)),
		edge(1, "x", xy(0, 0), xy(9, 9)), // another label: never followed
	}
	return d
}

func dist2(a, b []int32) int64 {
	var s int64
	for i := range a {
		x := int64(a[i]) - int64(b[i])
		s += x * x
	}
	return s
}

// nearModel is kitcheck's "near" run in plain Go against vm.Host. The
// ABI's distances differ from the host's in one place: a bound of 0 means
// the centre alone (the host's 0 is no bound, so the smallest positive
// distance stands in) and +Inf means no bound.
func nearModel(ctx context.Context, h vm.Host) (string, error) {
	var out []string
	say := func(s ...string) { out = append(out, strings.Join(s, "")) }
	neighbor := func(n vm.Neighbor) string {
		return coordText(n.Coord) + "@" + strconv.FormatInt(int64(math.Round(n.Dist*100)), 10) + "=" + string(n.Value)
	}
	nearby := func(c []int32, k int, maxDist float64) ([]vm.Neighbor, error) {
		switch {
		case math.IsInf(maxDist, 1):
			maxDist = 0
		case maxDist == 0:
			maxDist = math.SmallestNonzeroFloat64
		}
		return h.Nearby(ctx, c, k, maxDist)
	}
	inf := math.Inf(1)
	for _, q := range []struct {
		name    string
		c       []int32
		k       int
		maxDist float64
	}{
		{"0,0 k=5", nearCentres[0], 5, inf},
		{"37,-12 k=12 max=10", nearCentres[1], 12, 10},
		{"-50,50 k=3", nearCentres[2], 3, inf},
		{"0,0 k=3 max=0", nearCentres[0], 3, 0},
		{"37,-12 k=3 max=0", nearCentres[1], 3, 0},
	} {
		ns, err := nearby(q.c, q.k, q.maxDist)
		if err != nil {
			return "", err
		}
		s := make([]string, len(ns))
		for i, n := range ns {
			s[i] = neighbor(n)
		}
		say("nearby ", q.name, ": ", strings.Join(s, " "))
	}
	all, err := nearby(nearCentres[0], 1000, inf)
	if err != nil {
		return "", err
	}
	say("nearby 0,0 k=1000: n=", strconv.Itoa(len(all)), " last=", neighbor(all[len(all)-1]))
	say("nearby 0,0 k=0: bad argument")

	var s []string
	cur := h.Within(ctx, nearCentres[1], 15)
	for p, ok := cur.Next(); ok; p, ok = cur.Next() {
		s = append(s, coordText(p.Coord)+"="+string(p.Value))
	}
	cur.Close()
	if err := cur.Err(); err != nil {
		return "", err
	}
	slices.Sort(s)
	say("within 37,-12 r=15: n=", strconv.Itoa(len(s)), ": ", strings.Join(s, " "))
	say("within 0,0 r=NaN: bad argument")

	for _, hops := range []int{1, 2, 3, 0} {
		p, ok, err := h.ShortestPath(ctx, xy(0, 0), xy(9, 9), vm.PathOptions{Label: "h", MaxHops: hops})
		if err != nil {
			return "", err
		}
		say("path 0,0>9,9 h hops=", strconv.Itoa(hops), ": ", pathText(p, ok))
	}
	p, ok, err := h.ShortestPath(ctx, xy(9, 9), xy(0, 0), vm.PathOptions{Label: "h", MaxHops: 2})
	if err != nil {
		return "", err
	}
	say("path 9,9>0,0 h hops=2: ", pathText(p, ok))
	say("path 0,0>9,9 h hops=-1: bad argument")
	return strings.Join(out, "\n"), nil
}

func pathText(p vm.Path, ok bool) string {
	if !ok {
		return "none"
	}
	cs := make([]string, len(p.Coords))
	for i, c := range p.Coords {
		cs[i] = coordText(c)
	}
	return strings.Join(cs, " ") + " cost=" + strconv.FormatInt(int64(math.Round(p.Weight*100)), 10)
}
