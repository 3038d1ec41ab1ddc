package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cubelinux/cube/server"
	"github.com/redis/go-redis/v9"
)

// TestGoRedis drives every command family through go-redis, in RESP2 and
// RESP3.
func TestGoRedis(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(map[int]string{2: "resp2", 3: "resp3"}[proto], func(t *testing.T) {
			ts := startServer(t, server.Options{})
			ctx := context.Background()
			cl := ts.client(t, proto)
			do := func(args ...any) any {
				t.Helper()
				v, err := cl.Do(ctx, args...).Result()
				if err != nil && !errors.Is(err, redis.Nil) {
					t.Fatalf("%v: %v", args, err)
				}
				return v
			}
			str := func(v any) string { return strings.TrimSpace(fmtAny(v)) }

			if got := str(do("PING")); got != "PONG" {
				t.Fatalf("PING = %q", got)
			}
			do("NS.CREATE", "world", "DIMS", 2)
			do("NS.CREATE", "cube3", "DIMS", "3", "CURVE", "morton")
			if got := str(do("NS.LIST")); got != "[cube3 world]" {
				t.Fatalf("NS.LIST = %s", got)
			}
			for i := range 10 {
				do("PUT", "world", i, i*2, "v"+string(rune('0'+i)))
			}
			if got := str(do("GET", "world", 3, 6)); got != "v3" {
				t.Fatalf("GET = %q", got)
			}
			if v := do("GET", "world", 3, 7); v != nil {
				t.Fatalf("GET absent = %v, want nil", v)
			}
			if got := str(do("DEL", "world", 3, 6)); got != "1" {
				t.Fatalf("DEL = %s", got)
			}
			if got := str(do("DEL", "world", 3, 6)); got != "0" {
				t.Fatalf("DEL again = %s", got)
			}
			if got := str(do("REGION", "world", 0, 0, 4, 8, "COUNT")); got != "4" {
				t.Fatalf("REGION COUNT = %s", got)
			}
			region := do("REGION", "world", 0, 0, 4, 8).([]any)
			if len(region) != 4 {
				t.Fatalf("REGION = %v", region)
			}
			seen := map[string]bool{}
			for _, p := range region {
				pair := p.([]any)
				seen[str(pair[0])+"="+str(pair[1])] = true
			}
			for _, w := range []string{"[0 0]=v0", "[1 2]=v1", "[2 4]=v2", "[4 8]=v4"} {
				if !seen[w] {
					t.Fatalf("REGION misses %s: %v", w, seen)
				}
			}
			if got := len(do("REGION", "world", 0, 0, 9, 18, "LIMIT", 2).([]any)); got != 2 {
				t.Fatalf("REGION LIMIT 2 gave %d", got)
			}

			// Graph: a -1-> b -1-> c and a -5-> c.
			do("LINK", "world", 0, 0, 1, 2, "road")
			do("LINK", "world", 1, 2, 2, 4, "road", "WEIGHT", "1.5", "VALUE", "bridge")
			do("LINK", "world", 0, 0, 2, 4, "road", "WEIGHT", 5)
			edges := do("EDGES", "world", 1, 2, "BOTH").([]any)
			if len(edges) != 2 {
				t.Fatalf("EDGES BOTH = %v", edges)
			}
			out := do("EDGES", "world", 1, 2).([]any)
			if len(out) != 1 || str(out[0].([]any)[4]) != "bridge" || str(out[0].([]any)[3]) != "1.5" {
				t.Fatalf("EDGES = %v", out)
			}
			walk := do("WALK", "world", 0, 0, "DEPTH", 2, "LABEL", "road").([]any)
			if len(walk) != 3 {
				t.Fatalf("WALK = %v", walk)
			}
			path := do("PATH", "world", 0, 0, 2, 4).([]any)
			if str(path[0]) != "[[0 0] [1 2] [2 4]]" || str(path[1]) != "2.5" {
				t.Fatalf("PATH = %v", path)
			}
			if v := do("PATH", "world", 2, 4, 0, 0); v != nil {
				t.Fatalf("PATH against the edges = %v, want nil", v)
			}
			if got := str(do("UNLINK", "world", 0, 0, 1, 2, "road")); got != "1" {
				t.Fatalf("UNLINK = %s", got)
			}

			info := str(do("NS.INFO", "world"))
			for _, w := range []string{"dims", "values", "9", "edges", "2"} {
				if !strings.Contains(info, w) {
					t.Fatalf("NS.INFO = %s, lacks %s", info, w)
				}
			}
			var st struct {
				Commands map[string]server.CommandStat `json:"commands"`
			}
			if err := json.Unmarshal([]byte(str(do("STATS"))), &st); err != nil {
				t.Fatal(err)
			}
			if st.Commands["put"].Calls != 10 {
				t.Fatalf("STATS put calls = %d, want 10", st.Commands["put"].Calls)
			}
			if got := str(do("STATS", "world")); !strings.Contains(got, `"values":9`) {
				t.Fatalf("STATS world = %s", got)
			}
			if got := str(do("INFO", "keyspace")); !strings.Contains(got, "ns_world:dims=2") {
				t.Fatalf("INFO keyspace = %s", got)
			}
			if got := str(do("HELP", "put")); !strings.Contains(got, "PUT ns c1..cd value") {
				t.Fatalf("HELP put = %s", got)
			}
			if n := do("COMMAND", "COUNT").(int64); n != int64(len(server.Commands())) {
				t.Fatalf("COMMAND COUNT = %d", n)
			}
			if got := str(do("COMMAND", "DOCS", "region")); !strings.Contains(got, "LIMIT") {
				t.Fatalf("COMMAND DOCS region = %s", got)
			}
			do("CHECKPOINT")
			do("NS.DROP", "cube3")
			if got := str(do("NS.LIST")); got != "[world]" {
				t.Fatalf("NS.LIST after drop = %s", got)
			}
		})
	}
}

