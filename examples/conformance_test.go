package examples_test

import (
	"context"
	"flag"
	"testing"
	"time"

	"github.com/cubelinux/cube/plugins/pdk/conformance"
)

// -rebuilt names a directory laid out like this one
// (<program>/<lang>/<program>.wasm) holding modules rebuilt from source;
// .ci/check.d/examples.sh sets it. Each rebuilt module must then satisfy the
// table and behave exactly like the committed one.
var rebuilt = flag.String("rebuilt", "", "directory of rebuilt example modules to compare with the committed ones")

// -lang limits the run to some languages (comma-free: one language), for a
// quick loop while editing one kit.
var onlyLang = flag.String("lang", "", "run only this language's builds")

// TestConformance runs every case of the table against every language's
// build of its program: each must give the table's outcome, so all of them
// give the same outcome.
func TestConformance(t *testing.T) {
	ctx := context.Background()
	sb, err := conformance.NewSandboxes(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close(ctx) })
	for _, l := range conformance.Languages() {
		if *onlyLang != "" && string(l) != *onlyLang {
			continue
		}
		t.Run(string(l), func(t *testing.T) {
			if l == conformance.Go && conformance.Race {
				t.Skip("Go guests take ~50 s each to compile under -race; .ci/check.d/examples.sh runs them without")
			}
			for _, c := range conformance.Cases() {
				if !conformance.Has(c.Program, l) {
					continue
				}
				t.Run(c.Name, func(t *testing.T) {
					committed := runFile(t, sb, conformance.File(".", c.Program, l), c)
					if err := c.Check(committed); err != nil {
						t.Fatal(err)
					}
					if *rebuilt == "" || l == conformance.JS {
						return
					}
					again := runFile(t, sb, conformance.File(*rebuilt, c.Program, l), c)
					if !again.Same(committed) {
						t.Fatalf("the module rebuilt from source behaves differently: %v, committed: %v", again, committed)
					}
				})
			}
		})
	}
}

func runFile(t *testing.T, sb *conformance.Sandboxes, path string, c conformance.Case) conformance.Outcome {
	t.Helper()
	ctx := context.Background()
	lim := c.Limits
	if lim.Timeout == 0 {
		// No case tests the time limit; Go guests under -race need far
		// more than the default second to start.
		lim.Timeout = time.Minute
	}
	p, err := sb.Program(ctx, path, lim)
	if err != nil {
		t.Fatal(err)
	}
	o, err := conformance.Run(ctx, p, c)
	if err != nil {
		t.Fatal(err)
	}
	return o
}
