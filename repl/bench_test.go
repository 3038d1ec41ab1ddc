package repl_test

import (
	"context"
	"testing"

	"github.com/cubelinux/cube/repl"
)

// BenchmarkEval measures one input's round trip through each evaluator:
// in-process, and over the daemon's socket (EVAL on the session's
// connection).
func BenchmarkEval(b *testing.B) {
	ctx := context.Background()
	for _, m := range []struct {
		name string
		ev   func(b *testing.B) repl.Evaluator
	}{
		{"embedded", func(b *testing.B) repl.Evaluator { return repl.NewEmbedded(openDB(b)) }},
		{"remote", func(b *testing.B) repl.Evaluator {
			r, err := repl.Dial(ctx, startDaemon(b, openDB(b)), repl.DialOptions{})
			if err != nil {
				b.Fatal(err)
			}
			return r
		}},
	} {
		b.Run(m.name, func(b *testing.B) {
			ev := m.ev(b)
			defer ev.Close()
			if _, err := ev.Eval(ctx, "grid", "var n = 0; function inc() { return ++n }"); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ev.Eval(ctx, "grid", "inc()"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
