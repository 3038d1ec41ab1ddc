package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cubelinux/cube"
	"github.com/redis/go-redis/v9"
)

// TestMain lets a test re-run this binary as the cube command: with
// CUBE_TEST_MAIN set to a JSON array of arguments, it is cube.
func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == jsWorkerVerb {
		main() // a daemon's JavaScript worker: the daemon is this binary too
		return
	}
	if a := os.Getenv("CUBE_TEST_MAIN"); a != "" {
		var args []string
		if err := json.Unmarshal([]byte(a), &args); err != nil {
			panic(err)
		}
		os.Args = append([]string{"cube"}, args...)
		main()
		return
	}
	// go-redis logs failed dials of the clients that outlive a killed
	// daemon; the tests check those failures themselves.
	redis.SetLogger(quietLogger{})
	os.Exit(m.Run())
}

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

// cubeProc starts this test binary as "cube args...".
func cubeProc(t *testing.T, env []string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	b, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "CUBE_TEST_MAIN="+string(b)), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out
}

// cubeRun runs the cube command in this process and returns its exit code
// and output.
func cubeRun(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code := run(context.Background(), args, e)
	return code, out.String(), errb.String()
}

func shortDir(t *testing.T) string {
	d, err := os.MkdirTemp("", "cc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func waitSocket(t *testing.T, sock string, out *bytes.Buffer) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !daemonAt(sock) {
		if time.Now().After(deadline) {
			t.Fatalf("no daemon at %s; its output:\n%s", sock, out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCLI runs verbs in-process on an embedded data directory.
func TestCLI(t *testing.T) {
	data := filepath.Join(shortDir(t), "d")
	// Verbs never make a store (TestNoStoreCreated); serve, the REPL and
	// import do.
	db, err := cube.Open(data, cube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	steps := []struct {
		stdin string
		args  []string
		code  int
		out   string // substring of stdout, or of stderr when code != 0
	}{
		{"", []string{"--data", data, "ns.create", "w", "DIMS", "2"}, 0, "OK"},
		{"", []string{"--data", data, "put", "w", "1", "2", "hello"}, 0, "OK"},
		{"", []string{"--data", data, "GET", "w", "1", "2"}, 0, "hello"},
		{"", []string{"--data", data, "get", "w", "5", "5"}, 0, "(nil)"},
		{"", []string{"--data", data, "put", "w", "3", "4", "x"}, 0, "OK"},
		{"", []string{"--data", data, "region", "w", "0", "0", "9", "9"}, 0, "1 2\thello"},
		{"", []string{"--data", data, "--json", "region", "w", "0", "0", "9", "9", "COUNT"}, 0, "2"},
		{"", []string{"--data", data, "link", "w", "1", "2", "3", "4", "road"}, 0, "OK"},
		{"", []string{"--data", data, "path", "w", "1", "2", "3", "4"}, 0, "1 2\t3 4"},
		{"", []string{"--data", data, "get", "w", "1"}, 1, "wrong number of arguments for 'get' in namespace 'w'"},
		{"", []string{"--data", data, "get", "nope", "1"}, 1, "NONS"},
		{"", []string{"--data", data, "frobnicate"}, 2, "unknown command"},
		{"", []string{"--data", data, "prog", "p", "x.js"}, 2, "needs a namespace"},
		{"", []string{"--data", data, "-n", "w", "prog", "p", "x.txt"}, 2, "name it .wasm or .js"},
		{"", []string{"--data", data, "-n", "w", "run", "nope"}, 1, "NOPROG"},
		{"", []string{"--data", data, "stats"}, 0, "namespace"},
		{"", []string{"--data", data, "stats", "--json"}, 0, `"commands"`},
		{"", []string{"version"}, 0, "cube "},
		{"", []string{"help"}, 0, "cube serve"},
		{"", []string{"help", "commands"}, 0, "region ns min1..mind max1..maxd"},
		{"", []string{"serve", "--sync", "sometimes"}, 2, "--sync must be"},
		{"", []string{"-s"}, 2, "flag needs an argument: 's' in -s"},
	}
	for _, s := range steps {
		code, out, errs := cubeRun(t, s.stdin, s.args...)
		got := out
		if s.code != 0 {
			got = errs
		}
		if code != s.code || !strings.Contains(got, s.out) {
			t.Errorf("cube %s: exit %d, stdout %q, stderr %q; want exit %d and %q", strings.Join(s.args, " "), code, out, errs, s.code, s.out)
		}
	}

	// prog and run from files.
	js := filepath.Join(t.TempDir(), "greet.js")
	os.WriteFile(js, []byte(`function run(a) { return "hi " + a + " " + cube.get([1, 2]) }`), 0o644)
	if code, out, errs := cubeRun(t, "", "--data", data, "-n", "w", "prog", "greet", js); code != 0 || len(strings.TrimSpace(out)) != 64 {
		t.Fatalf("prog: %d %q %q", code, out, errs)
	}
	if code, out, errs := cubeRun(t, "", "--data", data, "-n", "w", "run", "greet", "you"); code != 0 || out != "hi you hello\n" {
		t.Fatalf("run: %d %q %q", code, out, errs)
	}

	// import, export, verify.
	csv := filepath.Join(t.TempDir(), "in.csv")
	os.WriteFile(csv, []byte("x,y,value\n10,20,a\n-1,-2,\"b, with comma\"\n"), 0o644)
	if code, _, errs := cubeRun(t, "", "--data", data, "-n", "imp", "import", "--dims", "2", csv); code != 0 {
		t.Fatalf("import: %s", errs)
	}
	code, out, errs := cubeRun(t, "", "--data", data, "-n", "imp", "export")
	if code != 0 || !strings.Contains(out, `{"c":[10,20],"v":"a"}`) || !strings.Contains(out, `{"c":[-1,-2],"v":"b, with comma"}`) {
		t.Fatalf("export: %d %q %q", code, out, errs)
	}
	jl := filepath.Join(t.TempDir(), "out.jsonl")
	os.WriteFile(jl, []byte(out+`{"c":[5,5],"vb64":"AP8="}`+"\n"), 0o644)
	if code, _, errs := cubeRun(t, "", "--data", data, "-n", "imp2", "import", "--dims", "2", jl); code != 0 {
		t.Fatalf("import jsonl: %s", errs)
	}
	_, out2, _ := cubeRun(t, "", "--data", data, "-n", "imp2", "export")
	if !strings.Contains(out2, `{"c":[5,5],"vb64":"AP8="}`) || !strings.Contains(out2, `"b, with comma"`) {
		t.Fatalf("round trip: %q", out2)
	}
	code, out, errs = cubeRun(t, "", "verify", data)
	if code != 0 || !strings.Contains(out, "namespace imp2: 2 dims") || !strings.Contains(out, ": ok") {
		t.Fatalf("verify: %d %q %q", code, out, errs)
	}
}

// TestStress runs a short cube stress on an embedded store: 0 errors.
func TestStress(t *testing.T) {
	d := "10s"
	if testing.Short() {
		d = "2s"
	}
	code, out, errs := cubeRun(t, "", "stress", "--embedded", "--duration", d, "--clients", "4", "--json")
	if code != 0 {
		t.Fatalf("stress: exit %d\n%s\n%s", code, out, errs)
	}
	var r stressReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Errors != 0 || r.Pairs == 0 || r.Server["run"].Calls != r.Pairs {
		t.Fatalf("stress report: %+v", r)
	}
	t.Logf("stress %s: %d pairs, %.0f pairs/s, server run mean %.1f µs p50 %.1f µs", d, r.Pairs, r.PairsPerSec, r.Server["run"].MeanUS, r.Server["run"].P50US)
}

var demoFull = flag.Bool("demo.full", false, "TestDemo loads every city (a minute under -race)")

// TestDemo runs cube demo on a sample of the cities (all of them with
// -demo.full) with the repository's WASM example.
func TestDemo(t *testing.T) {
	data := filepath.Join(shortDir(t), "world.data")
	args := []string{"demo", "--examples", "../../examples", "--data", data, "--sample", "3000"}
	if *demoFull {
		args = args[:5]
	}
	code, out, errs := cubeRun(t, "", args...)
	if code != 0 {
		t.Fatalf("demo: exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"CC BY 4.0", "within 50 km of Paris", "shortest road Paris -> Berlin", "run nearby(Paris", "run walk: lightest roads"} {
		if !strings.Contains(out, want) {
			t.Fatalf("demo output lacks %q:\n%s", want, out)
		}
	}
	// The WASM walk shows a walk, not one step back and forth.
	if strings.Contains(out, "lightest roads, 0 hops") || strings.Contains(out, "lightest roads, 1 hops") {
		t.Errorf("the WASM walk is trivial:\n%s", out)
	}
	// Every command it suggests works on the store it leaves.
	var tried int
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "cube --data ") {
			continue
		}
		tried++
		f := strings.Fields(line)[1:]
		code, o, e := cubeRun(t, "", f...)
		if code != 0 || strings.TrimSpace(o) == "" {
			t.Errorf("%s: exit %d, output %q, %s", line, code, o, e)
		}
	}
	if tried < 3 {
		t.Errorf("the demo suggested %d commands to try, want 3:\n%s", tried, out)
	}
}
