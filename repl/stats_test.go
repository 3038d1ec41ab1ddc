package repl_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/cubelinux/cube/repl"
)

// goField is a Go field name as encoding/json writes an untagged struct:
// "SyncLatency":, "P50":.
var goField = regexp.MustCompile(`"[A-Z][A-Za-z0-9]*"\s*:`)

// TestStatsLabelled: the embedded REPL's .stats shows the same labelled
// report as the daemon's STATS (snake_case, units in the names), not the
// store's Go types with bare nanoseconds (the issue saw "P50": 1474559).
// The whole-store view is checked through labelStats in
// stats_internal_test.go (the REPL always has a namespace here).
//
// Seen to fail: with cmdStats printing js instead of labelStats(js)
// ("Namespace": a Go field name).
func TestStatsLabelled(t *testing.T) {
	db := openDB(t)
	got, err := transcript(t, repl.Options{DB: db}, ".prog hello testdata/hello.js\n.run hello x\n.json on\n.stats\n")
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, got)
	}
	_, st, ok := strings.Cut(got, "grid> .stats\n")
	if !ok {
		t.Fatalf("no .stats in:\n%s", got)
	}
	if m := goField.FindString(st); m != "" {
		t.Errorf(".stats shows a Go field name %s:\n%s", m, st)
	}
	for _, want := range []string{`"name":"grid"`, `"values":1`, `"latency_p50_us":`, `"runs":1`, `"timeout_ms":`} {
		if !strings.Contains(st, want) {
			t.Errorf(".stats lacks %s:\n%s", want, st)
		}
	}
}
