//go:build wasip1

// Command kitcheck calls every function of the Go guest kit
// (plugins/pdk/go) that the other examples leave out — Delete, Link,
// Unlink, Edges, Walk (BFS and DFS), ShortestPath, Log — and the
// inverted-box error path, and prints what each returned; with the
// argument "near", Nearby, Within and ShortestPathWith (hop-bounded); with
// "columns", RegionColumns and WithinColumns against Region and Within. Its twins in C,
// AssemblyScript and JavaScript must print the same text; the contract is
// in plugins/pdk/conformance's doc.
package main

import (
	"errors"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"

	pdk "github.com/cubelinux/cube/plugins/pdk/go"
)

//go:generate env GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags=-s -o kitcheck.wasm .

//go:wasmexport run
func run() int32 { return pdk.Run(kitcheck) }

func co(c []int32) string {
	s := make([]string, len(c))
	for i, x := range c {
		s[i] = strconv.Itoa(int(x))
	}
	return strings.Join(s, ",")
}

func cost(w float64) string { return strconv.FormatInt(int64(math.Round(w*100)), 10) }

// steps renders a walk: the depths in visit order (which do not depend on
// the order a host lists edges in, on the table's graph), then the steps
// sorted.
func steps(ss []pdk.Step) string {
	d := make([]string, len(ss))
	s := make([]string, len(ss))
	for i, st := range ss {
		d[i] = strconv.Itoa(st.Depth)
		s[i] = co(st.Coord) + "@" + strconv.Itoa(st.Depth)
		if st.Depth > 0 {
			s[i] += "<" + co(st.From)
		}
	}
	slices.Sort(s)
	return strings.Join(d, " ") + " | " + strings.Join(s, " ")
}

func edges(c []int32, dir pdk.Direction, label string) (string, error) {
	var s []string
	for e := range pdk.Edges(c, dir, label) {
		s = append(s, co(e.From)+">"+co(e.To)+" "+e.Label+" cost="+cost(e.Weight)+" v="+string(e.Value))
	}
	if err := pdk.Err(); err != nil {
		return "", err
	}
	slices.Sort(s)
	return strings.Join(s, "; "), nil
}

func path(from, to []int32, label string, dir pdk.Direction) (string, error) {
	p, ok, err := pdk.ShortestPath(from, to, label, dir)
	if err != nil || !ok {
		return "none", err
	}
	s := make([]string, len(p.Coords))
	for i, c := range p.Coords {
		s[i] = co(c)
	}
	return strings.Join(s, " ") + " cost=" + cost(p.Weight), nil
}

