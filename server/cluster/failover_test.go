//go:build unix

package cluster_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"
)

// BenchmarkFailover measures how long a 3-node cluster on loopback takes
// from the SIGKILL of its leader to the first PUT a new leader
// acknowledges, as a client sees it: the client had been writing to the
// leader, its connection breaks, and it tries the other nodes, following
// MOVED and retrying TRYAGAIN every 20ms. Each of b.N iterations is one
// failover (the killed node is restarted and caught up before the next);
// the figures are the median and the maximum over them, with cube's
// default Raft timeouts (tuned for a LAN: 500ms heartbeat and election
// timeouts, 250ms lease) and with Raft's own (1s, 1s, 500ms), which
// suit a WAN.
//
//	go test -run XXX -bench BenchmarkFailover -benchtime 10x ./server/cluster
func BenchmarkFailover(b *testing.B) {
	for _, tc := range []struct {
		name  string
		extra []string
	}{
		{"timeouts=lan", nil},
		{"timeouts=raft", []string{"--raft-heartbeat-timeout", "1s", "--raft-election-timeout", "1s", "--raft-leader-lease", "500ms"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c := newCluster(b, 3, tc.extra...)
			addrs := []string{c.nodes[0].resp, c.nodes[1].resp, c.nodes[2].resp}
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(60+20*b.N)*time.Second)
			defer cancel()
			cl := newLinClient(0, addrs)
			defer cl.close()
			for {
				err := cl.conn(cl.leader).Do(ctx, "NS.CREATE", "f", "DIMS", "1").Err()
				if err == nil {
					break
				}
				if !cl.reply(err) {
					b.Fatalf("NS.CREATE: %v", err)
				}
			}
			var took []time.Duration
			b.ResetTimer()
			for i := range b.N {
				old := c.leaderOf()
				if old == nil {
					b.Fatal("no leader")
				}
				// The client writes to the leader, as it would.
				cl.leader = old.resp
				if !cl.put(ctx, "f", i, "before") {
					b.Fatal("a write before the kill went unanswered")
				}
				t0 := time.Now()
				c.kill(old)
				v := "after-" + strconv.Itoa(i)
				for !cl.put(ctx, "f", i, v) {
					if ctx.Err() != nil {
						b.Fatal("no write acknowledged after the leader was killed")
					}
				}
				took = append(took, time.Since(t0))
				b.StopTimer()
				c.start(old, "")
				waitHas(b, old, "f", map[int]string{i: v})
				b.StartTimer()
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2])/1e6, "failover-median-ms")
			b.ReportMetric(float64(took[len(took)-1])/1e6, "failover-max-ms")
			b.Logf("SIGKILL of the leader to the first write a new leader acknowledged, %d cycles, sorted: %v", len(took), took)
		})
	}
}
