package cube_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/plugins"
	"github.com/cubelinux/cube/vm"
)

var ctx = context.Background()

func open(t testing.TB, dir string, o cube.Options) *cube.DB {
	t.Helper()
	db, err := cube.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func newNS(t testing.TB, db *cube.DB, name string, dims int) *cube.Namespace {
	t.Helper()
	ns, err := db.CreateNamespace(ctx, name, cube.NamespaceOptions{Dims: dims})
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

func prog(t testing.TB, db *cube.DB, ns, name string, kind vm.Kind, code []byte, o cube.ProgOptions) cube.ProgramInfo {
	t.Helper()
	info, err := db.Prog(ctx, ns, name, kind, code, o)
	if err != nil {
		t.Fatalf("prog %s: %v", name, err)
	}
	return info
}

// dump renders every value and every edge of a namespace, to compare
// states.
func dump(t testing.TB, ns *cube.Namespace) string {
	t.Helper()
	lo := make([]int32, ns.Dims())
	hi := make([]int32, ns.Dims())
	for i := range lo {
		lo[i], hi[i] = math.MinInt32, math.MaxInt32
	}
	var sb strings.Builder
	err := ns.View(ctx, func(tx *cube.Tx) error {
		seq, err := tx.Region(lo, hi, 0)
		if err != nil {
			return err
		}
		var coords [][]int32
		for c, v := range seq {
			fmt.Fprintf(&sb, "%v=%q\n", c, v)
			coords = append(coords, append([]int32(nil), c...))
		}
		for _, c := range coords {
			es, err := tx.Edges(c, cube.Both, "")
			if err != nil {
				return err
			}
			for e := range es {
				fmt.Fprintf(&sb, "%v-%s->%v\n", e.From, e.Label, e.To)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sb.String()
}

func wantKind(t testing.TB, err error, k vm.ErrorKind) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %v", k)
	}
	if got := vm.KindOf(err); got != k {
		t.Fatalf("error %v: kind %v, want %v", err, got, k)
	}
}

// TestFailedRunLeavesNothing: a read-write run that writes and then fails
// in any way — trap, guest error, timeout, limits — leaves no write
// visible, and the next run works and commits.
func TestFailedRunLeavesNothing(t *testing.T) {
	db := open(t, t.TempDir(), cube.Options{Engine: engine.Options{Sync: engine.SyncNone}, TelemetryInterval: -1})
	ns := newNS(t, db, "t", 3)
	if err := ns.Put(ctx, []int32{9, 9, 9}, []byte("before")); err != nil {
		t.Fatal(err)
	}
	short := vm.Limits{Timeout: 200 * time.Millisecond}
	prog(t, db, "t", "wat", vm.WASM, mustRead(t, "testdata/writetrap.wasm"), cube.ProgOptions{Limits: short})
	jsWriter := func(body string) []byte {
		return []byte(`function run(a) {
			for (let i = 0; i < 10; i++) cube.put([1, 2, 3 + i], "written")
			cube.link([1, 2, 3], [1, 2, 12], "e")
			if (a === "good") return "ok"
			` + body + `
		}`)
	}
	tests := []struct {
		name string
		kind vm.Kind
		code []byte
		lim  vm.Limits
		args []byte
		want vm.ErrorKind
	}{
		{"wasm trap", vm.WASM, nil, short, coordArgs(1, 2, 3, 1), vm.KindTrap},
		{"wasm guest error", vm.WASM, nil, short, coordArgs(1, 2, 3, 2), vm.KindGuest},
		{"wasm timeout", vm.WASM, nil, short, coordArgs(1, 2, 3, 3), vm.KindTimeout},
		{"js throw", vm.JS, jsWriter(`throw new Error("no")`), short, nil, vm.KindGuest},
		{"js timeout", vm.JS, jsWriter(`for (;;) {}`), short, nil, vm.KindTimeout},
		{"js regex", vm.JS, jsWriter(`return /^(a+)+\1$/.test("a".repeat(30) + "b")`), short, nil, vm.KindTimeout},
		{"js repeat", vm.JS, jsWriter(`return "x".repeat(2 ** 30)`), vm.Limits{}, nil, vm.KindMemoryLimit},
		{"js output", vm.JS, jsWriter(`return "x".repeat(2 << 20)`), vm.Limits{}, nil, vm.KindOutputLimit},
		{"js write limit", vm.JS, jsWriter(`return "unreachable"`), vm.Limits{Writes: 5}, nil, vm.KindWriteLimit},
		{"js stack", vm.JS, jsWriter(`const f = () => f(); f()`), short, nil, vm.KindTrap},
	}
	before := dump(t, ns)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, good := "wat", coordArgs(1, 2, 3, 0)
			if tt.kind == vm.JS {
				name, good = "js", []byte("good")
				prog(t, db, "t", name, vm.JS, tt.code, cube.ProgOptions{Limits: tt.lim})
			}
			_, err := db.Run(ctx, "t", name, tt.args)
			wantKind(t, err, tt.want)
			if got := dump(t, ns); got != before {
				t.Fatalf("failed run left writes:\n%s", got)
			}
			if tt.want == vm.KindWriteLimit {
				return // the good path writes too much as well
			}
			if _, err := db.Run(ctx, "t", name, good); err != nil {
				t.Fatalf("next run: %v", err)
			}
			after := dump(t, ns)
			if after == before || !strings.Contains(after, `[1 2 12]="written"`) {
				t.Fatalf("good run's writes missing:\n%s", after)
			}
			// Undo, for the next case.
			err = ns.Update(ctx, func(tx *cube.Tx) error {
				for i := int32(0); i < 10; i++ {
					tx.Delete([]int32{1, 2, 3 + i})
				}
				_, err := tx.Unlink([]int32{1, 2, 3}, []int32{1, 2, 12}, "e")
				if tt.kind == vm.WASM {
					_, err = tx.Unlink([]int32{1, 2, 3}, []int32{1, 2, 12}, "writ")
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := dump(t, ns); got != before {
				t.Fatalf("cleanup:\n%s", got)
			}
		})
	}
}

// TestHostileModules: hostile WASM modules through the registry end with
// the right typed error, or are refused at Prog; the store is unchanged
// and the next run is fine.
func TestHostileModules(t *testing.T) {
	db := open(t, t.TempDir(), cube.Options{Engine: engine.Options{Sync: engine.SyncNone}, TelemetryInterval: -1})
	ns := newNS(t, db, "h", 3)
	ns.Put(ctx, []int32{1, 2, 3}, []byte("value"))
	prog(t, db, "h", "get", vm.WASM, mustRead(t, "testdata/get.wasm"), cube.ProgOptions{ReadOnly: true})
	before := dump(t, ns)
	short := vm.Limits{Timeout: 200 * time.Millisecond}
	runs := []struct {
		module string
		lim    vm.Limits
		want   vm.ErrorKind
	}{
		{"loop", short, vm.KindTimeout},
		{"recurse", short, vm.KindTimeout},
		{"stack", vm.Limits{Timeout: 10 * time.Second}, vm.KindStackLimit},
		{"membomb", vm.Limits{Timeout: 5 * time.Second, MemoryBytes: 4 << 20}, vm.KindMemoryLimit},
		{"output", short, vm.KindOutputLimit},
	}
	for _, tt := range runs {
		t.Run(tt.module, func(t *testing.T) {
			prog(t, db, "h", tt.module, vm.WASM, mustRead(t, "vm/wasm/testdata/"+tt.module+".wasm"), cube.ProgOptions{Limits: tt.lim})
			_, err := db.Run(ctx, "h", tt.module, coordArgs(1, 0, 0, 0))
			wantKind(t, err, tt.want)
			if got := dump(t, ns); got != before {
				t.Fatalf("store changed:\n%s", got)
			}
			if res, err := db.Run(ctx, "h", "get", coordArgs(1, 2, 3)); err != nil || string(res.Output) != "value" {
				t.Fatalf("next run: %q %v", res.Output, err)
			}
		})
	}
	refused := []struct {
		module string
		want   vm.ErrorKind
		msg    string
	}{
		{"pathopen", vm.KindBadModule, "path_open"},
		{"sock", vm.KindBadModule, "sock_accept"},
		{"v2", vm.KindABIVersion, ""},
		{"startloop", vm.KindTimeout, ""},
	}
	for _, tt := range refused {
		t.Run(tt.module, func(t *testing.T) {
			lsn := ns.Info().LastLSN
			_, err := db.Prog(ctx, "h", tt.module, vm.WASM, mustRead(t, "vm/wasm/testdata/"+tt.module+".wasm"), cube.ProgOptions{Limits: short})
			wantKind(t, err, tt.want)
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not name %q", err, tt.msg)
			}
			if _, err := db.Run(ctx, "h", tt.module, nil); !errors.Is(err, plugins.ErrNoProgram) {
				t.Errorf("refused module registered: %v", err)
			}
			if got := ns.Info().LastLSN; got != lsn {
				t.Errorf("refused Prog wrote: LSN %d -> %d", lsn, got)
			}
		})
	}
}

// TestReadOnlyProgram: a read-only program cannot write.
func TestReadOnlyProgram(t *testing.T) {
	db := open(t, t.TempDir(), cube.Options{Engine: engine.Options{Sync: engine.SyncNone}, TelemetryInterval: -1})
	ns := newNS(t, db, "r", 2)
	prog(t, db, "r", "w", vm.JS, []byte(`function run() { cube.put([1, 1], "x"); return "wrote" }`), cube.ProgOptions{ReadOnly: true})
	_, err := db.Run(ctx, "r", "w", nil)
	wantKind(t, err, vm.KindReadOnly)
	if got := dump(t, ns); got != "" {
		t.Fatalf("read-only run wrote:\n%s", got)
	}
	prog(t, db, "r", "wat", vm.WASM, mustRead(t, "testdata/writetrap.wasm"), cube.ProgOptions{Limits: vm.Limits{ReadOnly: true}})
	db.CreateNamespace(ctx, "r3", cube.NamespaceOptions{Dims: 3})
	prog(t, db, "r3", "wat", vm.WASM, mustRead(t, "testdata/writetrap.wasm"), cube.ProgOptions{ReadOnly: true})
	_, err = db.Run(ctx, "r3", "wat", coordArgs(0, 0, 0, 0))
	wantKind(t, err, vm.KindReadOnly)
}

// TestNamespacesArePartitions: a program sees its own namespace only, and
// programs are registered per namespace.
func TestNamespacesArePartitions(t *testing.T) {
	db := open(t, t.TempDir(), cube.Options{Engine: engine.Options{Sync: engine.SyncNone}, TelemetryInterval: -1})
	a, b := newNS(t, db, "a", 3), newNS(t, db, "b", 3)
	a.Put(ctx, []int32{0, 0, 0}, []byte("in a"))
	b.Put(ctx, []int32{0, 0, 0}, []byte("in b"))
	b.Put(ctx, []int32{1, 1, 1}, []byte("also b"))
	code := []byte(`function run() {
		const all = cube.region([-1e9, -1e9, -1e9], [1e9, 1e9, 1e9]).toArray().map(p => p.v)
		cube.put([7, 7, 7], "from a")
		return all.join(",")
	}`)
	prog(t, db, "a", "p", vm.JS, code, cube.ProgOptions{})
	res, err := db.Run(ctx, "a", "p", nil)
	if err != nil || string(res.Output) != "in a" {
		t.Fatalf("%q %v", res.Output, err)
	}
	if _, err := db.Run(ctx, "b", "p", nil); !errors.Is(err, plugins.ErrNoProgram) {
		t.Fatalf("program of a runs in b: %v", err)
	}
	if v, err := b.Get(ctx, []int32{7, 7, 7}); err == nil {
		t.Fatalf("a's program wrote into b: %q", v)
	}
	if ps, _ := db.Progs("b"); len(ps) != 0 {
		t.Fatalf("b lists %v", ps)
	}
	if _, err := db.Run(ctx, "nope", "p", nil); !errors.Is(err, engine.ErrNoNamespace) {
		t.Fatalf("run in a missing namespace: %v", err)
	}
}

// TestReRegister: identical code and options are a no-op (no log write);
// other code or options are a new version that replaces the old.
func TestReRegister(t *testing.T) {
	db := open(t, t.TempDir(), cube.Options{Engine: engine.Options{Sync: engine.SyncNone}, TelemetryInterval: -1})
	newNS(t, db, "n", 1)
	v1 := []byte(`function run() { return "v1" }`)
	i1 := prog(t, db, "n", "p", vm.JS, v1, cube.ProgOptions{})
	nsLSN := func() uint64 { n, _ := db.Namespace("n"); return n.Info().LastLSN }
	lsn := nsLSN()
	again := prog(t, db, "n", "p", vm.JS, v1, cube.ProgOptions{})
	if again.Version != i1.Version || !again.Registered.Equal(i1.Registered) {
		t.Fatalf("re-registration changed the program: %+v -> %+v", i1, again)
	}
	if got := nsLSN(); got != lsn {
		t.Fatalf("identical re-registration wrote to the log: LSN %d -> %d", lsn, got)
	}
	i2 := prog(t, db, "n", "p", vm.JS, v1, cube.ProgOptions{Limits: vm.Limits{Timeout: time.Second}})
	if i2.Version == i1.Version {
		t.Fatal("other options, same version")
	}
	if got := nsLSN(); got == lsn {
		t.Fatal("new version not written")
	}
	i3 := prog(t, db, "n", "p", vm.JS, []byte(`function run() { return "v2" }`), cube.ProgOptions{})
	if res, err := db.Run(ctx, "n", "p", nil); err != nil || string(res.Output) != "v2" {
		t.Fatalf("%q %v", res.Output, err)
	}
	if ps, _ := db.Progs("n"); len(ps) != 1 || ps[0].Version != i3.Version {
		t.Fatalf("progs: %+v", ps)
	}
	if err := db.Unprog(ctx, "n", "p"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Run(ctx, "n", "p", nil); !errors.Is(err, plugins.ErrNoProgram) {
		t.Fatalf("run after unprog: %v", err)
	}
	if err := db.Unprog(ctx, "n", "p"); !errors.Is(err, plugins.ErrNoProgram) {
		t.Fatalf("second unprog: %v", err)
	}
	if _, err := db.ProgInfo("n", "p"); !errors.Is(err, plugins.ErrNoProgram) {
		t.Fatalf("info after unprog: %v", err)
	}
}

// TestProgErrors: bad names, kinds and code are refused with typed errors.
func TestProgErrors(t *testing.T) {
	db := open(t, t.TempDir(), cube.Options{Engine: engine.Options{Sync: engine.SyncNone}, TelemetryInterval: -1})
	newNS(t, db, "n", 1)
	ok := []byte(`function run() {}`)
	for _, tt := range []struct {
		name string
		kind vm.Kind
		code []byte
		want error
	}{
		{"", vm.JS, ok, plugins.ErrBadName},
		{"a/b", vm.JS, ok, plugins.ErrBadName},
		{strings.Repeat("x", plugins.MaxNameLen+1), vm.JS, ok, plugins.ErrBadName},
		{"p", "lua", ok, plugins.ErrBadKind},
		{"p", vm.JS, nil, plugins.ErrEmptyCode},
		{"p", vm.JS, []byte("function run( {"), vm.ErrBadModule},
		{"p", vm.JS, []byte("function nope() {}"), vm.ErrBadModule},
		{"p", vm.WASM, []byte("not wasm"), vm.ErrBadModule},
	} {
		if _, err := db.Prog(ctx, "n", tt.name, tt.kind, tt.code, cube.ProgOptions{}); !errors.Is(err, tt.want) {
			t.Errorf("Prog(%q, %s, %q): %v, want %v", tt.name, tt.kind, tt.code, err, tt.want)
		}
	}
	if _, err := db.Prog(ctx, "missing", "p", vm.JS, ok, cube.ProgOptions{}); !errors.Is(err, engine.ErrNoNamespace) {
		t.Errorf("prog in a missing namespace: %v", err)
	}
	if ps, _ := db.Progs("n"); len(ps) != 0 {
		t.Errorf("refused programs registered: %+v", ps)
	}
}

// TestNewVersionIsAtomic: while runs go on, a new version replaces the old:
// every run runs one version entirely, and every run that starts after
// Prog returned runs the new one.
func TestNewVersionIsAtomic(t *testing.T) {
	db := open(t, t.TempDir(), cube.Options{Engine: engine.Options{Sync: engine.SyncNone}, TelemetryInterval: -1})
	newNS(t, db, "n", 1)
	code := func(v int, ro bool) []byte {
		// Read-write versions write their number at 0..4 and read it
		// back; a mix would show as a mismatch.
		if ro {
			return fmt.Appendf(nil, `function run() { return "v%d" }`, v)
		}
		return fmt.Appendf(nil, `function run() {
			for (let i = 0; i < 5; i++) cube.put([i], "v%d")
			const s = new Set(cube.region([0], [4]).toArray().map(p => p.v))
			return [...s].join(",")
		}`, v)
	}
	for _, ro := range []bool{true, false} {
		t.Run(fmt.Sprintf("readonly=%v", ro), func(t *testing.T) {
			prog(t, db, "n", "p", vm.JS, code(0, ro), cube.ProgOptions{ReadOnly: ro})
			stop := make(chan struct{})
			var wg sync.WaitGroup
			errs := make(chan error, 4)
			for range 2 {
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						res, err := db.Run(ctx, "n", "p", nil)
						if err != nil || !strings.HasPrefix(string(res.Output), "v") || strings.Contains(string(res.Output), ",") {
							errs <- fmt.Errorf("run: %q %v", res.Output, err)
							return
						}
						time.Sleep(50 * time.Microsecond)
					}
				})
			}
			n := 5
			if testing.Short() {
				n = 3
			}
			for v := 1; v <= n; v++ {
				prog(t, db, "n", "p", vm.JS, code(v, ro), cube.ProgOptions{ReadOnly: ro})
				res, err := db.Run(ctx, "n", "p", nil)
				if want := fmt.Sprintf("v%d", v); err != nil || string(res.Output) != want {
					t.Fatalf("after Prog of v%d: %q %v", v, res.Output, err)
				}
			}
			close(stop)
			wg.Wait()
			select {
			case err := <-errs:
				t.Fatal(err)
			default:
			}
		})
	}
}

// TestSnapshotsWhileWritersCommit: read-only runs see consistent
// snapshots while read-write runs commit; read-write runs are
// serializable (no lost increments).
func TestSnapshotsWhileWritersCommit(t *testing.T) {
	db := open(t, t.TempDir(), cube.Options{Engine: engine.Options{Sync: engine.SyncNone}, TelemetryInterval: -1})
	newNS(t, db, "s", 1)
	const cells = 50
	prog(t, db, "s", "inc", vm.JS, fmt.Appendf(nil, `function run() {
		const n = Number(cube.get([0]) ?? "0") + 1
		for (let i = 0; i < %d; i++) cube.put([i], String(n))
		return String(n)
	}`, cells), cube.ProgOptions{})
	prog(t, db, "s", "check", vm.JS, []byte(`function run() {
		const vs = new Set(cube.region([0], [1000]).toArray().map(p => p.v))
		return vs.size <= 1 ? "ok" : "torn " + [...vs].join(",")
	}`), cube.ProgOptions{ReadOnly: true})
	writers, readers, iters := 2, 2, 100
	if testing.Short() {
		iters = 30
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers+readers)
	for range writers {
		wg.Go(func() {
			for range iters {
				if _, err := db.Run(ctx, "s", "inc", nil); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for range readers {
		wg.Go(func() {
			for range iters {
				res, err := db.Run(ctx, "s", "check", nil)
				if err != nil || string(res.Output) != "ok" {
					errs <- fmt.Errorf("reader: %q %v", res.Output, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	ns, _ := db.Namespace("s")
	if v, err := ns.Get(ctx, []int32{cells - 1}); err != nil || string(v) != fmt.Sprint(writers*iters) {
		t.Fatalf("after %d increments: %q %v", writers*iters, v, err)
	}
}

// TestSession: a session keeps its JavaScript state between Evals; each
// Eval commits its writes only if it succeeds.
func TestSession(t *testing.T) {
	db := open(t, t.TempDir(), cube.Options{Engine: engine.Options{Sync: engine.SyncNone}, TelemetryInterval: -1, Limits: vm.Limits{Timeout: 200 * time.Millisecond}})
	ns := newNS(t, db, "s", 2)
	newNS(t, db, "other", 2)
	s := db.Session("s")
	defer s.Close()
	if _, err := s.Eval(ctx, `function twice(x) { return 2 * x }; var n = 0`); err != nil {
		t.Fatal(err)
	}
	c, err := s.Eval(ctx, `cube.put([1, 1], String(twice(21))); ++n`)
	if err != nil || string(c.Output) != "1" || c.Type != "number" {
		t.Fatalf("%+v %v", c, err)
	}
	if v, _ := ns.Get(ctx, []int32{1, 1}); string(v) != "42" {
		t.Fatalf("session write: %q", v)
	}
	_, err = s.Eval(ctx, `cube.put([2, 2], "x"); for (;;) {}`)
	wantKind(t, err, vm.KindTimeout)
	if _, err := ns.Get(ctx, []int32{2, 2}); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("failed eval's write visible: %v", err)
	}
	// EvalArgs: the session's state, and cube.args for that call only.
	if c, err := s.EvalArgs(ctx, `twice(Number(cube.args)) + ":" + n`, []byte("5")); err != nil || string(c.Output) != "10:1" {
		t.Fatalf("EvalArgs: %q %v", c.Output, err)
	}
	if c, err := s.Eval(ctx, `JSON.stringify(cube.args)`); err != nil || string(c.Output) != `""` {
		t.Fatalf("cube.args after EvalArgs: %q %v", c.Output, err)
	}
	s.Use("other")
	if c, err := s.Eval(ctx, `cube.get([1, 1]) + ":" + twice(2)`); err != nil || string(c.Output) != "null:4" {
		t.Fatalf("after Use: %q %v", c.Output, err)
	}
	s.Use("missing")
	if _, err := s.Eval(ctx, `1`); !errors.Is(err, engine.ErrNoNamespace) {
		t.Fatalf("eval in a missing namespace: %v", err)
	}
	// Ad-hoc Eval: no state kept.
	if _, err := db.Eval(ctx, "s", `var kept = 1`, nil); err != nil {
		t.Fatal(err)
	}
	if c, err := db.Eval(ctx, "s", `typeof kept + cube.args`, []byte("!")); err != nil || string(c.Output) != "undefined!" {
		t.Fatalf("%q %v", c.Output, err)
	}
}

// TestTelemetry: runs, errors by kind, latency, host calls and output bytes
// are counted, and survive Close and reopen.
func TestTelemetry(t *testing.T) {
	dir := t.TempDir()
	db, err := cube.Open(dir, cube.Options{Engine: engine.Options{Sync: engine.SyncNone}, TelemetryInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	newNS(t, db, "t", 1)
	prog(t, db, "t", "p", vm.JS, []byte(`function run(a) {
		cube.get([1])
		if (a === "throw") throw new Error("asked to")
		if (a === "loop") for (;;) {}
		return "out"
	}`), cube.ProgOptions{ReadOnly: true, Limits: vm.Limits{Timeout: 100 * time.Millisecond}})
	for _, a := range []string{"", "", "", "throw", "loop"} {
		db.Run(ctx, "t", "p", []byte(a))
	}
	check := func(when string, db *cube.DB) {
		t.Helper()
		info, err := db.ProgInfo("t", "p")
		if err != nil {
			t.Fatal(err)
		}
		tel := info.Telemetry
		if tel.Runs != 5 || tel.Errors["guest error"] != 1 || tel.Errors["timeout"] != 1 || len(tel.Errors) != 2 {
			t.Fatalf("%s: runs %d errors %v", when, tel.Runs, tel.Errors)
		}
		if tel.BytesOut != 9 || tel.HostCalls < 3 {
			t.Fatalf("%s: bytes out %d, host calls %d", when, tel.BytesOut, tel.HostCalls)
		}
		l := tel.Latency
		if l.Count != 5 || l.P50 <= 0 || l.P99 < l.P50 || l.Max < 100*time.Millisecond*9/10 {
			t.Fatalf("%s: latency %+v", when, l)
		}
		st := db.Stats()
		if len(st.Programs) != 1 || st.Programs[0].Telemetry.Runs != 5 {
			t.Fatalf("%s: stats %+v", when, st.Programs)
		}
	}
	check("before close", db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open(t, dir, cube.Options{Engine: engine.Options{Sync: engine.SyncNone}, TelemetryInterval: -1})
	check("after reopen", db)
}

// TestDropNamespace: programs go with their namespace.
func TestDropNamespace(t *testing.T) {
	db := open(t, t.TempDir(), cube.Options{Engine: engine.Options{Sync: engine.SyncNone}, TelemetryInterval: -1})
	newNS(t, db, "d", 1)
	prog(t, db, "d", "p", vm.JS, []byte(`function run() { return "x" }`), cube.ProgOptions{})
	if _, err := db.Run(ctx, "d", "p", nil); err != nil {
		t.Fatal(err)
	}
	if err := db.DropNamespace(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Run(ctx, "d", "p", nil); !errors.Is(err, engine.ErrNoNamespace) {
		t.Fatalf("run in a dropped namespace: %v", err)
	}
	newNS(t, db, "d", 1)
	if _, err := db.Run(ctx, "d", "p", nil); !errors.Is(err, plugins.ErrNoProgram) {
		t.Fatalf("program survived its namespace: %v", err)
	}
}
