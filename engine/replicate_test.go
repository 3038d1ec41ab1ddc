package engine_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cubelinux/cube/engine"
)

// seqLog is a consensus log reduced to what the engine's contract with
// one needs: records are ordered as proposed, applied in that order on
// every node after a delay (the round trip), and each wait returns the
// proposer's apply's result. It is not Raft (the cluster tests run the
// real thing); it lets the engine's side be tested alone, with a delay
// long enough for a transaction that did not wait for its predecessors
// to read stale state.
type seqLog struct {
	nodes []*engine.DB
	delay time.Duration
	ch    chan *seqEntry
	done  chan struct{}
}

type seqEntry struct {
	rec  []byte
	err  error
	over chan struct{}
}

func newSeqLog(t *testing.T, delay time.Duration, nodes ...*engine.DB) *seqLog {
	l := &seqLog{nodes: nodes, delay: delay, ch: make(chan *seqEntry, 1024), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for e := range l.ch {
			time.Sleep(l.delay)
			for i, db := range l.nodes {
				err := db.ApplyReplicated(e.rec)
				if i == 0 {
					e.err = err
				}
			}
			close(e.over)
		}
	}()
	t.Cleanup(func() { close(l.ch); <-l.done })
	nodes[0].SetReplicator(l)
	return l
}