// TestPipelineWrites sends writes, failing writes and reads in one
// pipeline: replies come in order, a failed write does not sink the
// others committed with it, and reads see earlier writes.
func TestPipelineWrites(t *testing.T) {
	ts := startServer(t, server.Options{})
	r := dialRaw(t, "unix", ts.sock)
	r.Write([]byte("NS.CREATE p DIMS 1 MAXVALUE 3\r\n"))
	if got := r.reply(t); got != "+OK" {
		t.Fatal(got)
	}
	var b strings.Builder
	for _, c := range []string{
		"PUT p 1 a", "PUT p 2 toolong", "PUT p x b", "PUT p 3 c", "DEL p 3", "LINK p 1 2 r", "UNLINK p 1 2 r",
		"GET p 1", "GET p 3", "PUT p 4 d", "PUT q 1 a",
	} {
		b.WriteString(c + "\r\n")
	}
	r.Write([]byte(b.String()))
	want := []string{"+OK", "-ERR value too large", "-ERR coordinate 1 of 1", "+OK", ":1", "+OK", ":1", "$a", "$nil", "+OK", "-NONS"}
	for i, w := range want {
		if got := r.reply(t); !strings.HasPrefix(got, w) {
			t.Fatalf("reply %d = %q, want %q...", i, got, w)
		}
	}
}

func fmtAny(v any) string {
	switch x := v.(type) {
	case []any:
		s := "["
		for i, e := range x {
			if i > 0 {
				s += " "
			}
			s += fmtAny(e)
		}
		return s + "]"
	case map[any]any:
		b, _ := json.Marshal(stringKeys(x))
		return string(b)
	case nil:
		return "nil"
	}
	return strings.TrimSpace(strings.ReplaceAll(jsonish(v), "\n", " "))
}

func stringKeys(m map[any]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[fmtAny(k)] = plain(v)
	}
	return out
}

func plain(v any) any {
	switch x := v.(type) {
	case map[any]any:
		return stringKeys(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	}
	return v
}

func jsonish(v any) string {
	switch x := v.(type) {
	case string:
		return x
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestMetrics scrapes the Prometheus handler after some commands.
func TestMetrics(t *testing.T) {
	ts := startServer(t, server.Options{})
	ctx := context.Background()
	cl := ts.client(t, 2)
	cl.Do(ctx, "NS.CREATE", "m", "DIMS", 1)
	cl.Do(ctx, "PUT", "m", 1, "v")
	cl.Do(ctx, "RUN", "m", "nope")
	rec := httptest.NewRecorder()
	ts.srv.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		`cube_command_duration_seconds_count{cmd="put"} 1`,
		`cube_command_errors_total{cmd="run"} 1`,
		`cube_program_runs_total{cmd="run"} 1`,
		`cube_program_errors_total{cmd="run",reason="no program"} 1`,
		`cube_fsync_total`, `cube_fsync_latency_seconds{quantile="0.99"}`,
		`cube_namespace_values{ns="m"} 1`, `cube_connected_clients 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
