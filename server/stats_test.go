package server_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/cubelinux/cube/server"
)

// snake is what every field name of the STATS reply looks like.
var snake = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// timed names a figure that is a time; it must say its unit.
var timed = regexp.MustCompile(`latency|duration|timeout|uptime|fsync_p|fsync_max|p50|p99|mean|max_us`)

// unit is the suffix a time carries (or a count of timings carries).
var unit = regexp.MustCompile(`_(us|ms|s|samples)$`)

// dataMaps are objects keyed by data (command names, failure reasons),
// not by field names.
var dataMaps = map[string]bool{"commands": true, "errors": true}

// TestStatsLabelled: every field of STATS and STATS ns, enumerated from
// the reply (a field added later is checked too), is snake_case, and
// every time says its unit. The issue saw `"P50": 1474559` (nanoseconds,
// a Go field name) under store.SyncLatency and in programs' Telemetry.
//
// Seen to fail: with StoreStats's fsync_p99_us tagged FsyncP99 ("not
// snake_case"; the engine's own Stats, as replied before, fails the same
// way on SyncLatency and P50), and with ProgramStats's latency_p50_us
// tagged latency_p50 ("a time without a unit", and the field missing).
func TestStatsLabelled(t *testing.T) {
	ts := startServer(t, server.Options{})
	ctx := context.Background()
	cl := ts.client(t, 2)
	for _, c := range [][]any{
		{"NS.CREATE", "w", "DIMS", 2},
		{"PUT", "w", 1, 2, "hello"},
		{"LINK", "w", 1, 2, 3, 4, "road"},
		{"PROG", "w", "greet", "JS", `function run(a) { return cube.get([1, 2]) + " " + a }`},
		{"RUN", "w", "greet", "x"},
		{"CHECKPOINT"},
	} {
		if err := cl.Do(ctx, c...).Err(); err != nil {
			t.Fatalf("%v: %v", c, err)
		}
	}
	for _, cmd := range [][]any{{"STATS"}, {"STATS", "w"}} {
		js, err := cl.Do(ctx, cmd...).Text()
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal([]byte(js), &v); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		var walk func(path string, v any)
		walk = func(path string, v any) {
			switch x := v.(type) {
			case map[string]any:
				last := path[strings.LastIndex(path, ".")+1:]
				for k, e := range x {
					if dataMaps[last] {
						walk(path+"["+k+"]", e)
						continue
					}
					seen[k] = true
					if !snake.MatchString(k) {
						t.Errorf("%v: %s.%s is not snake_case", cmd, path, k)
					}
					if _, num := e.(float64); num && timed.MatchString(k) && !unit.MatchString(k) {
						t.Errorf("%v: %s.%s = %v is a time without a unit", cmd, path, k, e)
					}
					walk(path+"."+k, e)
				}
			case []any:
				for _, e := range x {
					walk(path+"[]", e)
				}
			}
		}
		walk(".", v)
		want := []string{"name", "values", "edges", "latency_p50_us", "runs"}
		if len(cmd) == 1 {
			want = append(want, "fsync_p50_us", "sync_mode", "checkpoints", "duration_ms", "uptime_s", "p50_us", "heap_bytes")
		}
		for _, k := range want {
			if !seen[k] {
				t.Errorf("%v lacks %q: %s", cmd, k, js)
			}
		}
	}
}
