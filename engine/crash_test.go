package engine_test

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cubelinux/cube/engine"
)

var crashCycles = flag.Int("crash.cycles", 30, "SIGKILL cycles in TestProcessCrash")

const txSize = 4

// crashEpoch is how many SIGKILL cycles share one data directory.
const crashEpoch = 100

// crashMinAcked is how many writes the child must have acknowledged in a
// cycle before the parent picks its moment to kill it: each cycle then
// checks at least that many. About 250 are acknowledged per cycle on a
// quiet 2-core machine; 20 leaves room for a noisy one.
const crashMinAcked = 20

// crashAckTimeout bounds the wait for crashMinAcked acknowledgements: a
// child that cannot write fails the test instead of hanging it.
const crashAckTimeout = 60 * time.Second

// TestProcessCrash runs this test binary as a child that writes under load
// — concurrent writers, single puts and multi-write transactions — and
// reports every acknowledged write on stdout. Once it has acknowledged
// crashMinAcked writes, the parent SIGKILLs it at a random moment, reopens
// the store, and checks that every acknowledged write is there and that no
// transaction is there in part.
//
// The test fails, too, unless the child died of that SIGKILL (not of its
// own accord: a write error makes it report "error ..." and exit 3), and
// unless each cycle saw at least crashMinAcked acknowledgements.
//
// Deliberate breaks this test was seen to catch (each made, run, failed,
// restored):
//   - the child's Put failing (a 2-dimensional coordinate in a
//     3-dimensional namespace): "the child reported an error" and "exited
//     with status 3, not SIGKILL";
//   - the child's writes failing silently (errors ignored, nothing
//     acknowledged): "no 20 acknowledged writes within 1m0s";
//   - engine: the wait for durability dropped before acknowledging
//     (DB.waitDurable returning nil): an acknowledged write missing after
//     the kill ("found 0 of 1 writes"), within a few cycles;
//   - wal: f.Sync() dropped from the log's flusher: NOT caught, and cannot
//     be: a SIGKILL leaves the OS page cache intact, so unsynced writes
//     survive a process crash. TestPowerLoss and
//     TestPowerLossGroupCommit (vfs.MemFS) catch that break.
func TestProcessCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, %d cycles", seed, *crashCycles)
	rng := rand.New(rand.NewPCG(seed, 0))
	type key struct{ cycle, w, n int }
	acked := map[key]byte{} // 'p' single put, 't' transaction
	checked := 0
	for cycle := 0; cycle < *crashCycles; cycle++ {
		if cycle > 0 && cycle%crashEpoch == 0 {
			// A fresh store every crashEpoch cycles: each cycle reopens and
			// reads back everything, so one ever-growing store would make a
			// long run quadratic (1,000 cycles on one store took over an
			// hour; 774 of them passed).
			dir = t.TempDir()
			acked = map[key]byte{}
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "CUBE_CRASH_DIR="+dir, fmt.Sprintf("CUBE_CRASH_CYCLE=%d", cycle))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		enough := make(chan struct{}) // crashMinAcked acknowledged, or stdout ended
		var mu sync.Mutex
		var lines, errs []string
		done := make(chan struct{})
		go func() {
			defer close(done)
			sc := bufio.NewScanner(out)
			once := sync.OnceFunc(func() { close(enough) })
			n := 0
			for sc.Scan() {
				l := sc.Text()
				mu.Lock()
				if strings.HasPrefix(l, "error ") {
					errs = append(errs, l)
				} else if l != "ready" {
					lines = append(lines, l)
					if n++; n == crashMinAcked {
						once()
					}
				}
				mu.Unlock()
			}
			once()
		}()
		select {
		case <-enough:
		case <-time.After(crashAckTimeout):
		}
		time.Sleep(time.Duration(rng.IntN(100)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
		cmd.Wait()
		mu.Lock()
		if len(errs) > 0 {
			t.Fatalf("cycle %d: the child reported an error:\n%s\nstderr:\n%s", cycle, strings.Join(errs, "\n"), &stderr)
		}
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("cycle %d: the child ended with %s, not by SIGKILL; stderr:\n%s", cycle, cmd.ProcessState, &stderr)
		}
		n := 0
		for _, l := range lines {
			var k key
			var kind byte
			if _, err := fmt.Sscanf(l, "%c %d %d %d", &kind, &k.cycle, &k.w, &k.n); err != nil {
				continue // a line cut by the kill was never complete, so never acknowledged
			}
			acked[k] = kind
			n++
		}
		mu.Unlock()
		if n < crashMinAcked {
			t.Fatalf("cycle %d: no %d acknowledged writes within %v (got %d); stderr:\n%s", cycle, crashMinAcked, crashAckTimeout, n, &stderr)
		}
		checked += n

		db, err := openStore(t, dir, engine.Options{})
		if err != nil {
			t.Fatalf("cycle %d: reopen: %v", cycle, err)
		}
		ns, err := db.Namespace("crash")
		if err != nil {
			if len(acked) == 0 {
				db.Close()
				continue
			}
			t.Fatalf("cycle %d: %v", cycle, err)
		}
		found := map[key]int{}
		all := []int32{math.MinInt32, math.MinInt32, math.MinInt32}
		top := []int32{math.MaxInt32, math.MaxInt32, math.MaxInt32}
		seq, err := ns.Region(context.Background(), all, top, 0)
		if err != nil {
			t.Fatal(err)
		}
		for c, v := range seq {
			f := strings.Split(string(v), ":")
			if len(f) != 4 {
				t.Fatalf("cycle %d: bad value %q at %v", cycle, v, c)
			}
			cy, _ := strconv.Atoi(f[1])
			w, _ := strconv.Atoi(f[2])
			n, _ := strconv.Atoi(f[3])
			found[key{cy, w, n}]++
			if f[0] == "t" && (int(c[1]) != w || int(c[0]) != cy || int(c[2]) < n || int(c[2]) >= n+txSize) {
				t.Fatalf("cycle %d: value %q at wrong coordinate %v", cycle, v, c)
			}
		}
		for k, kind := range acked {
			want := 1
			if kind == 't' {
				want = txSize
			}
			if found[k] != want {
				t.Fatalf("cycle %d: acknowledged %c %v: found %d of %d writes (recovery: %s)", cycle, kind, k, found[k], want, db.Stats().Recovery)
			}
		}
		seq, _ = ns.Region(context.Background(), all, top, 0)
		for _, v := range seq {
			if v[0] == 't' {
				f := strings.Split(string(v), ":")
				cy, _ := strconv.Atoi(f[1])
				w, _ := strconv.Atoi(f[2])
				n, _ := strconv.Atoi(f[3])
				if c := found[key{cy, w, n}]; c != txSize {
					t.Fatalf("cycle %d: transaction %v is there in part: %d of %d writes", cycle, key{cy, w, n}, c, txSize)
				}
			}
		}
		if err := db.Close(); err != nil {
			t.Fatalf("cycle %d: close: %v", cycle, err)
		}
	}
	t.Logf("%d acknowledged operations checked (%d acknowledged in the %d cycles)", len(acked), checked, *crashCycles)
}

