//go:build unix

package cluster_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkGet measures GETs per second of one key at 1 and 16
// concurrent readers, each with its own connection: on one daemon, on
// the leader of a 3-node cluster (linearizable: a read lease on the
// node's clock, renewed by a Barrier), and on a follower (bounded
// stale, --max-stale 500ms). To weigh another way of checking reads,
// build a daemon with it and compare:
//
//	go build -o /tmp/cube-new ./cmd/cube
//	CUBE_CLUSTER_BIN=/tmp/cube-new go test -run XXX -bench BenchmarkGet -count 5 ./server/cluster
//
// Measured (2 shared cores, loopback, -benchtime 3000x, median of 5
// runs alternating 4 builds, reads/s at 1 / 16 readers): the leader
// with the lease 16,505 / 39,075; with no read check at all (before
// reads were checked) 18,703 / 40,372, the same within the noise;
// raft.VerifyLeader on every read 4,896 / 20,749; a Barrier on every
// read 392 / 2,132. A follower within --max-stale: 20,334 / 39,510.
func BenchmarkGet(b *testing.B) {
	for _, mode := range []string{"single", "leader", "follower"} {
		b.Run(mode, func(b *testing.B) {
			var addr string
			if mode == "single" {
				addr, _ = startSingle(b)
			} else {
				c := newCluster(b, 3)
				leader := c.leaderOf()
				addr = leader.resp
				if mode == "follower" {
					for _, n := range c.nodes {
						if n != leader {
							addr = n.resp
						}
					}
				}
			}
			w := newWriter(addr)
			defer w.close()
			ctx := context.Background()
			if err := w.do(ctx, "NS.CREATE", "g", "DIMS", "1"); err != nil {
				b.Fatal(err)
			}
			if err := w.do(ctx, "PUT", "g", 1, "value-of-some-bytes"); err != nil {
				b.Fatal(err)
			}
			warm := client(addr)
			for { // a follower answers once the leader confirmed it current
				if err := warm.Do(ctx, "GET", "g", 1).Err(); err == nil {
					break
				}
			}
			warm.Close()
			for _, readers := range []int{1, 16} {
				b.Run(fmt.Sprintf("readers=%d", readers), func(b *testing.B) {
					cs := dialed(b, addr, readers)
					var next atomic.Int64
					var wg sync.WaitGroup
					b.ResetTimer()
					for _, c := range cs {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for next.Add(1) <= int64(b.N) {
								if err := c.Do(ctx, "GET", "g", 1).Err(); err != nil {
									b.Error(err)
									return
								}
							}
						}()
					}
					wg.Wait()
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "reads/s")
				})
			}
		})
	}
}
