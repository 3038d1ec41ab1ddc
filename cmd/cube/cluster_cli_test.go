package main

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCLIFollowsLeader: a write sent with the CLI to a cluster follower's
// socket reaches the leader when $CUBE_AUTH holds the token, and without
// it fails saying where the leader is and what to set: two real nodes.
//
// Break seen caught: verbCommand calling cl.Do instead of e.do (the write
// fails with the bare "MOVED 0 addr").
func TestCLIFollowsLeader(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a two-node cluster")
	}
	dir := shortDir(t)
	port := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().String()
	}
	auth := []string{"CUBE_AUTH=tok3n"}
	r1, l1 := port(), port()
	n1 := filepath.Join(dir, "n1")
	p1, out1 := cubeProc(t, auth, "serve", "--data", n1, "--cluster", "--node-id", "n1", "--raft", r1, "--listen", l1)
	defer func() { p1.Process.Signal(syscall.SIGTERM); p1.Wait() }()
	waitSocket(t, filepath.Join(n1, "cube.sock"), out1)
	n2 := filepath.Join(dir, "n2")
	p2, out2 := cubeProc(t, auth, "serve", "--data", n2, "--cluster", "--node-id", "n2", "--raft", port(), "--listen", port(), "--join", l1)
	defer func() { p2.Process.Signal(syscall.SIGTERM); p2.Wait() }()
	waitSocket(t, filepath.Join(n2, "cube.sock"), out2)
	cli := func(vars map[string]string, args ...string) (int, string) {
		var out, errb bytes.Buffer
		e := &env{stdout: &out, stderr: &errb, stdin: strings.NewReader(""), getenv: func(k string) string { return vars[k] }}
		code := run(context.Background(), append([]string{"-s", filepath.Join(n2, "cube.sock")}, args...), e)
		return code, out.String() + errb.String()
	}
	// The leader may still be committing its no-op: retry the first write.
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, out := cli(map[string]string{"CUBE_AUTH": "tok3n"}, "ns.create", "w", "DIMS", "1")
		if code == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ns.create through the follower: exit %d: %s\nn1:\n%s\nn2:\n%s", code, out, out1, out2)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, out := cli(map[string]string{"CUBE_AUTH": "tok3n"}, "put", "w", "1", "v"); code != 0 || !strings.Contains(out, "OK") {
		t.Fatalf("put through the follower with CUBE_AUTH: exit %d: %s", code, out)
	}
	code, out := cli(nil, "put", "w", "2", "v")
	if code == 0 || !strings.Contains(out, "follower") || !strings.Contains(out, l1) || !strings.Contains(out, "CUBE_AUTH") {
		t.Fatalf("put through the follower without a token: exit %d: %q, want an error naming the leader %s and CUBE_AUTH", code, out, l1)
	}
}

// TestNoDaemonOneMessage: the built cube, pointed at a socket nobody
// serves, prints cube's own error alone, not go-redis's dial log first.
//
// Break seen caught: dropping redis.SetLogger from main (the log line
// "redis: ... connection pool: failed to dial" comes first).
func TestNoDaemonOneMessage(t *testing.T) {
	p, out := cubeProc(t, nil, "-s", filepath.Join(shortDir(t), "none.sock"), "get", "w", "1")
	p.Wait()
	if s := out.String(); strings.Contains(s, "connection pool") || !strings.HasPrefix(s, "cube: no daemon at") {
		t.Fatalf("output %q, want only cube's error", s)
	}
}
