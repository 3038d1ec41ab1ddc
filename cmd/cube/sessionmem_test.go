package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestDaemonSessionsGiveMemoryBack: a daemon keeps each connection's EVAL
// session (its JavaScript globals) in a worker process of its own; when
// the connections close, those workers end and their memory goes with
// them. 24 connections each hold a 4 MiB string; while they are open the
// daemon has at least 24 workers holding over 96 MiB, and within 10 s
// of their closing at most 4 workers are left (the pool's idle ones), holding
// under 64 MiB,
// and the daemon's own resident memory has not kept the sessions' data.
// Break it caught: server/conn.go's "defer c.closeSession()" removed —
// every worker stayed alive, held as a session, after its connection had
// gone (25 processes, over 500 MiB resident).
func TestDaemonSessionsGiveMemoryBack(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 24 JavaScript worker processes")
	}
	d, rc := serveDaemon(t)
	ctx := context.Background()
	// A first EVAL starts the pool, so the baseline includes it.
	if err := rc.Do(ctx, "EVAL", "", "1+1").Err(); err != nil {
		t.Fatal(err)
	}
	base := rss(t, d.Process.Pid)
	const n = 24
	sock := rc.Options().Addr
	var clients []*redis.Client
	for i := range n {
		c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 1, ReadTimeout: time.Minute, DisableIdentity: true})
		clients = append(clients, c)
		v, err := c.Do(ctx, "EVAL", "", fmt.Sprintf("globalThis.big = 'x'.repeat(4 << 20) + %d; big.length", i), "TIMEOUT", 20000).Text()
		if err != nil || !strings.HasPrefix(v, "41943") {
			t.Fatalf("EVAL %d: %q %v", i, v, err)
		}
	}
	workers, held := children(t, d.Process.Pid)
	t.Logf("%d sessions open: %d workers, %d MiB resident in them; daemon %d MiB", n, workers, held>>20, rss(t, d.Process.Pid)>>20)
	if workers < n || held < n*4<<20 {
		t.Fatalf("%d workers holding %d MiB for %d sessions of 4 MiB: the test does not see the sessions", workers, held>>20, n)
	}
	for _, c := range clients {
		c.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		workers, held = children(t, d.Process.Pid)
		if (workers <= 4 && held < 64<<20) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	grown := rss(t, d.Process.Pid) - base
	t.Logf("closed: %d workers, %d MiB resident in them; the daemon grew %d MiB", workers, held>>20, grown>>20)
	if workers > 4 || held >= 64<<20 {
		t.Fatalf("10 s after %d sessions closed, %d workers still hold %d MiB", n, workers, held>>20)
	}
	if grown > 64<<20 {
		t.Errorf("the daemon's resident memory grew by %d MiB over %d sessions", grown>>20, n)
	}
}

// children counts the processes whose parent is pid and sums their
// resident memory.
func children(t *testing.T, pid int) (n int, resident int64) {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(stats) == 0 {
		t.Skipf("no /proc: %v", err)
	}
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // gone
		}
		// pid (comm) state ppid ...: comm may hold spaces; split after ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || f[1] != strconv.Itoa(pid) {
			continue
		}
		child, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		b, err = os.ReadFile("/proc/" + strconv.Itoa(child) + "/status")
		if err != nil {
			continue
		}
		n++
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				resident += kb << 10
			}
		}
	}
	return n, resident
}
