package jsproc_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/jsproc"
	"github.com/cubelinux/cube/vm/vmtest"
)

// The test binary is its own worker: started with CUBE_JSPROC_WORKER=1 it
// serves requests on its standard input and output instead of testing.
func TestMain(m *testing.M) {
	if os.Getenv("CUBE_JSPROC_WORKER") == "1" {
		if err := jsproc.Serve(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func newPool(t testing.TB, o jsproc.Options) *jsproc.Pool {
	t.Helper()
	o.Command = []string{os.Args[0]}
	o.Env = append(o.Env, "CUBE_JSPROC_WORKER=1")
	p, err := jsproc.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

func compile(t testing.TB, p *jsproc.Pool, code string, lim vm.Limits) vm.Program {
	t.Helper()
	prg, err := p.Compile(context.Background(), []byte(code), lim)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return prg
}

// TestHostAcrossProcesses runs every kind of host call from a worker and
// checks what the host saw and what the program returned.
//
// Break seen caught: the path options not sent to the parent (call
// without its Path field): maxHops 1 found the 2-edge path.
func TestHostAcrossProcesses(t *testing.T) {
	p := newPool(t, jsproc.Options{})
	h := vmtest.NewHost(2)
	prg := compile(t, p, `function run(args) {
		for (let i = 0; i < 600; i++) cube.put([i, 0], "v" + i);
		cube.del([5, 0]);
		let n = 0, sum = 0;
		for (const {c, v} of cube.region([0, 0], [599, 0])) { n++; sum += c[0]; }
		cube.log("scanned", n);
		cube.link([1, 0], [2, 0], "road", {weight: 2.5});
		cube.link([2, 0], [3, 0], "road", {weight: 1});
		const edges = cube.edges([1, 0]).length;
		const walk = cube.walk([1, 0], {depth: 5}).length;
		const path = cube.path([1, 0], [3, 0]);
		const short = cube.path([1, 0], [3, 0], {maxHops: 1, label: "road"});
		return JSON.stringify({get: cube.get([7, 0]), miss: cube.get([5, 0]), n, sum, edges, walk, w: path.weight, short, args: cube.args});
	}`, vm.Limits{Timeout: 30 * time.Second}) // not the default 1 s: 600 host round trips under -race on a loaded machine took longer
	res, err := prg.Run(context.Background(), h, []byte("hi"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"get":"v7","miss":null,"n":599,"sum":179695,"edges":1,"walk":3,"w":3.5,"short":null,"args":"hi"}`
	if got := string(res.Output); got != want {
		t.Fatalf("output %s, want %s", got, want)
	}
	if res.Writes != 603 {
		t.Errorf("writes %d, want 603", res.Writes)
	}
	if len(res.Logs) != 1 || res.Logs[0] != "scanned 599" {
		t.Errorf("logs %q, want [scanned 599]", res.Logs)
	}
	if h.Len() != 599 {
		t.Errorf("host holds %d points, want 599", h.Len())
	}
}

// TestManyPrograms compiles more programs than a worker keeps, in one
// worker, and runs each, the latest first: the pool sends a program's code
// only to a worker it believes lacks it, so its mirror of the worker's
// cache must not say a program is there when the worker dropped it.
//
// Break seen caught: the worker dropping one program when its cache is
// full while the mirror forgets them all (the rule before), with the
// Unknown answer ignored by the pool: "does not define a function run".
func TestManyPrograms(t *testing.T) {
	p := newPool(t, jsproc.Options{MaxWorkers: 1})
	h := vmtest.NewHost(1)
	const n = 600 // over twice the worker's cache
	progs := make([]vm.Program, n)
	for i := range progs {
		progs[i] = compile(t, p, fmt.Sprintf("function run() { return %q }", fmt.Sprint(i)), vm.Limits{})
	}
	for round := range 2 {
		for i := n - 1; i >= 0; i-- {
			res, err := progs[i].Run(context.Background(), h, nil)
			if err != nil || string(res.Output) != fmt.Sprint(i) {
				t.Fatalf("round %d, program %d: %q, %v", round, i, res.Output, err)
			}
		}
	}
}

// TestWorkersStayWithinMax hammers a pool of two workers from eight
// goroutines: no more than two worker processes may ever start while
// none dies.
//
// Break seen caught: put freeing the run slot before the worker was back
// in the idle list (the order before): a run that took the slot in
// between found the list empty and started a third worker.
func TestWorkersStayWithinMax(t *testing.T) {
	p := newPool(t, jsproc.Options{MaxWorkers: 2})
	h := vmtest.NewHost(2)
	prg := compile(t, p, `function run(a) { return a }`, vm.Limits{})
	n := 300
	if testing.Short() {
		n = 60
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range n {
				if _, err := prg.Run(context.Background(), h, []byte("x")); err != nil {
					errs <- err
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
	if st := p.Stats(); st.Started > 2 || st.Killed+st.OOM+st.Crashed != 0 {
		t.Fatalf("%+v: want at most 2 workers started for MaxWorkers 2", st)
	}
}