// TestCrashChild is the child of TestProcessCrash; it does nothing unless
// started by it.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv("CUBE_CRASH_DIR")
	if dir == "" {
		t.Skip("only runs as TestProcessCrash's child")
	}
	cycle, _ := strconv.Atoi(os.Getenv("CUBE_CRASH_CYCLE"))
	db, err := engine.Open(dir, engine.Options{Sync: engine.SyncMode(envInt("CUBE_CRASH_SYNC")), SegmentSize: 128 << 10, CheckpointLogSize: 512 << 10, CheckpointInterval: 50 * time.Millisecond})
	if err != nil {
		fmt.Printf("error open: %v\n", err)
		os.Exit(3)
	}
	ctx := context.Background()
	ns, err := db.Namespace("crash")
	if err != nil {
		if ns, err = db.CreateNamespace(ctx, "crash", engine.NamespaceOptions{Dims: 3}); err != nil {
			fmt.Printf("error create: %v\n", err)
			os.Exit(3)
		}
	}
	var outMu sync.Mutex
	ack := func(kind byte, w, n int) {
		outMu.Lock()
		fmt.Fprintf(os.Stdout, "%c %d %d %d\n", kind, cycle, w, n)
		outMu.Unlock()
	}
	// A failed write is reported on the protocol, so that the parent fails
	// even if it reads stdout only, and ends the child with status 3.
	fail := func(what string, err error) {
		outMu.Lock()
		fmt.Fprintf(os.Stdout, "error %s: %v\n", what, err)
		fmt.Fprintf(os.Stderr, "child %s: %v\n", what, err)
		os.Exit(3)
	}
	fmt.Println("ready")
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), uint64(cycle)))
			for n := 0; ; n += txSize {
				if rng.IntN(2) == 0 {
					v := fmt.Appendf(nil, "p:%d:%d:%d", cycle, w, n)
					if err := ns.Put(ctx, []int32{int32(cycle), int32(w), int32(n)}, v); err != nil {
						fail("put", err)
					}
					ack('p', w, n)
					continue
				}
				v := fmt.Appendf(nil, "t:%d:%d:%d", cycle, w, n)
				err := ns.Update(ctx, func(tx *engine.Tx) error {
					for i := 0; i < txSize; i++ {
						if err := tx.Put([]int32{int32(cycle), int32(w), int32(n + i)}, v); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					fail("tx", err)
				}
				ack('t', w, n)
			}
		}()
	}
	wg.Wait()
}

func envInt(name string) int {
	n, _ := strconv.Atoi(os.Getenv(name))
	return n
}
