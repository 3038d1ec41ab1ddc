package repl

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// fakeEval answers the completer's questions; it evaluates nothing.
type fakeEval struct {
	Evaluator
	nss   []NamespaceInfo
	progs []ProgramInfo
}

func (f *fakeEval) Namespaces(context.Context) ([]NamespaceInfo, error) { return f.nss, nil }
func (f *fakeEval) Programs(context.Context, string) ([]ProgramInfo, error) {
	return f.progs, nil
}

func TestComplete(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"load.js", "lib.js", "other.txt"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ev := &fakeEval{
		nss:   []NamespaceInfo{{Name: "grid"}, {Name: "geo"}, {Name: "world"}},
		progs: []ProgramInfo{{Name: "nearby"}, {Name: "noop"}, {Name: "count"}},
	}
	c := &completer{ev: ev, ns: func() string { return "grid" }}
	c.learn("function myHelper() {}\nconst myConst = 1; let other = 2")
	tests := []struct {
		line       string
		head, tail string
		want       []string
	}{
		{"cube.re", "cube.", "", []string{"region"}},
		{"cube.", "cube.", "", cubeMembers},
		{"x = cube.get", "x = cube.", "", []string{"get", "getBytes", "getJSON"}},
		{"cube.V([0, 0]).ou", "cube.V([0, 0]).", "", []string{"out"}},
		{"cube.V([0,0]).out('road').a", "cube.V([0,0]).out('road').", "", []string{"all"}},
		{"cube.V(f(1), [2]).has(n => n.v).l", "cube.V(f(1), [2]).has(n => n.v).", "", []string{"limit"}},
		{"cube.region([0,0],[9,9]).to", "cube.region([0,0],[9,9]).", "", []string{"toArray"}},
		{"notcube.re", "notcube.", "", nil},
		{"foo(1).b", "foo(1).", "", nil},
		{"my", "", "", []string{"myConst", "myHelper"}},
		{"x = cu", "x = ", "", []string{"cube"}},
		{".", "", "", []string{".exit", ".help", ".json", ".load", ".memory", ".ns", ".prog", ".progs", ".run", ".stats", ".time", ".timeout"}},
		{".tim", "", "", []string{".time", ".timeout"}},
		{".timeout o", ".timeout ", "", []string{"off"}},
		{".memory ", ".memory ", "", []string{"off"}},
		{".pr", "", "", []string{".prog", ".progs"}},
		{".ns g", ".ns ", "", []string{"geo", "grid"}},
		{".ns ", ".ns ", "", []string{"geo", "grid", "world"}},
		{".run n", ".run ", "", []string{"nearby", "noop"}},
		{".json o", ".json ", "", []string{"off", "on"}},
		{".load " + dir + "/l", ".load ", "", []string{filepath.Join(dir, "lib.js"), filepath.Join(dir, "load.js")}},
		{".prog p " + dir + "/o", ".prog p ", "", []string{filepath.Join(dir, "other.txt")}},
		{".bogus x", ".bogus x", "", nil},
	}
	for _, tt := range tests {
		head, got, tail := c.complete(context.Background(), tt.line, len(tt.line))
		if head != tt.head || tail != tt.tail || !slices.Equal(got, tt.want) {
			t.Errorf("complete(%q) = %q, %q, %q; want %q, %q, %q", tt.line, head, got, tail, tt.head, tt.want, tt.tail)
		}
	}
	// The cursor in the middle of a line keeps what follows.
	head, got, tail := c.complete(context.Background(), "cube.get([1])", len("cube.get"))
	if head != "cube." || tail != "([1])" || !slices.Equal(got, []string{"get", "getBytes", "getJSON"}) {
		t.Errorf("mid-line completion = %q, %q, %q", head, got, tail)
	}
}
