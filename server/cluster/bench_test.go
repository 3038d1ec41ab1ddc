//go:build unix

package cluster_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkPut measures acknowledged (durable) PUTs per second, at 1, 8
// and 64 concurrent writers, on one daemon (cube serve, sync always)
// and on the leader of a 3-node cluster on loopback (a PUT is
// acknowledged once a majority has it in Raft's log, fsynced, and the
// leader applied it). Each writer has its own connection and keys.
//
//	go test -run XXX -bench BenchmarkPut -benchtime 3000x ./server/cluster
func BenchmarkPut(b *testing.B) {
	for _, mode := range []string{"single", "cluster3"} {
		b.Run(mode, func(b *testing.B) {
			var addr string
			if mode == "single" {
				addr = startSingle(b)
			} else {
				c := newCluster(b, 3)
				addr = c.leaderOf().resp
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
					b.ResetTimer()
					for w := 0; w < writers; w++ {
						wg.Add(1)
						go func() {
							defer wg.Done()
							c := client(addr)
							defer c.Close()
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

// startSingle starts one daemon, not in cluster mode.
func startSingle(b *testing.B) string {
	addr := freePort(b)
	dir := b.TempDir()
	cmd := exec.Command(binary(b), "serve", "--data", filepath.Join(dir, "data"), "--js-in-process", "--listen", addr)
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
			return addr
		}
		if time.Now().After(deadline) {
			b.Fatalf("daemon at %s did not come up: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
