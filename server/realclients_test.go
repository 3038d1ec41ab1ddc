package server_test

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cubelinux/cube/server"
)

// needTool finds a real client; CI installs them (.ci/install.d/server.sh),
// so there a missing one fails instead of skipping.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed (see .ci/install.d/server.sh)", name)
		}
		t.Skipf("%s is not installed: apt-get install redis-tools", name)
	}
	return p
}

// TestRedisCLI drives every command family with the real redis-cli.
func TestRedisCLI(t *testing.T) {
	cli := needTool(t, "redis-cli")
	ts := startServer(t, server.Options{})
	steps := []struct {
		args string
		want string // exact output, or a regexp when it starts with ~
	}{
		{"PING", "PONG"},
		{"NS.CREATE world DIMS 2", "OK"},
		{"NS.CREATE space DIMS 3 CURVE morton", "OK"},
		{"NS.LIST", "space\nworld"},
		{"PUT world 1 2 hello", "OK"},
		{"PUT world 3 4 there", "OK"},
		{"put world -5 7 lower-case", "OK"},
		{"GET world 1 2", "hello"},
		{"GET world 9 9", ""},
		{"REGION world 0 0 10 10 COUNT", "2"},
		{"REGION world 0 0 10 10 LIMIT 1", "~^[13]\n[24]\n(hello|there)$"},
		{"DEL world -5 7", "1"},
		{"LINK world 1 2 3 4 road WEIGHT 2.5 VALUE bridge", "OK"},
		{"EDGES world 1 2", "1\n2\n3\n4\nroad\n2.5\nbridge"},
		{"EDGES world 3 4 IN LABEL road", "1\n2\n3\n4\nroad\n2.5\nbridge"},
		{"WALK world 1 2 DEPTH 2", "1\n2\n0\n\n3\n4\n1\n1\n2"},
		{"PATH world 1 2 3 4", "1\n2\n3\n4\n2.5"},
		{"UNLINK world 1 2 3 4 road", "1"},
		{"NS.INFO world", "~name\nworld\ndims\n2\ncurve\nhilbert\n"},
		{"STATS world", `~^\{"namespace":\{"name":"world"`},
		{"INFO keyspace", "~ns_world:dims=2,curve=hilbert,values=2,edges=0"},
		{"COMMAND COUNT", strconv.Itoa(len(server.Commands()))},
		{"PROG world hi JS 'function run(a) { return \"hi \" + a }'", "~^[0-9a-f]{64}$"},
		{"RUN world hi there", "hi there"},
		{"EVAL world '1 + 2'", "3"},
		{"UNPROG world hi", "1"},
		{"CHECKPOINT", "~kind\n(base|delta)\nfile\n"},
		{"NS.DROP space", "OK"},
		{"GET world 1", "ERR wrong number of arguments for 'get' in namespace 'world' (2 dimensions): usage: GET ns c1..cd"},
		{"GET nowhere 1", "NONS namespace 'nowhere' does not exist; create it with NS.CREATE nowhere DIMS d"},
	}
	for _, s := range steps {
		args := append([]string{"-s", ts.sock}, splitShell(s.args)...)
		out, err := exec.Command(cli, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("redis-cli %s: %v\n%s", s.args, err, out)
		}
		got := strings.TrimRight(string(out), "\n")
		if strings.HasPrefix(s.want, "~") || strings.Contains(s.want, "\n~") {
			pat := strings.Replace(s.want, "~", "", 1)
			if strings.Contains(s.want, "\n~") {
				pat = "^" + regexp.QuoteMeta(strings.Split(s.want, "\n~")[0])
			}
			if !regexp.MustCompile(pat).MatchString(got) {
				t.Errorf("redis-cli %s:\n%s\nwant match %q", s.args, got, pat)
			}
			continue
		}
		if got != s.want {
			t.Errorf("redis-cli %s:\n%q\nwant\n%q", s.args, got, s.want)
		}
	}
	// redis-cli builds its help from COMMAND DOCS: "help put" shows
	// cube's synopsis, which is also what its hints show while typing.
	out, err := exec.Command(cli, "-s", ts.sock, "help", "put").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PUT") || !strings.Contains(string(out), "ns c1..cd value") {
		t.Fatalf("redis-cli help put: %v\n%s", err, out)
	}
	out, _ = exec.Command(cli, "-s", ts.sock, "help", "walk").CombinedOutput()
	if !strings.Contains(string(out), "[DEPTH n] [LABEL l] [DIR OUT|IN|BOTH]") {
		t.Fatalf("redis-cli help walk: %s", out)
	}
}

// splitShell splits on spaces, keeping '...' together.
func splitShell(s string) []string {
	var out []string
	for s != "" {
		s = strings.TrimLeft(s, " ")
		if strings.HasPrefix(s, "'") {
			end := strings.Index(s[1:], "'") + 1
			out = append(out, s[1:end])
			s = s[end+1:]
			continue
		}
		w, rest, _ := strings.Cut(s, " ")
		out = append(out, w)
		s = rest
	}
	return out
}

// TestRedisBenchmark runs a short redis-benchmark of PUT and GET against
// the socket, pipelined and not, and checks the data and the counts.
func TestRedisBenchmark(t *testing.T) {
	bench := needTool(t, "redis-benchmark")
	ts := startServer(t, server.Options{})
	ctx := context.Background()
	cl := ts.client(t, 2)
	cl.Do(ctx, "NS.CREATE", "b", "DIMS", 3)
	n := 5000
	for _, p := range []string{"1", "16"} {
		out, err := exec.Command(bench, "-s", ts.sock, "-n", strconv.Itoa(n), "-c", "8", "-P", p, "-r", "1000", "-q",
			"PUT", "b", "__rand_int__", "2", "3", "xyz").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "requests per second") {
			t.Fatalf("redis-benchmark PUT -P %s: %v\n%s", p, err, out)
		}
		out, err = exec.Command(bench, "-s", ts.sock, "-n", strconv.Itoa(n), "-c", "8", "-P", p, "-q",
			"GET", "b", "1", "2", "3").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "requests per second") {
			t.Fatalf("redis-benchmark GET -P %s: %v\n%s", p, err, out)
		}
	}
	st := ts.srv.CommandStats()
	// redis-benchmark rounds the last pipelines up: at least n each.
	if st["put"].Calls < int64(2*n) || st["put"].Errors != 0 {
		t.Fatalf("put stats %+v, want %d calls and no errors", st["put"], 2*n)
	}
	if st["get"].Calls < int64(2*n) || st["get"].Errors != 0 {
		t.Fatalf("get stats %+v", st["get"])
	}
	ns, _ := ts.db.Namespace("b")
	if v := ns.Info().Values; v < 100 || v > 1000 {
		t.Fatalf("%d values after random PUTs over 1000 keys", v)
	}
}
