package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cubelinux/cube"
	"github.com/redis/go-redis/v9"
)

var killCycles = flag.Int("kill.cycles", 3, "SIGKILL-under-load cycles in TestKillUnderLoad")

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestDaemonLifecycle: a second daemon on the same directory is refused;
// SIGTERM drains in-flight writes, checkpoints, removes the socket and
// exits 0; every acknowledged write is there afterwards.
func TestDaemonLifecycle(t *testing.T) {
	dir := shortDir(t)
	data := filepath.Join(dir, "data")
	sock := filepath.Join(data, "cube.sock")
	d, out := cubeProc(t, nil, "serve", "--data", data)
	waitSocket(t, sock, out)

	second, out2 := cubeProc(t, nil, "serve", "--data", data, "--socket", filepath.Join(dir, "other.sock"))
	if err := second.Wait(); exitCode(err) != 1 || !strings.Contains(out2.String(), "is in use by another process") {
		t.Fatalf("second daemon: %v\n%s", err, out2)
	}

	ctx := context.Background()
	cl := newClient(sock)
	defer cl.Close()
	if err := cl.Do(ctx, "NS.CREATE", "t", "DIMS", 1).Err(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	acked := map[int]bool{}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 8 {
		wg.Go(func() {
			c := newClient(sock)
			defer c.Close()
			for i := w; ; i += 8 {
				select {
				case <-stop:
					return
				default:
				}
				if err := c.Do(ctx, "PUT", "t", i, "v"+strconv.Itoa(i)).Err(); err != nil {
					return // the daemon went away: this write is not acknowledged
				}
				mu.Lock()
				acked[i] = true
				mu.Unlock()
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	if err := d.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := d.Wait()
	close(stop)
	wg.Wait()
	if exitCode(err) != 0 {
		t.Fatalf("daemon after SIGTERM: %v\n%s", err, out)
	}
	if !strings.Contains(out.String(), "cube stopped") {
		t.Fatalf("no clean stop:\n%s", out)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatalf("socket left after SIGTERM: %v", err)
	}
	checkAcked(t, data, "t", acked)
}

// checkAcked opens the data directory and checks every acknowledged PUT.
func checkAcked(t *testing.T, data, ns string, acked map[int]bool) {
	t.Helper()
	db, err := cube.Open(data, cube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n, err := db.Namespace(ns)
	if err != nil {
		t.Fatal(err)
	}
	for i := range acked {
		v, err := n.Get(context.Background(), []int32{int32(i)})
		if err != nil || string(v) != "v"+strconv.Itoa(i) {
			t.Fatalf("acknowledged PUT %d lost: %q, %v", i, v, err)
		}
	}
	if len(acked) == 0 {
		t.Fatal("nothing was acknowledged")
	}
}

// TestKillUnderLoad SIGKILLs the daemon while clients write, restarts it
// (over the stale socket the dead one left) and checks that every
// acknowledged write survived. -kill.cycles sets how many times.
func TestKillUnderLoad(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	data := filepath.Join(shortDir(t), "data")
	sock := filepath.Join(data, "cube.sock")
	ctx := context.Background()
	acked := map[int]bool{}
	var mu sync.Mutex
	next := 0
	for cycle := range *killCycles {
		d, out := cubeProc(t, nil, "serve", "--data", data)
		waitSocket(t, sock, out)
		cl := newClient(sock)
		if err := cl.Do(ctx, "NS.CREATE", "k", "DIMS", 1).Err(); err != nil && !strings.HasPrefix(err.Error(), "EXISTS") {
			t.Fatal(err)
		}
		cl.Close()
		var wg sync.WaitGroup
		for w := range 8 {
			base := next + w*1_000_000
			wg.Go(func() {
				c := newClient(sock)
				defer c.Close()
				for i := base; ; i++ {
					// Half single PUTs, half pipelines of 16 (one transaction).
					if i%2 == 0 {
						if c.Do(ctx, "PUT", "k", i, "v"+strconv.Itoa(i)).Err() != nil {
							return
						}
						mu.Lock()
						acked[i] = true
						mu.Unlock()
						continue
					}
					p := c.Pipeline()
					for j := range 16 {
						p.Do(ctx, "PUT", "k", i+j, "v"+strconv.Itoa(i+j))
					}
					cmds, _ := p.Exec(ctx)
					for j, cmd := range cmds {
						if cmd.Err() == nil {
							mu.Lock()
							acked[i+j] = true
							mu.Unlock()
						}
					}
					if len(cmds) == 0 || cmds[len(cmds)-1].Err() != nil {
						return
					}
					i += 16
				}
			})
		}
		time.Sleep(time.Duration(200+rng.IntN(400)) * time.Millisecond)
		d.Process.Kill()
		d.Wait()
		wg.Wait()
		next += 8_000_000
		t.Logf("cycle %d: %d acknowledged so far", cycle, len(acked))
		if _, err := os.Stat(sock); err != nil {
			t.Fatalf("the killed daemon's socket should be left behind: %v", err)
		}
	}
	checkAcked(t, data, "k", acked)
}

// TestTCPNeedsAuth: --listen without a token is a usage error; with one,
// commands before AUTH are refused.
func TestTCPNeedsAuth(t *testing.T) {
	dir := shortDir(t)
	p, out := cubeProc(t, nil, "serve", "--data", filepath.Join(dir, "a"), "--listen", "127.0.0.1:0")
	if err := p.Wait(); exitCode(err) != 2 || !strings.Contains(out.String(), "--listen needs a token") {
		t.Fatalf("--listen without a token: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	data := filepath.Join(dir, "b")
	d, out := cubeProc(t, []string{"CUBE_AUTH=tok3n"}, "serve", "--data", data, "--listen", addr)
	defer func() { d.Process.Signal(syscall.SIGTERM); d.Wait() }()
	waitSocket(t, filepath.Join(data, "cube.sock"), out)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	for _, step := range []struct{ send, want string }{
		{"NS.CREATE x DIMS 1\r\n", "-NOAUTH"},
		{"AUTH nope\r\n", "-WRONGPASS"},
		{"AUTH tok3n\r\n", "+OK"},
		{"NS.CREATE x DIMS 1\r\n", "+OK"},
	} {
		fmt.Fprint(c, step.send)
		line, err := r.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, step.want) {
			t.Fatalf("%q: %q %v, want %s", step.send, line, err, step.want)
		}
	}
	rc := redis.NewClient(&redis.Options{Addr: addr, Password: "tok3n", DisableIdentity: true})
	defer rc.Close()
	if err := rc.Do(context.Background(), "PUT", "x", 1, "v").Err(); err != nil {
		t.Fatal(err)
	}
}
