package cube_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"log"
	"os"
	"strings"
	"testing"

	"github.com/cubelinux/cube"
)

// Example_quickstart is the package documentation's snippet (doc.go), run;
// the documentation leaves out the error checks.
func Example_quickstart() {
	dir, err := os.MkdirTemp("", "cube-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	db, err := cube.Open(dir, cube.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	ns, err := db.CreateNamespace(ctx, "world", cube.NamespaceOptions{Dims: 3})
	if err != nil {
		log.Fatal(err)
	}
	err = ns.Put(ctx, []int32{1, 2, 3}, []byte("hello"))
	if err != nil {
		log.Fatal(err)
	}
	info, err := db.Prog(ctx, "world", "greet", cube.JS, []byte(`function run(a) { return cube.get([1,2,3]) }`), cube.ProgOptions{ReadOnly: true})
	if err != nil {
		log.Fatal(err)
	}
	res, err := db.Run(ctx, "world", "greet", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %s\n", info.Name, res.Output) // greet: hello
	// Output:
	// greet: hello
}

// Example opens a store, writes values, registers a JavaScript program and
// a WebAssembly one (testdata/get.wat, built with wat2wasm), and runs
// them.
func Example() {
	dir, err := os.MkdirTemp("", "cube-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	db, err := cube.Open(dir, cube.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	ns, err := db.CreateNamespace(ctx, "world", cube.NamespaceOptions{Dims: 3})
	if err != nil {
		log.Fatal(err)
	}
	for x := int32(0); x < 3; x++ {
		if err := ns.Put(ctx, []int32{x, 0, 0}, fmt.Appendf(nil, "%d", 10*(x+1))); err != nil {
			log.Fatal(err)
		}
	}

	// JavaScript: sum the values of a region (read-only: runs on a snapshot).
	sum := `function run(args) {
		let s = 0
		for (const p of cube.region([0, 0, 0], [9, 9, 9])) s += Number(p.v)
		return {sum: s}
	}`
	if _, err := db.Prog(ctx, "world", "sum", cube.JS, []byte(sum), cube.ProgOptions{ReadOnly: true}); err != nil {
		log.Fatal(err)
	}
	res, err := db.Run(ctx, "world", "sum", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("sum: %s\n", res.Output)

	// WebAssembly (ABI v1): args are a coordinate, output is its value.
	code, err := os.ReadFile("testdata/get.wasm")
	if err != nil {
		log.Fatal(err)
	}
	info, err := db.Prog(ctx, "world", "get", cube.WASM, code, cube.ProgOptions{ReadOnly: true})
	if err != nil {
		log.Fatal(err)
	}
	args := binary.LittleEndian.AppendUint32(nil, 2)
	args = binary.LittleEndian.AppendUint32(args, 0)
	args = binary.LittleEndian.AppendUint32(args, 0)
	res, err = db.Run(ctx, "world", "get", args)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("get [2 0 0]: %s (version: %d hex digits)\n", res.Output, len(info.Version))

	// A read-write script: its writes commit when it succeeds.
	if _, err := db.Eval(ctx, "world", `cube.put([5, 5, 5], "40"); "ok"`, nil); err != nil {
		log.Fatal(err)
	}
	res, _ = db.Run(ctx, "world", "sum", nil)
	fmt.Printf("sum: %s\n", res.Output)

	info, _ = db.ProgInfo("world", "sum")
	fmt.Printf("%s: %d runs\n", info.Name, info.Telemetry.Runs)
	// Output:
	// sum: {"sum":60}
	// get [2 0 0]: 30 (version: 64 hex digits)
	// sum: {"sum":100}
	// sum: 2 runs
}

// TestSnippetsAreExamples: the code shown in the documentation is code an
// Example runs. Every line of doc.go's snippet must appear, in order, in
// Example_quickstart, and every line of README.md's "Using the engine"
// block in engine's Example (comment lines and blank lines aside; the
// examples add the error checks and the printing).
//
// Seen to fail: with README's Walk line starting from "start" (a name the
// example does not have), and with doc.go's snippet naming vm.JS again.
func TestSnippetsAreExamples(t *testing.T) {
	read := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// between returns the text after the first start and before the next end.
	between := func(s, start, end, what string) string {
		t.Helper()
		i := strings.Index(s, start)
		if i < 0 {
			t.Fatalf("%s: %q not found", what, start)
		}
		s = s[i+len(start):]
		j := strings.Index(s, end)
		if j < 0 {
			t.Fatalf("%s: %q not found after %q", what, end, start)
		}
		return s[:j]
	}
	var doc []string
	for _, l := range strings.Split(read("doc.go"), "\n") {
		if code, ok := strings.CutPrefix(l, "//\t"); ok {
			doc = append(doc, code)
		}
	}
	readme := strings.Split(between(read("README.md"), "## Using the engine\n\n```go\n", "```\n", "README.md"), "\n")
	for _, c := range []struct {
		what    string
		snippet []string
		file    string
		fn      string
	}{
		{"doc.go", doc, "example_test.go", "func Example_quickstart() {\n"},
		{"README.md's Using the engine", readme, "engine/example_test.go", "func Example() {\n"},
	} {
		body := strings.Split(between(read(c.file), c.fn, "\n}\n", c.file), "\n")
		var code []string
		for _, l := range c.snippet {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "//") {
				code = append(code, l)
			}
		}
		if len(code) < 5 {
			t.Errorf("%s: only %d lines of code found; has the snippet moved?", c.what, len(code))
		}
		for _, l := range code {
			for len(body) > 0 && strings.TrimSpace(body[0]) != l {
				body = body[1:]
			}
			if len(body) == 0 {
				t.Errorf("%s: %q is not in %s's %s (in this order)", c.what, l, c.file, strings.TrimSpace(strings.TrimSuffix(c.fn, "{\n")))
				break
			}
			body = body[1:]
		}
	}
}
