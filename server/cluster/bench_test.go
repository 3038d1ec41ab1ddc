//go:build unix

package cluster_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/cubelinux/cube/server"
)

// BenchmarkPut measures acknowledged (durable) PUTs per second, at 1, 8
// and 64 concurrent writers, on one daemon (cube serve, sync always)
// and on the leader of a 3-node cluster on loopback (a PUT is
// acknowledged once a majority has it in Raft's log, fsynced, and the
// leader applied it). Each writer has its own connection and keys.
// The clients connect over TCP (single, cluster3), where both serve a
// goroutine per connection, or to the daemon's Unix socket (the -unix
// modes), where a single node's event loop syncs once per round and a
// cluster node still serves a goroutine per connection.
//
// At 64 writers a run wants tens of thousands of writes, or the first
// entries' commits weigh too much:
//
//	go test -run XXX -bench 'BenchmarkPut/.*/writers=64' -benchtime 30000x ./server/cluster
//	go test -run XXX -bench BenchmarkPut -benchtime 3000x ./server/cluster
func BenchmarkPut(b *testing.B) {
	for _, mode := range []string{"single", "cluster3", "single-unix", "cluster3-unix"} {
		b.Run(mode, func(b *testing.B) {
			var addr, data string
			if strings.HasPrefix(mode, "single") {
				addr, data = startSingle(b)
			} else {
				c := newCluster(b, 3)
				n := c.leaderOf()
				addr, data = n.resp, n.data
			}
			if strings.HasSuffix(mode, "-unix") {
				sockets.Store(addr, filepath.Join(data, server.SocketName))
				defer sockets.Delete(addr)
			}
			cl := client(addr)
			defer cl.Close()
			if err := cl.Do(context.Background(), "NS.CREATE", "b", "DIMS", "2").Err(); err != nil {
				b.Fatal(err)
			}
			for _, writers := range []int{1, 8, 64} {
				b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
					var next atomic.Int64
					var wg sync.WaitGroup
					ctx := context.Background()
					cs := dialed(b, addr, writers)
					b.ResetTimer()
					for _, c := range cs {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for {
								i := next.Add(1)
								if i > int64(b.N) {
									return
								}
								if err := c.Do(ctx, "PUT", "b", writers, i, "value-of-some-bytes").Err(); err != nil {
									b.Error(err)
									return
								}
							}
						}()
					}
					wg.Wait()
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
				})
			}
		})
	}
}

// dialed returns n clients of addr, each with its connection made and
// authenticated, for a benchmark to use once its clock starts: 64 dials
// in a run of a few thousand writes cost the faster daemon more of its
// time, and made the cluster look closer than it is.
func dialed(b *testing.B, addr string, n int) []*redis.Client {
	cs := make([]*redis.Client, n)
	for i := range cs {
		cs[i] = client(addr)
		b.Cleanup(func() { cs[i].Close() })
		if err := cs[i].Ping(context.Background()).Err(); err != nil {
			b.Fatal(err)
		}
	}
	return cs
}

// startSingle starts one daemon, not in cluster mode, and returns its
// TCP address and its data directory.
func startSingle(b *testing.B) (addr, data string) {
	addr = freePort(b)
	data = filepath.Join(b.TempDir(), "data")
	cmd := exec.Command(binary(b), "serve", "--data", data, "--js-in-process", "--listen", addr)
	cmd.Env = append(os.Environ(), "CUBE_AUTH="+token)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; {
		c := client(addr)
		err := c.Ping(context.Background()).Err()
		c.Close()
		if err == nil {
			return addr, data
		}
		if time.Now().After(deadline) {
			b.Fatalf("daemon at %s did not come up: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