func kitcheck() error {
	var out []string
	say := func(s ...string) { out = append(out, strings.Join(s, "")) }
	gone, a, c1, c2 := []int32{5, 5}, []int32{0, 0}, []int32{1, 1}, []int32{2, 1}

	pdk.Log("kitcheck: start")
	switch string(pdk.Args()) {
	case "dfs":
		return dfs(a)
	case "near":
		return near()
	case "columns":
		return columns()
	}
	first, err := pdk.Delete(gone)
	if err != nil {
		return err
	}
	again, err := pdk.Delete(gone)
	if err != nil {
		return err
	}
	say("del 5,5: ", strconv.FormatBool(first), " ", strconv.FormatBool(again))
	_, ok, err := pdk.Get(gone)
	if err != nil {
		return err
	}
	say("get 5,5: ", strconv.FormatBool(ok))
	n := 0
	for range pdk.Region([]int32{0, 0}, []int32{9, 9}) {
		n++
	}
	if err := pdk.Err(); err != nil {
		return err
	}
	say("region 0,0..9,9: ", strconv.Itoa(n))

	// An inverted box: the loop yields nothing and the failure is a
	// BAD_ARGUMENT error, which this program handles and clears.
	for range pdk.Region([]int32{3, 0}, []int32{1, 5}) {
		return errors.New("kitcheck: an inverted box yielded a point")
	}
	if err := pdk.ClearErr(); errors.Is(err, pdk.ErrBadArgument) {
		say("inverted: bad argument")
	} else {
		say("inverted: ", errText(err))
	}

	if err := pdk.Link(pdk.Edge{From: c1, To: c2, Label: "new", Weight: 0.25, Value: []byte("val")}); err != nil {
		return err
	}
	e, err := edges(c1, pdk.Out, "")
	if err != nil {
		return err
	}
	say("edges 1,1 out: ", e)
	if e, err = edges(c2, pdk.Both, ""); err != nil {
		return err
	}
	say("edges 2,1 both: ", e)
	if e, err = edges(a, pdk.Out, "t"); err != nil {
		return err
	}
	say("edges 0,0 out t: ", e)
	first, err = pdk.Unlink(gone, a, "old")
	if err != nil {
		return err
	}
	again, err = pdk.Unlink(gone, a, "old")
	if err != nil {
		return err
	}
	say("unlink 5,5>0,0 old: ", strconv.FormatBool(first), " ", strconv.FormatBool(again))
	if e, err = edges(a, pdk.In, ""); err != nil {
		return err
	}
	say("edges 0,0 in: ", e)

	for _, w := range []struct {
		name  string
		start []int32
		o     pdk.WalkOptions
	}{
		{"bfs 0,0 t 3", a, pdk.WalkOptions{Order: pdk.BFS, MaxDepth: 3, Label: "t"}},
		{"bfs 0,0 t 3 limit 3", a, pdk.WalkOptions{Order: pdk.BFS, MaxDepth: 3, Label: "t", Limit: 3}},
		{"bfs 2,1 in t 5", c2, pdk.WalkOptions{MaxDepth: 5, Direction: pdk.In, Label: "t"}},
		{"default 0,0", a, pdk.WalkOptions{}},
	} {
		ss, err := pdk.Walk(w.start, w.o)
		if err != nil {
			return err
		}
		say("walk ", w.name, ": ", steps(ss))
	}

	for _, p := range []struct {
		name     string
		from, to []int32
		label    string
		dir      pdk.Direction
	}{
		{"0,0>2,1 p", a, c2, "p", pdk.Out},
		{"2,1>0,0 p in", c2, a, "p", pdk.In},
		{"2,1>0,0 p", c2, a, "p", pdk.Out},
		{"0,0>0,0", a, a, "", pdk.Out},
		{"0,0>1,1 both", a, c1, "", pdk.Both},
	} {
		s, err := path(p.from, p.to, p.label, p.dir)
		if err != nil {
			return err
		}
		say("path ", p.name, ": ", s)
	}
	pdk.Logf("kitcheck: %d lines", len(out))
	return pdk.OutputString(strings.Join(out, "\n"))
}

// dfs is the run with the argument "dfs": depth-first walks only.
func dfs(a []int32) error {
	var out []string
	for _, w := range []struct {
		name string
		o    pdk.WalkOptions
	}{
		{"dfs 0,0 t 3", pdk.WalkOptions{Order: pdk.DFS, MaxDepth: 3, Label: "t"}},
		{"dfs 0,0 t 3 limit 3", pdk.WalkOptions{Order: pdk.DFS, MaxDepth: 3, Label: "t", Limit: 3}},
	} {
		ss, err := pdk.Walk(a, w.o)
		if err != nil {
			return err
		}
		out = append(out, "walk "+w.name+": "+steps(ss))
	}
	return pdk.OutputString(strings.Join(out, "\n"))
}

func neighbors(ns []pdk.Neighbor) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = co(n.Coord) + "@" + cost(n.Dist) + "=" + string(n.Value)
	}
	return strings.Join(s, " ")
}

func badArgument(err error) string {
	if errors.Is(err, pdk.ErrBadArgument) {
		return "bad argument"
	}
	return errText(err)
}

