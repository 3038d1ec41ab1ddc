package repl_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/repl"
	"github.com/cubelinux/cube/server"
)

// TestTimeoutMemoryCommands: .timeout and .memory set the limits of each
// later input, embedded and through a real daemon (whose EVAL then sends
// TIMEOUT and MEMORY), off goes back to the default, and a daemon refuses
// at once what is above its --max-eval-timeout.
//
// Seen to fail: with Remote.eval not sending the options (the slow input
// timed out at the 100 ms default after .timeout 2000), with Embedded.Eval
// calling Eval instead of EvalWith (the same, embedded), with
// SetEvalLimits not asking the daemon first (.timeout 5000 was taken and
// only the next input failed), and with withLimitHint
// returning its error untouched (the hints named EVAL.TYPED, or nothing).
func TestTimeoutMemoryCommands(t *testing.T) {
	const slow = "var t0 = Date.now(); while (Date.now() - t0 < 300) {}; 'slept'"
	const big = "'x'.repeat(8 << 20).length"
	input := strings.Join([]string{
		".timeout",
		slow,
		".timeout 2000",
		slow,
		".timeout 5000",
		".timeout",
		".timeout off",
		slow,
		".timeout -3",
		".timeout 2000",
		".memory 1",
		big,
		".memory 32",
		big,
		".memory",
		".memory off",
		".memory",
	}, "\n") + "\n"
	for _, remote := range []bool{false, true} {
		name := map[bool]string{false: "embedded", true: "remote"}[remote]
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			db, err := cube.Open(t.TempDir(), cube.Options{Limits: cube.Limits{Timeout: 100 * time.Millisecond}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			if _, err := db.CreateNamespace(ctx, "grid", cube.NamespaceOptions{Dims: 2}); err != nil {
				t.Fatal(err)
			}
			o := repl.Options{DB: db, Namespace: "grid"}
			if remote {
				o = repl.Options{Socket: startLimitedDaemon(t, db, 2*time.Second), Namespace: "grid"}
			}
			var out bytes.Buffer
			o.In, o.Out, o.Err, o.Echo = strings.NewReader(input), &out, &out, true
			o.HistoryFile = filepath.Join(t.TempDir(), "history")
			_ = repl.Run(ctx, o) // some inputs fail on purpose
			got := out.String()
			steps := strings.Split(got, "grid> ")
			expect := func(i int, want string) {
				t.Helper()
				if i+1 >= len(steps) || !strings.Contains(steps[i+1], want) {
					t.Errorf("input %d (%s): want %q in the transcript:\n%s", i+1, strings.Split(input, "\n")[i], want, got)
				}
			}
			expect(0, "timeout: the default")
			expect(1, "raise it with .timeout MS")
			expect(3, "slept")
			if remote {
				expect(4, "TIMEOUT must be 1 to 2000 ms")
				expect(5, "timeout: 2000 ms")
			} else {
				expect(5, "timeout: 5000 ms")
			}
			expect(7, "took longer than 100ms")
			expect(8, "above 0, or off")
			expect(11, "raise it with .memory MIB")
			expect(13, "8388608")
			expect(14, "memory: 32 MiB")
			expect(16, "memory: the default")
			if strings.Count(got, `"slept"`) != 1 {
				t.Errorf("the slow input succeeded other than once after .timeout 2000:\n%s", got)
			}
		})
	}
}

// startLimitedDaemon serves db on a Unix socket with maxTimeout as its
// --max-eval-timeout, until the test ends.
func startLimitedDaemon(t *testing.T, db *cube.DB, maxTimeout time.Duration) string {
	t.Helper()
	return startDaemonWith(t, db, server.Options{MaxEvalTimeout: maxTimeout})
}
