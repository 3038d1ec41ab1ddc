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

// TestErrors checks that each mistake gets an error that says what was
// wrong, and that the connection stays usable after it.
func TestErrors(t *testing.T) {
	ts := startServer(t, server.Options{})
	ctx := context.Background()
	cl := ts.client(t, 3)
	cl.Do(ctx, "NS.CREATE", "w", "DIMS", 2)
	cl.Do(ctx, "NS.CREATE", "small", "DIMS", 1, "MAXVALUE", 4)
	tests := []struct {
		args []any
		want string
	}{
		{[]any{"NOPE", "a"}, "unknown command 'NOPE'"},
		{[]any{"PUT", "w"}, "wrong number of arguments for 'put' command"},
		{[]any{"PUT", "w", 1, "v"}, "wrong number of arguments for 'put' in namespace 'w' (2 dimensions)"},
		{[]any{"PUT", "w", 1, "x", "v"}, "coordinate 2 of 2 is not a 32-bit integer: 'x'"},
		{[]any{"PUT", "w", 1, 4294967296, "v"}, "not a 32-bit integer"},
		{[]any{"GET", "nope", 1, 2}, "NONS namespace 'nope' does not exist"},
		{[]any{"PUT", "small", 1, "12345"}, "value too large"},
		{[]any{"REGION", "w", 5, 0, 0, 9}, "min 5 is above max 0 on axis 1"},
		{[]any{"REGION", "w", 0, 0, 9, 9, "LIMIT", -1}, "LIMIT must be a non-negative integer"},
		{[]any{"REGION", "w", 0, 0, 9, 9, "SIDEWAYS"}, "unknown option 'SIDEWAYS'"},
		{[]any{"REGION", "w", 0, 0, 9, 9, "LIMIT"}, "option LIMIT needs a value"},
		{[]any{"LINK", "w", 0, 0, 1, 1, "r", "WEIGHT", "nan"}, "WEIGHT must be a finite number"},
		{[]any{"WALK", "w", 0, 0, "DIR", "UP"}, "DIR must be OUT, IN or BOTH"},
		{[]any{"NS.CREATE", "x", "DIMS", 9}, "DIMS must be 1 to 8"},
		{[]any{"NS.CREATE", "x"}, "wrong number of arguments"},
		{[]any{"NS.CREATE", "x", "CURVE", "peano", "DIMS", 2}, "CURVE must be hilbert or morton"},
		{[]any{"NS.CREATE", "w", "DIMS", 2}, "EXISTS"},
		{[]any{"HELLO", 4}, "NOPROTO"},
		{[]any{"AUTH", "x"}, "has no token"},
		{[]any{"RUN", "w", "p"}, "NOPROG no program 'p'"},
		{[]any{"PROG", "w", "p", "LUA", "x"}, "kind must be WASM or JS"},
		{[]any{"PROG", "w", "p", "JS", "function run( {"}, "PROGERR cannot register program 'p'"},
		{[]any{"EVAL", "w", "throw new Error(\"boom\")"}, "PROGERR script failed"},
	}
	for _, tt := range tests {
		err := cl.Do(ctx, tt.args...).Err()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: err = %v, want it to contain %q", tt.args, err, tt.want)
		}
		if err := cl.Ping(ctx).Err(); err != nil {
			t.Fatalf("after %v the connection is unusable: %v", tt.args, err)
		}
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

// TestPrograms registers, lists, runs and removes programs, and checks
// that EVAL keeps a connection's JavaScript state.
func TestPrograms(t *testing.T) {
	ts := startServer(t, server.Options{})
	ctx := context.Background()
	cl := ts.client(t, 3)
	must := func(args ...any) any {
		t.Helper()
		v, err := cl.Do(ctx, args...).Result()
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return v
	}
	must("NS.CREATE", "w", "DIMS", 2)
	must("PUT", "w", 1, 2, "hello")
	ver := must("PROG", "w", "greet", "JS", `function run(a) { cube.put([3, 4], "from js"); return cube.get([1, 2]) + " " + a }`).(string)
	if len(ver) != 64 {
		t.Fatalf("PROG version = %q, want a hex SHA-256", ver)
	}
	if got := must("RUN", "w", "greet", "world"); got != "hello world" {
		t.Fatalf("RUN = %q", got)
	}
	if got := must("GET", "w", 3, 4); got != "from js" {
		t.Fatalf("the run's write: %q", got)
	}
	must("PROG", "w", "spin", "JS", `function run() { for (;;) {} }`, "TIMEOUT", 50)
	err := cl.Do(ctx, "RUN", "w", "spin").Err()
	if err == nil || !strings.Contains(err.Error(), "PROGERR program 'spin' failed: timeout") {
		t.Fatalf("RUN spin: %v", err)
	}
	progs := fmtAny(must("PROGS", "w"))
	if !strings.Contains(progs, "greet") || !strings.Contains(progs, "spin") {
		t.Fatalf("PROGS = %s", progs)
	}
	if got := must("UNPROG", "w", "spin"); got != int64(1) {
		t.Fatalf("UNPROG = %v", got)
	}
	if got := must("UNPROG", "w", "spin"); got != int64(0) {
		t.Fatalf("UNPROG again = %v", got)
	}
	// One connection for the session.
	cl1 := redis.NewClient(&redis.Options{Network: "unix", Addr: ts.sock, Protocol: 3, DisableIdentity: true, PoolSize: 1})
	defer cl1.Close()
	if err := cl1.Do(ctx, "EVAL", "w", "function twice(x) { return 2 * x }; 1").Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := cl1.Do(ctx, "EVAL", "w", "twice(21)").Result(); err != nil || fmtAny(got) != "42" {
		t.Fatalf("EVAL in the session = %v, %v", got, err)
	}
	// EVAL.TYPED: the type, whether the output is JSON, the output, the logs.
	typed, err := cl1.Do(ctx, "EVAL.TYPED", "w", `cube.log("hello", 1); String(twice(21))`).Slice()
	if err != nil || len(typed) != 4 || typed[0] != "string" || typed[1] != int64(0) || typed[2] != "42" {
		t.Fatalf("EVAL.TYPED of a string = %#v, %v", typed, err)
	}
	if logs, ok := typed[3].([]any); !ok || len(logs) != 1 || logs[0] != "hello 1" {
		t.Fatalf("EVAL.TYPED logs = %#v", typed[3])
	}
	typed, err = cl1.Do(ctx, "EVAL.TYPED", "w", "twice(21)").Slice()
	if err != nil || typed[0] != "number" || typed[1] != int64(1) || typed[2] != "42" {
		t.Fatalf("EVAL.TYPED of a number = %#v, %v", typed, err)
	}
	// With an arg: the same session, cube.args set for that call only.
	if got, err := cl1.Do(ctx, "EVAL", "w", "twice(Number(cube.args))", "5").Result(); err != nil || fmtAny(got) != "10" {
		t.Fatalf("EVAL with an arg in the session = %v, %v", got, err)
	}
	if got, err := cl1.Do(ctx, "EVAL", "w", "var seen = cube.args; seen", "first").Result(); err != nil || fmtAny(got) != "first" {
		t.Fatalf("EVAL with an arg = %v, %v", got, err)
	}
	if got, err := cl1.Do(ctx, "EVAL", "w", "seen + '/' + JSON.stringify(cube.args)").Result(); err != nil || fmtAny(got) != `first/""` {
		t.Fatalf("EVAL after an arg = %v, %v", got, err)
	}
	// Another connection has its own session.
	cl2 := redis.NewClient(&redis.Options{Network: "unix", Addr: ts.sock, Protocol: 3, DisableIdentity: true, PoolSize: 1})
	defer cl2.Close()
	if err := cl2.Do(ctx, "EVAL", "w", "twice(21)").Err(); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("EVAL on another connection: %v, want a ReferenceError", err)
	}
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