func (l *seqLog) Propose(rec []byte) func(context.Context) error {
	e := &seqEntry{rec: rec, over: make(chan struct{})}
	l.ch <- e
	return func(ctx context.Context) error {
		select {
		case <-e.over:
			return e.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// dump describes a store's whole state, for comparing nodes.
func dump(t *testing.T, db *engine.DB) string {
	t.Helper()
	ctx := context.Background()
	var b bytes.Buffer
	for _, info := range db.Namespaces() {
		fmt.Fprintf(&b, "ns %s dims=%d curve=%s geo=%v max=%d\n", info.Name, info.Dims, info.Curve, info.Geo, info.MaxValueSize)
		ns, err := db.Namespace(info.Name)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := make([]int32, info.Dims), make([]int32, info.Dims)
		for i := range lo {
			lo[i], hi[i] = -1<<31, 1<<31-1
		}
		err = ns.View(ctx, func(tx *engine.Tx) error {
			seq, err := tx.Region(lo, hi, 0)
			if err != nil {
				return err
			}
			var coords [][]int32
			for c, v := range seq {
				fmt.Fprintf(&b, "  %v=%q\n", c, v)
				coords = append(coords, slices.Clone(c))
			}
			for _, c := range coords {
				edges, err := tx.Edges(c, engine.Out, "")
				if err != nil {
					return err
				}
				for e := range edges {
					fmt.Fprintf(&b, "  %v-%s->%v w=%v %q\n", e.From, e.Label, e.To, e.Weight, e.Value)
				}
			}
			for _, k := range tx.MetaKeys("") {
				v, _ := tx.Meta(k)
				fmt.Fprintf(&b, "  meta %s=%q\n", k, v)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// TestReplicatedWritesApplyEverywhere runs every kind of write on a
// leader under a Replicator and checks that the followers, which only
// ever see the records, end in the leader's state.
//
// Break: make ApplyReplicated skip ns.commit for data records -> the
// followers' dumps lack every value ("want ... got ns a ..." only).
func TestReplicatedWritesApplyEverywhere(t *testing.T) {
	ctx := context.Background()
	o := engine.Options{}
	leader := mustOpen(t, t.TempDir(), o)
	f1 := mustOpen(t, t.TempDir(), o)
	f2 := mustOpen(t, t.TempDir(), o)
	newSeqLog(t, 0, leader, f1, f2)

	a, err := leader.CreateNamespace(ctx, "a", engine.NamespaceOptions{Dims: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leader.CreateNamespace(ctx, "a", engine.NamespaceOptions{Dims: 2}); !errors.Is(err, engine.ErrNamespaceExists) {
		t.Fatalf("second create of a: %v, want ErrNamespaceExists", err)
	}
	if _, err := leader.CreateNamespace(ctx, "gone", engine.NamespaceOptions{Dims: 1}); err != nil {
		t.Fatal(err)
	}
	g, err := leader.CreateNamespace(ctx, "geo", engine.NamespaceOptions{Geo: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := int32(0); i < 20; i++ {
		if err := a.Put(ctx, []int32{i, -i}, []byte(fmt.Sprint("v", i))); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := a.Delete(ctx, []int32{3, -3}); err != nil || !ok {
		t.Fatalf("delete: %v %v", ok, err)
	}
	if ok, err := a.Delete(ctx, []int32{99, 99}); err != nil || ok {
		t.Fatalf("delete of nothing: %v %v", ok, err)
	}
	if err := a.Link(ctx, []int32{1, -1}, []int32{2, -2}, "road", 2.5, []byte("e")); err != nil {
		t.Fatal(err)
	}
	if err := a.Link(ctx, []int32{2, -2}, []int32{4, -4}, "road", 1, nil); err != nil {
		t.Fatal(err)
	}
	if ok, err := a.Unlink(ctx, []int32{2, -2}, []int32{4, -4}, "road"); err != nil || !ok {
		t.Fatalf("unlink: %v %v", ok, err)
	}
	err = a.Update(ctx, func(tx *engine.Tx) error {
		if err := tx.SetMeta("k", []byte("meta")); err != nil {
			return err
		}
		// A transaction reads its own writes before they are proposed.
		if v, err := tx.Get([]int32{5, -5}); err != nil || string(v) != "v5" {
			return fmt.Errorf("get in tx: %q %v", v, err)
		}
		if err := tx.Put([]int32{5, -5}, []byte("five")); err != nil {
			return err
		}
		if v, err := tx.Get([]int32{5, -5}); err != nil || string(v) != "five" {
			return fmt.Errorf("get own write: %q %v", v, err)
		}
		return tx.Link([]int32{5, -5}, []int32{6, -6}, "x", 1, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Put(ctx, []int32{23_000_000, 48_000_000}, []byte("paris")); err != nil {
		t.Fatal(err)
	}
	if err := leader.DropNamespace(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	// A failed function proposes nothing.
	boom := errors.New("boom")
	if err := a.Update(ctx, func(tx *engine.Tx) error { tx.Put([]int32{7, 7}, []byte("no")); return boom }); err != boom {
		t.Fatalf("failed update: %v", err)
	}
	want := dump(t, leader)
	if !bytes.Contains([]byte(want), []byte(`[5 -5]-x->[6 -6]`)) || bytes.Contains([]byte(want), []byte("gone")) {
		t.Fatalf("leader's state is not what was written:\n%s", want)
	}
	for i, f := range []*engine.DB{f1, f2} {
		if got := dump(t, f); got != want {
			t.Errorf("follower %d:\n%s\nwant (the leader's):\n%s", i+1, got, want)
		}
	}
}

// TestReplicatedReadModifyWrite: concurrent read-modify-write
// transactions under a Replicator whose round trip takes a while lose
// no update: each reads its predecessors' writes, so the counter ends
// at the number of increments on every node.
//
// Break: drop tx.syncReads() from Tx.check -> the counter ends far
// below 200 (each transaction reads the value before the pending ones
// are applied).
func TestReplicatedReadModifyWrite(t *testing.T) {
	ctx := context.Background()
	leader := mustOpen(t, t.TempDir(), engine.Options{})
	f := mustOpen(t, t.TempDir(), engine.Options{})
	newSeqLog(t, time.Millisecond, leader, f)
	ns, err := leader.CreateNamespace(ctx, "c", engine.NamespaceOptions{Dims: 1})
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				err := ns.Update(ctx, func(tx *engine.Tx) error {
					n := 0
					if v, err := tx.Get([]int32{0}); err == nil {
						fmt.Sscan(string(v), &n)
					} else if !errors.Is(err, engine.ErrNotFound) {
						return err
					}
					return tx.Put([]int32{0}, []byte(fmt.Sprint(n+1)))
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i, db := range []*engine.DB{leader, f} {
		n, _ := db.Namespace("c")
		v, err := n.Get(ctx, []int32{0})
		if err != nil || string(v) != fmt.Sprint(workers*each) {
			t.Errorf("node %d: counter %q (%v), want %d", i, v, err, workers*each)
		}
	}
}

// TestReplicatedBlindWritesShareRoundTrips: writes that read nothing do
// not wait for one another's records to be applied, so many writers'
// records are in flight at once (as a single store's writers share a
// log sync).
//
// Break: make updateReplicated keep rmu until wait returns -> in flight
// stays 1 and this fails.
func TestReplicatedBlindWritesShareRoundTrips(t *testing.T) {
	ctx := context.Background()
	leader := mustOpen(t, t.TempDir(), engine.Options{})
	l := &countingLog{inner: newSeqLog(t, 5*time.Millisecond, leader)}
	leader.SetReplicator(l)
	ns, err := leader.CreateNamespace(ctx, "c", engine.NamespaceOptions{Dims: 1})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := int32(0); w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int32(0); i < 4; i++ {
				if err := ns.Put(ctx, []int32{w*10 + i}, []byte("x")); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if l.max() < 4 {
		t.Fatalf("at most %d writes were in flight at once; blind writes should not wait for each other", l.max())
	}
	if n, _ := ns.Count(ctx, []int32{0}, []int32{1000}); n != 64 {
		t.Fatalf("%d values, want 64", n)
	}
}

type countingLog struct {
	inner          *seqLog
	mu             sync.Mutex
	inFlight, high int
}

func (c *countingLog) Propose(rec []byte) func(context.Context) error {
	c.mu.Lock()
	c.inFlight++
	c.high = max(c.high, c.inFlight)
	c.mu.Unlock()
	w := c.inner.Propose(rec)
	var once sync.Once
	return func(ctx context.Context) error {
		err := w(ctx)
		once.Do(func() { c.mu.Lock(); c.inFlight--; c.mu.Unlock() })
		return err
	}
}

func (c *countingLog) max() int { c.mu.Lock(); defer c.mu.Unlock(); return c.high }

// TestSnapshotRestore: a snapshot written by one store and restored
// into another, which held other namespaces, gives the first one's
// state, with the namespaces' ids: records the first store applies
// afterwards apply on the second too.
//
// Break: make Restore skip the drops of the namespaces it found ->
// "old" is still in the restored dump. Break: drop the clone of rec in
// ApplyReplicated -> x's values and metadata read back as y's bytes
// (Restore reuses its buffers; so may Raft).
func TestSnapshotRestore(t *testing.T) {
	ctx := context.Background()
	src := mustOpen(t, t.TempDir(), engine.Options{})
	dst := mustOpen(t, t.TempDir(), engine.Options{})
	if _, err := dst.CreateNamespace(ctx, "old", engine.NamespaceOptions{Dims: 1}); err != nil {
		t.Fatal(err)
	}
	log := newSeqLog(t, 0, src)
	for _, name := range []string{"x", "dropped", "y"} {
		if _, err := src.CreateNamespace(ctx, name, engine.NamespaceOptions{Dims: 3}); err != nil {
			t.Fatal(err)
		}
	}
	if err := src.DropNamespace(ctx, "dropped"); err != nil {
		t.Fatal(err)
	}
	x, _ := src.Namespace("x")
	for i := int32(0); i < 3000; i++ {
		if err := x.Put(ctx, []int32{i, i % 7, -i}, bytes.Repeat([]byte{byte(i)}, int(i%50))); err != nil {
			t.Fatal(err)
		}
	}
	x.Link(ctx, []int32{1, 1, -1}, []int32{2, 2, -2}, "l", 3, []byte("v"))
	x.Update(ctx, func(tx *engine.Tx) error { return tx.SetMeta("m", []byte("1")) })
	// A second namespace's records come in a batch of their own after
	// x's: what x's values point to must not be reused for them.
	y0, _ := src.Namespace("y")
	y0.Update(ctx, func(tx *engine.Tx) error {
		tx.SetMeta("n", []byte("yy"))
		return tx.Put([]int32{0, 0, 0}, []byte("zero"))
	})
	snap, err := src.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	// Written after the snapshot: not in it.
	x.Put(ctx, []int32{-5, -5, -5}, []byte("later"))
	var buf bytes.Buffer
	if _, err := snap.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	stream := buf.Bytes()
	if err := dst.Restore(ctx, bytes.NewReader(stream)); err != nil {
		t.Fatal(err)
	}
	x.Delete(ctx, []int32{-5, -5, -5})
	if got, want := dump(t, dst), dump(t, src); got != want {
		t.Fatalf("restored:\n%.2000s\nwant:\n%.2000s", got, want)
	}
	// The ids came along: the source's later records apply here too.
	log.nodes = append(log.nodes, dst)
	y, _ := src.Namespace("y")
	if err := y.Put(ctx, []int32{1, 2, 3}, []byte("after")); err != nil {
		t.Fatal(err)
	}
	if _, err := src.CreateNamespace(ctx, "z", engine.NamespaceOptions{Dims: 1}); err != nil {
		t.Fatal(err)
	}
	if got, want := dump(t, dst), dump(t, src); got != want {
		t.Fatalf("after more records:\n%s\nwant:\n%s", got, want)
	}
	// A stream cut anywhere, or not a stream, is refused as corruption.
	for _, bad := range [][]byte{nil, []byte("cubesnp\x02"), stream[:len(stream)-3]} {
		other := mustOpen(t, t.TempDir(), engine.Options{})
		if err := other.Restore(ctx, bytes.NewReader(bad)); !engine.IsCorruption(err) {
			t.Errorf("restore of %d bad bytes: %v, want a corruption error", len(bad), err)
		}
	}
}

// TestApplyReplicatedReplay: applying a suffix of the records again on
// a state that already has them (a node restarting replays its log
// from its last snapshot) ends in the same state.
func TestApplyReplicatedReplay(t *testing.T) {
	ctx := context.Background()
	leader := mustOpen(t, t.TempDir(), engine.Options{})
	rec := &recordingLog{}
	leader.SetReplicator(rec)
	rec.db = leader
	a, _ := leader.CreateNamespace(ctx, "a", engine.NamespaceOptions{Dims: 1})
	for i := int32(0); i < 10; i++ {
		a.Put(ctx, []int32{i}, []byte{byte(i)})
	}
	a.Delete(ctx, []int32{4})
	leader.DropNamespace(ctx, "a")
	b, _ := leader.CreateNamespace(ctx, "a", engine.NamespaceOptions{Dims: 1})
	b.Put(ctx, []int32{1}, []byte("new"))
	b.Link(ctx, []int32{1}, []int32{2}, "", 1, nil)
	want := dump(t, leader)
	for from := range rec.recs {
		f := mustOpen(t, t.TempDir(), engine.Options{})
		for _, r := range rec.recs {
			f.ApplyReplicated(r)
		}
		for _, r := range rec.recs[from:] {
			f.ApplyReplicated(r)
		}
		if got := dump(t, f); got != want {
			t.Fatalf("replaying from record %d:\n%s\nwant:\n%s", from, got, want)
		}
	}
}

// recordingLog applies each record at once and keeps it.
type recordingLog struct {
	db   *engine.DB
	recs [][]byte
}

func (r *recordingLog) Propose(rec []byte) func(context.Context) error {
	r.recs = append(r.recs, rec)
	err := r.db.ApplyReplicated(rec)
	return func(context.Context) error { return err }
}

// TestApplyReplicatedRefuses: records that do not decode, or that mix
// what one record may not, are refused and change nothing; a write to
// a dropped namespace fails with ErrNoNamespace on every node alike.
func TestApplyReplicatedRefuses(t *testing.T) {
	ctx := context.Background()
	src := mustOpen(t, t.TempDir(), engine.Options{})
	rec := &recordingLog{db: src}
	src.SetReplicator(rec)
	a, _ := src.CreateNamespace(ctx, "a", engine.NamespaceOptions{Dims: 1})
	src.CreateNamespace(ctx, "b", engine.NamespaceOptions{Dims: 2})
	a.Put(ctx, []int32{1}, []byte("x"))
	createA, createB, put := rec.recs[0], rec.recs[1], rec.recs[2]

	dst := mustOpen(t, t.TempDir(), engine.Options{})
	for _, r := range [][]byte{createA, createB} {
		if err := dst.ApplyReplicated(r); err != nil {
			t.Fatal(err)
		}
	}
	before := dump(t, dst)
	bad := map[string][]byte{
		"garbage":               {0xff, 1, 2},
		"cut":                   put[:len(put)-1],
		"create and put":        slices.Concat(createA, put),
		"put then create":       slices.Concat(put, createB),
		"put on two namespaces": slices.Concat(put, []byte{3, 2, 1, 0, 0, 0, 0, 0}),
	}
	for name, r := range bad {
		if err := dst.ApplyReplicated(r); err == nil {
			t.Errorf("%s: applied", name)
		}
		if got := dump(t, dst); got != before {
			t.Errorf("%s: changed the state:\n%s", name, got)
		}
	}
	src.DropNamespace(ctx, "a")
	dst.ApplyReplicated(rec.recs[3])
	if err := dst.ApplyReplicated(put); !errors.Is(err, engine.ErrNoNamespace) {
		t.Errorf("put after the drop: %v, want ErrNoNamespace", err)
	}
}

// FuzzApplyReplicated: a record from the network never panics the
// engine, and one that is refused changes nothing.
func FuzzApplyReplicated(f *testing.F) {
	f.Add([]byte{3, 1, 1, 1, 0, 0, 0, 1, 'x'})
	f.Add([]byte{1, 1, 1, 'a', 1, 0, 0})
	f.Add([]byte{5, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, rec []byte) {
		db := mustOpen(t, t.TempDir(), engine.Options{Sync: engine.SyncNone})
		if _, err := db.CreateNamespace(context.Background(), "a", engine.NamespaceOptions{Dims: 1}); err != nil {
			t.Fatal(err)
		}
		before := dump(t, db)
		if err := db.ApplyReplicated(rec); err != nil && dump(t, db) != before {
			t.Fatalf("refused (%v) but changed the state", err)
		}
	})
}

// FuzzRestore: a snapshot stream from the network never panics the
// engine.
func FuzzRestore(f *testing.F) {
	f.Add([]byte("cubesnp\x01"))
	f.Add([]byte("cubesnp\x01\x07\x01\x01\x01a\x01\x00\x00"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		db := mustOpen(t, t.TempDir(), engine.Options{Sync: engine.SyncNone})
		_ = db.Restore(context.Background(), bytes.NewReader(stream))
	})
}
