//go:build unix

package cluster_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestClusterReadsLeader: a connection that sent CLUSTER.READS LEADER is
// redirected to the leader by a follower for every read (GET, a
// read-only RUN), and answered by the leader, with its own writes; go-redis
// sets it on each pooled connection through OnConnect, and the cube CLI
// would follow the MOVED. Another connection to the same follower still
// reads there. Break seen failing: readCheck ignoring leaderReads (the
// follower answers the GET).
func TestClusterReadsLeader(t *testing.T) {
	c := newCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	leader := c.leaderOf()
	lc := client(leader.resp)
	defer lc.Close()
	for _, cmd := range [][]any{
		{"NS.CREATE", "r", "DIMS", "1"},
		{"PUT", "r", 1, "one"},
		{"PROG", "r", "peek", "JS", `function run() { return cube.get([1]) }`, "RO"},
	} {
		if err := lc.Do(ctx, cmd...).Err(); err != nil {
			t.Fatal(cmd, err)
		}
	}
	var f *node
	for _, n := range c.nodes {
		if n != leader {
			f = n
		}
	}
	// A follower connection that may read there, once it is current.
	anyc := client(f.resp)
	defer anyc.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		s, err := anyc.Do(ctx, "GET", "r", 1).Text()
		if err == nil && s == "one" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET on follower %s: %q %v", f.id, s, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if s, err := anyc.Do(ctx, "CLUSTER.READS").Text(); err != nil || s != "ANY" {
		t.Fatalf("CLUSTER.READS on a new connection: %q %v, want ANY", s, err)
	}

	leaderReads := func(addr string) *redis.Client {
		o := clientOptions(addr)
		o.OnConnect = func(ctx context.Context, cn *redis.Conn) error {
			return cn.Do(ctx, "CLUSTER.READS", "LEADER").Err()
		}
		return redis.NewClient(o)
	}
	strict := leaderReads(f.resp)
	defer strict.Close()
	for _, cmd := range [][]any{{"GET", "r", 1}, {"RUN", "r", "peek"}} {
		err := strict.Do(ctx, cmd...).Err()
		if err == nil || !strings.HasPrefix(err.Error(), "MOVED 0 "+leader.resp) {
			t.Errorf("%v on follower %s with CLUSTER.READS LEADER: %v, want MOVED 0 %s", cmd, f.id, err, leader.resp)
		}
	}
	if s, err := strict.Do(ctx, "CLUSTER.READS").Text(); err != nil || s != "LEADER" {
		t.Errorf("CLUSTER.READS after LEADER: %q %v", s, err)
	}
	// The same setting on the leader: its own write, then its read.
	onLeader := leaderReads(leader.resp)
	defer onLeader.Close()
	if err := onLeader.Do(ctx, "PUT", "r", 2, "two").Err(); err != nil {
		t.Fatal(err)
	}
	if s, err := onLeader.Do(ctx, "GET", "r", 2).Text(); err != nil || s != "two" {
		t.Errorf("GET on the leader with CLUSTER.READS LEADER: %q %v", s, err)
	}
	// The other follower connection is not affected.
	if s, err := anyc.Do(ctx, "GET", "r", 1).Text(); err != nil || s != "one" {
		t.Errorf("GET on follower %s from another connection: %q %v", f.id, s, err)
	}
	if err := anyc.Do(ctx, "CLUSTER.READS", "SOMETIMES").Err(); err == nil || !strings.Contains(err.Error(), "LEADER") {
		t.Errorf("CLUSTER.READS SOMETIMES: %v, want an error naming LEADER and ANY", err)
	}
}
