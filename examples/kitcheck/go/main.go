//go:build wasip1

// Command kitcheck calls every function of the Go guest kit
// (plugins/pdk/go) that the other examples leave out — Delete, Link,
// Unlink, Edges, Walk (BFS and DFS), ShortestPath, Log — and the
// inverted-box error path, and prints what each returned. Its twins in C,
// AssemblyScript and JavaScript must print the same text; the contract is
// in plugins/pdk/conformance's doc.
package main

import (
	"errors"
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
	if string(pdk.Args()) == "dfs" {
		return dfs(a)
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

func errText(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

func main() {}
