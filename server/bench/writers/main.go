// Command writers measures durable writes from many concurrent writers:
// through a RESP socket with go-redis (cube's daemon: PUT; redis-server:
// SET), or into an embedded cube (Namespace.Put), so that the daemon's
// cost over the engine shows in one run. vs-redis.sh runs it.
//
//	go run ./server/bench/writers -target cube -sock DIR/cube.sock
//	go run ./server/bench/writers -target redis -sock r.sock
//	go run ./server/bench/writers -target embedded -dir /tmp/x -sync always
//
// It prints writes/s over -duration, after a short warm-up. Keys are random
// over 100,000; values are 3 bytes. For cube the namespace b (1 dimension)
// must exist, or is created.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/cubelinux/cube"
)

func main() {
	target := flag.String("target", "cube", "cube, redis or embedded")
	sock := flag.String("sock", "", "unix socket (cube, redis)")
	dir := flag.String("dir", "", "store directory (embedded; made fresh)")
	syncMode := flag.String("sync", "always", "embedded: always or interval")
	writers := flag.Int("writers", 64, "concurrent writers")
	dur := flag.Duration("duration", 5*time.Second, "measured time")
	cpu := flag.Bool("cpu", false, "also print this process's CPU per write (µs) and the writes done, both over the whole run, warm-up included")
	flag.Parse()
	if err := run(*target, *sock, *dir, *syncMode, *writers, *dur, *cpu); err != nil {
		fmt.Fprintln(os.Stderr, "writers:", err)
		os.Exit(1)
	}
}

func run(target, sock, dir, syncMode string, writers int, dur time.Duration, cpu bool) error {
	ctx := context.Background()
	var put func(ctx context.Context, i int) error
	switch target {
	case "cube", "redis":
		if sock == "" {
			return fmt.Errorf("-sock is required with -target %s", target)
		}
		rc := redis.NewClient(&redis.Options{
			Network: "unix", Addr: sock, PoolSize: writers, MinIdleConns: writers,
			Dialer: func(ctx context.Context, _, addr string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", addr)
			},
			Protocol: 2, DisableIdentity: true,
		})
		defer rc.Close()
		if target == "cube" {
			rc.Do(ctx, "NS.CREATE", "b", "DIMS", "1") // exists already: fine
			put = func(ctx context.Context, i int) error {
				return rc.Do(ctx, "PUT", "b", i, "xyz").Err()
			}
		} else {
			put = func(ctx context.Context, i int) error {
				return rc.Do(ctx, "SET", "key:"+strconv.Itoa(i), "xyz").Err()
			}
		}
	case "embedded":
		if dir == "" {
			return fmt.Errorf("-dir is required with -target embedded")
		}
		mode := cube.SyncAlways
		if syncMode == "interval" {
			mode = cube.SyncInterval
		}
		db, err := cube.Open(dir, cube.Options{Sync: mode})
		if err != nil {
			return err
		}
		defer db.Close()
		ns, err := db.CreateNamespace(ctx, "b", cube.NamespaceOptions{Dims: 1})
		if err != nil {
			return err
		}
		val := []byte("xyz")
		put = func(ctx context.Context, i int) error {
			return ns.Put(ctx, []int32{int32(i)}, val)
		}
	default:
		return fmt.Errorf("-target must be cube, redis or embedded, got %q", target)
	}
	var n, all atomic.Int64
	var measuring atomic.Bool
	var firstErr error
	var once sync.Once
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := put(ctx, rand.IntN(100000)); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				all.Add(1)
				if measuring.Load() {
					n.Add(1)
				}
			}
		}()
	}
	time.Sleep(dur / 5) // warm-up: connections open, the log's files made
	measuring.Store(true)
	start := time.Now()
	time.Sleep(dur)
	measuring.Store(false)
	got := n.Load()
	el := time.Since(start)
	close(stop)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	rate := float64(got) / el.Seconds()
	if !cpu {
		fmt.Printf("%d\n", int64(rate))
		return nil
	}
	// The client's CPU per write over the whole run, warm-up included:
	// what a daemon on the same cores cannot have.
	used, err := cpuTime()
	if err != nil {
		return err
	}
	fmt.Printf("%d %.2f %d\n", int64(rate), float64(used.Nanoseconds())/1e3/float64(all.Load()), all.Load())
	return nil
}
