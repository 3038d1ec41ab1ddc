package engine_test

import (
	"bufio"
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

// TestProcessCrash runs this test binary as a child that writes under load
// — concurrent writers, single puts and multi-write transactions — and
// reports every acknowledged write on stdout. The parent SIGKILLs it at a
// random moment, reopens the store, and checks that every acknowledged
// write is there and that no transaction is there in part.
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
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ready := make(chan struct{})
		var mu sync.Mutex
		var lines []string
		done := make(chan struct{})
		go func() {
			defer close(done)
			sc := bufio.NewScanner(out)
			once := sync.OnceFunc(func() { close(ready) })
			for sc.Scan() {
				if sc.Text() == "ready" {
					once()
					continue
				}
				mu.Lock()
				lines = append(lines, sc.Text())
				mu.Unlock()
			}
			once()
		}()
		<-ready
		time.Sleep(time.Duration(5+rng.IntN(150)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
		cmd.Wait()
		mu.Lock()
		for _, l := range lines {
			var k key
			var kind byte
			if _, err := fmt.Sscanf(l, "%c %d %d %d", &kind, &k.cycle, &k.w, &k.n); err != nil {
				continue // a line cut by the kill was never complete, so never acknowledged
			}
			acked[k] = kind
		}
		mu.Unlock()

		db, err := engine.Open(dir, engine.Options{})
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
	t.Logf("%d acknowledged operations checked", len(acked))
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
		fmt.Fprintln(os.Stderr, "child open:", err)
		os.Exit(3)
	}
	ctx := context.Background()
	ns, err := db.Namespace("crash")
	if err != nil {
		if ns, err = db.CreateNamespace(ctx, "crash", engine.NamespaceOptions{Dims: 3}); err != nil {
			fmt.Fprintln(os.Stderr, "child create:", err)
			os.Exit(3)
		}
	}
	var outMu sync.Mutex
	ack := func(kind byte, w, n int) {
		outMu.Lock()
		fmt.Fprintf(os.Stdout, "%c %d %d %d\n", kind, cycle, w, n)
		outMu.Unlock()
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
						fmt.Fprintln(os.Stderr, "child put:", err)
						os.Exit(3)
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
					fmt.Fprintln(os.Stderr, "child tx:", err)
					os.Exit(3)
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
