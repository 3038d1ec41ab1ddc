package repl

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/engine"
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
		{"cube.region([0,0],[9,9]).co", "cube.region([0,0],[9,9]).", "", []string{"columns", "count"}},
		{"cube.within([0,0], 5).col", "cube.within([0,0], 5).", "", []string{"columns"}},
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

// TestCompletionMirrorsAPI checks the completer's lists against what a
// script on a real store can reach: cube's own properties, and the
// methods on the prototypes of a region iterator and a graph query, so a
// member added to vm/js without its completion fails here. Break caught:
// "columns" left out of regionMethods.
func TestCompletionMirrorsAPI(t *testing.T) {
	db, err := cube.Open(t.TempDir(), cube.Options{Engine: engine.Options{Sync: engine.SyncNone}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.CreateNamespace(ctx, "grid", engine.NamespaceOptions{Dims: 2}); err != nil {
		t.Fatal(err)
	}
	ev := NewEmbedded(db)
	defer ev.Close()
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{"Reflect.ownKeys(cube)", cubeMembers},
		{"Reflect.ownKeys(Object.getPrototypeOf(cube.region([0, 0], [1, 1]))).filter(k => typeof k === 'string')", regionMethods},
		{"Reflect.ownKeys(Object.getPrototypeOf(cube.V([0, 0]))).filter(k => typeof k === 'string')", gizmoMethods},
	} {
		res, err := ev.Eval(ctx, "grid", "JSON.stringify("+tc.expr+".sort())")
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		var got []string
		if err := json.Unmarshal(res.Output, &got); err != nil {
			t.Fatalf("%s: %s: %v", tc.expr, res.Output, err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s = %q; the completer offers %q", tc.expr, got, tc.want)
		}
	}
}