// near is the run with the argument "near": the distance queries and
// hop-bounded paths.
func near() error {
	var out []string
	say := func(s ...string) { out = append(out, strings.Join(s, "")) }
	o, b, corner := []int32{0, 0}, []int32{37, -12}, []int32{-50, 50}
	inf := math.Inf(1)
	for _, q := range []struct {
		name    string
		c       []int32
		k       int
		maxDist float64
	}{
		{"0,0 k=5", o, 5, inf},
		{"37,-12 k=12 max=10", b, 12, 10},
		{"-50,50 k=3", corner, 3, inf},
		{"0,0 k=3 max=0", o, 3, 0},
		{"37,-12 k=3 max=0", b, 3, 0},
	} {
		ns, err := pdk.Nearby(q.c, q.k, q.maxDist)
		if err != nil {
			return err
		}
		say("nearby ", q.name, ": ", neighbors(ns))
	}
	all, err := pdk.Nearby(o, 1000, inf)
	if err != nil {
		return err
	}
	say("nearby 0,0 k=1000: n=", strconv.Itoa(len(all)), " last=", neighbors(all[len(all)-1:]))
	_, err = pdk.Nearby(o, 0, inf)
	say("nearby 0,0 k=0: ", badArgument(err))

	var s []string
	for c, v := range pdk.Within(b, 15) {
		s = append(s, co(c)+"="+string(v))
	}
	if err := pdk.Err(); err != nil {
		return err
	}
	slices.Sort(s)
	say("within 37,-12 r=15: n=", strconv.Itoa(len(s)), ": ", strings.Join(s, " "))
	for range pdk.Within(o, math.NaN()) {
		return errors.New("kitcheck: a radius of NaN yielded a point")
	}
	say("within 0,0 r=NaN: ", badArgument(pdk.ClearErr()))

	path := func(from, to []int32, hops int) (string, error) {
		p, ok, err := pdk.ShortestPathWith(from, to, pdk.PathOptions{Label: "h", MaxHops: hops})
		if err != nil || !ok {
			return "none", err
		}
		s := make([]string, len(p.Coords))
		for i, c := range p.Coords {
			s[i] = co(c)
		}
		return strings.Join(s, " ") + " cost=" + cost(p.Weight), nil
	}
	for _, hops := range []int{1, 2, 3, 0} {
		p, err := path(o, []int32{9, 9}, hops)
		if err != nil {
			return err
		}
		say("path 0,0>9,9 h hops=", strconv.Itoa(hops), ": ", p)
	}
	p, err := path([]int32{9, 9}, o, 2)
	if err != nil {
		return err
	}
	say("path 9,9>0,0 h hops=2: ", p)
	_, err = path(o, []int32{9, 9}, -1)
	say("path 0,0>9,9 h hops=-1: ", badArgument(err))
	return pdk.OutputString(strings.Join(out, "\n"))
}

func errText(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

func main() {}

// columns is the run with the argument "columns": each query read with
// the column reader and with the point iterator, which must agree.
func columns() error {
	var out []string
	for _, q := range []struct {
		name   string
		points iter.Seq2[[]int32, []byte]
		cols   iter.Seq[*pdk.Columns]
	}{
		{"region -20,-20..20,20", pdk.Region([]int32{-20, -20}, []int32{20, 20}), pdk.RegionColumns([]int32{-20, -20}, []int32{20, 20}, 7)},
		{"within 37,-12 r=15", pdk.Within([]int32{37, -12}, 15), pdk.WithinColumns([]int32{37, -12}, 15, 1)},
		{"region 100,100..200,200", pdk.Region([]int32{100, 100}, []int32{200, 200}), pdk.RegionColumns([]int32{100, 100}, []int32{200, 200}, 0)},
	} {
		var want []string
		for c, v := range q.points {
			want = append(want, co(c)+"="+string(v))
		}
		n, size, same := 0, 0, true
		d := pdk.Dims()
		for b := range q.cols {
			off := 0
			for i := range b.N {
				v := b.Vals[off : off+int(b.Lens[i])]
				off += len(v)
				same = same && n < len(want) && want[n] == co(b.Coords[i*d:(i+1)*d])+"="+string(v)
				n++
				size += len(v)
			}
		}
		if err := pdk.Err(); err != nil {
			return err
		}
		verdict := "same"
		if !same || n != len(want) {
			verdict = "differs"
		}
		out = append(out, "columns "+q.name+": n="+strconv.Itoa(n)+" bytes="+strconv.Itoa(size)+" "+verdict)
	}
	return pdk.OutputString(strings.Join(out, "\n"))
}
