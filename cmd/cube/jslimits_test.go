package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestDaemonJSLimitsHold runs the bombs that escaped the in-process limits
// (issue 7) through a real daemon and a real client: each fails with its
// limit, answers within the time limit plus a margin, and the daemon's
// own resident memory stays where it was. It catches a daemon that runs
// JavaScript in process (seen with --js-in-process: JSON.stringify's
// bomb took the daemon past 1 GiB and answered after seconds).
func TestDaemonJSLimitsHold(t *testing.T) {
	d, rc := serveDaemon(t)
	ctx := context.Background()
	if err := rc.Do(ctx, "NS.CREATE", "t", "DIMS", 2).Err(); err != nil {
		t.Fatal(err)
	}
	// A first run starts a worker, so the baseline includes the pool.
	if err := rc.Do(ctx, "PROG", "t", "ok", "JS", "function run() { return 'fine' }").Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := rc.Do(ctx, "RUN", "t", "ok").Text(); err != nil || v != "fine" {
		t.Fatalf("RUN ok: %q %v", v, err)
	}
	base := rss(t, d.Process.Pid)
	bombs := map[string]string{
		"stringify":  `JSON.stringify(new Array(300).fill('x'.repeat(1<<20)))`,
		"replaceAll": `'a'.repeat(1<<16).replaceAll('a', 'x'.repeat(4096))`,
		"arrayFrom":  `Array.from({length: 2e7})`,
	}
	for name, code := range bombs {
		if err := rc.Do(ctx, "PROG", "t", name, "JS", "function run() { "+code+"; return 'finished' }", "TIMEOUT", 1000, "MEMORY", 16).Err(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err := rc.Do(ctx, "RUN", "t", name).Err()
		took := time.Since(start)
		if err == nil || !(strings.Contains(err.Error(), "memory limit") || strings.Contains(err.Error(), "timeout")) {
			t.Errorf("%s: %v, want a memory or time limit error", name, err)
		}
		if took > 1500*time.Millisecond {
			t.Errorf("%s answered after %v under a 1 s limit", name, took)
		}
		t.Logf("%s: %v after %v", name, err, took.Round(time.Millisecond))
	}
	if grown := rss(t, d.Process.Pid) - base; grown > 32<<20 {
		t.Errorf("the daemon's resident memory grew by %d MiB over the bombs", grown>>20)
	}
	// The daemon still serves JavaScript afterwards.
	if v, err := rc.Do(ctx, "RUN", "t", "ok").Text(); err != nil || v != "fine" {
		t.Fatalf("RUN ok after the bombs: %q %v", v, err)
	}
}

// serveDaemon starts "cube serve --sync none flags..." on a new data
// directory and returns the process and a client on its Unix socket; both
// are stopped when the test ends.
func serveDaemon(t *testing.T, flags ...string) (*exec.Cmd, *redis.Client) {
	t.Helper()
	data := filepath.Join(shortDir(t), "d")
	d, out := cubeProc(t, nil, append([]string{"serve", "--data", data, "--sync", "none"}, flags...)...)
	t.Cleanup(func() { d.Process.Signal(syscall.SIGTERM); d.Wait() })
	sock := filepath.Join(data, "cube.sock")
	waitSocket(t, sock, out)
	rc := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, ReadTimeout: time.Minute, DisableIdentity: true})
	t.Cleanup(func() { rc.Close() })
	return d, rc
}

// rss reads a process's resident set size in bytes.
func rss(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n << 10
		}
	}
	t.Skip("no VmRSS")
	return 0
}
