package engine_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/engine/vfs"
)

var (
	powerSeeds = flag.Int("powerloss.seeds", 8, "seeds per configuration in TestPowerLoss")
	powerSeed  = flag.Uint64("seed", 0, "replay this one seed in TestPowerLoss")
)

// model is the plain in-memory truth the store is compared against.
type model struct {
	vals  map[[2]int32]string
	edges map[edgeKey]float64
}

type edgeKey struct {
	from, to [2]int32
	label    string
}

func (m model) clone() model {
	return model{vals: maps.Clone(m.vals), edges: maps.Clone(m.edges)}
}

func (m model) equal(o model) bool {
	return maps.Equal(m.vals, o.vals) && maps.Equal(m.edges, o.edges)
}

func (m model) String() string { return fmt.Sprintf("%d values, %d edges", len(m.vals), len(m.edges)) }

type powerConfig struct {
	name      string
	sync      engine.SyncMode
	segment   int64
	ckptEvery int // checkpoint about once every this many ops; 0 = never
	encrypt   bool
}

var powerConfigs = []powerConfig{
	{"always", engine.SyncAlways, 1 << 20, 0, false},
	{"always-tiny-ckpt", engine.SyncAlways, 4 << 10, 8, false},
	{"always-tiny-ckpt-encrypted", engine.SyncAlways, 4 << 10, 8, true},
	{"interval-tiny-ckpt", engine.SyncInterval, 4 << 10, 10, false},
	{"none-ckpt-encrypted", engine.SyncNone, 16 << 10, 6, true},
}

// TestPowerLoss runs seeded random operations against the store and a
// model, crashes the simulated file system at random points (between
// operations and in the middle of checkpoints), reopens, and compares. In
// SyncAlways mode the store must equal the model exactly: every completed
// operation was acknowledged. In the other modes it must equal the model as
// of some operation no earlier than the last Sync or checkpoint.
// TestPowerLossGroupCommit adds concurrent writers sharing one fdatasync.
//
// Deliberate breaks this test was seen to catch (each made, run, failed,
// restored):
//   - wal: f.Sync() dropped from the flusher (Log.syncFile): every
//     configuration fails;
//   - engine: the wait for durability dropped before acknowledging
//     (DB.waitDurable returning nil): the three SyncAlways configurations
//     fail ("after crash the store has ..."); the others promise no more
//     than they keep;
//   - wal: WaitDurable returning at once in SyncAlways: the same three.
func TestPowerLoss(t *testing.T) {
	for _, cfg := range powerConfigs {
		t.Run(cfg.name, func(t *testing.T) {
			if *powerSeed != 0 {
				runPowerLoss(t, cfg, *powerSeed)
				return
			}
			base := uint64(time.Now().UnixNano())
			for i := 0; i < *powerSeeds; i++ {
				runPowerLoss(t, cfg, base+uint64(i))
				if t.Failed() {
					return
				}
			}
		})
	}
}

func runPowerLoss(t *testing.T, cfg powerConfig, seed uint64) {
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d (replay: go test ./engine -run 'TestPowerLoss/%s$' -seed %d): %s", seed, cfg.name, seed, fmt.Sprintf(format, args...))
	}
	rng := rand.New(rand.NewPCG(seed, 99))
	mem := vfs.NewMem()
	// Each incarnation of the store sees mem through its own wrapper. Once
	// it "crashes", every operation it tries fails, as the operations of a
	// dead process never happen. Syncs take a moment, as on a disk, so that
	// a write acknowledged before its sync would be caught by the crash.
	var kill func()
	crash := func(clean bool) {
		kill()
		if clean {
			mem.CrashClean() // exactly what was synced survives
		} else {
			mem.Crash(rng)
		}
	}
	var key []byte
	if cfg.encrypt {
		key = bytes.Repeat([]byte{7}, 32)
	}
	opts := engine.Options{Sync: cfg.sync, SyncInterval: 2 * time.Millisecond, SegmentSize: cfg.segment, EncryptionKey: key, CheckpointInterval: -1}
	open := func() *engine.DB {
		opts.FS, kill = incarnation(mem, 50*time.Microsecond)
		db, err := openStore(t, "/d", opts, verifyOn(mem))
		if err != nil {
			fail("open: %v", err)
		}
		return db
	}
	db := open()
	ns, err := db.CreateNamespace(ctx, "p", engine.NamespaceOptions{Dims: 2, MaxValueSize: 64})
	if err != nil {
		fail("create: %v", err)
	}
	if err := db.Sync(ctx); err != nil {
		fail("sync: %v", err)
	}
	cur := model{vals: map[[2]int32]string{}, edges: map[edgeKey]float64{}}
	history := []model{cur.clone()} // history[i]: the state after i ops since the last reopen
	durable := 0                    // index into history known durable
	coord := func() [2]int32 { return [2]int32{int32(rng.IntN(6)), int32(rng.IntN(6))} }
	labels := []string{"a", "b"}
	for round := 0; round < 3; round++ {
		nops := 20 + rng.IntN(60)
		for i := 0; i < nops; i++ {
			switch r := rng.IntN(100); {
			case r < 40:
				c := coord()
				v := fmt.Sprintf("v%d", rng.IntN(1000))
				if err := ns.Put(ctx, c[:], []byte(v)); err != nil {
					fail("put: %v", err)
				}
				cur.vals[c] = v
			case r < 55:
				c := coord()
				ok, err := ns.Delete(ctx, c[:])
				if err != nil {
					fail("delete: %v", err)
				}
				if _, had := cur.vals[c]; had != ok {
					fail("delete %v reported %v, model had %v", c, ok, had)
				}
				delete(cur.vals, c)
			case r < 75:
				// A transaction of a few writes that sometimes fails.
				next := cur.clone()
				fails := rng.IntN(4) == 0
				err := ns.Update(ctx, func(tx *engine.Tx) error {
					for j := rng.IntN(4); j >= 0; j-- {
						c := coord()
						if rng.IntN(3) == 0 {
							if _, err := tx.Delete(c[:]); err != nil {
								return err
							}
							delete(next.vals, c)
						} else {
							v := fmt.Sprintf("t%d", rng.IntN(1000))
							if err := tx.Put(c[:], []byte(v)); err != nil {
								return err
							}
							next.vals[c] = v
						}
					}
					if fails {
						return errors.New("rollback")
					}
					return nil
				})
				if fails != (err != nil) {
					fail("update: %v (should fail: %v)", err, fails)
				}
				if !fails {
					cur = next
				}
			case r < 87:
				from, to, l := coord(), coord(), labels[rng.IntN(2)]
				w := float64(rng.IntN(10))
				if err := ns.Link(ctx, from[:], to[:], l, w, nil); err != nil {
					fail("link: %v", err)
				}
				cur.edges[edgeKey{from, to, l}] = w
			case r < 95:
				from, to, l := coord(), coord(), labels[rng.IntN(2)]
				if _, err := ns.Unlink(ctx, from[:], to[:], l); err != nil {
					fail("unlink: %v", err)
				}
				delete(cur.edges, edgeKey{from, to, l})
			default:
				if err := db.Sync(ctx); err != nil {
					fail("sync: %v", err)
				}
				history = append(history, cur.clone())
				durable = len(history) - 1
				continue
			}
			history = append(history, cur.clone())
			if cfg.ckptEvery > 0 && rng.IntN(cfg.ckptEvery) == 0 {
				if _, err := db.Checkpoint(ctx); err != nil {
					fail("checkpoint: %v", err)
				}
				durable = len(history) - 1
			}
		}
		// Crash: sometimes while a checkpoint is being written.
		if cfg.ckptEvery > 0 && rng.IntN(2) == 0 {
			done := make(chan struct{})
			go func() { db.Checkpoint(ctx); close(done) }()
			for n := rng.IntN(50); n > 0; n-- {
				time.Sleep(time.Microsecond)
			}
			crash(false)
			<-done
		} else {
			crash(rng.IntN(2) == 0)
		}
		db.Close() // stops its goroutines; its file handles are dead
		db = open()
		ns, err = db.Namespace("p")
		if err != nil {
			fail("round %d: namespace lost: %v", round, err)
		}
		got := readModel(t, ns)
		if cfg.sync == engine.SyncAlways {
			if !got.equal(cur) {
				fail("round %d: after crash the store has %v, the model %v\n got %v\nwant %v", round, got, cur, got.vals, cur.vals)
			}
		} else {
			match := -1
			for j := len(history) - 1; j >= durable; j-- {
				if got.equal(history[j]) {
					match = j
					break
				}
			}
			if match < 0 {
				fail("round %d: after crash the store (%v) matches no state from op %d (durable) to %d\n got %v\nwant %v", round, got, durable, len(history)-1, got.vals, history[durable].vals)
			}
			cur = got.clone()
		}
		history = []model{cur.clone()}
		durable = 0
	}
	db.Close()
}

func readModel(t *testing.T, ns *engine.Namespace) model {
	t.Helper()
	m := model{vals: map[[2]int32]string{}, edges: map[edgeKey]float64{}}
	seq, err := ns.Region(ctx, []int32{-1, -1}, []int32{10, 10}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for c, v := range seq {
		m.vals[[2]int32{c[0], c[1]}] = string(v)
	}
	for x := int32(0); x < 6; x++ {
		for y := int32(0); y < 6; y++ {
			es, err := ns.Edges(ctx, []int32{x, y}, engine.Out, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range es {
				m.edges[edgeKey{[2]int32{e.From[0], e.From[1]}, [2]int32{e.To[0], e.To[1]}, e.Label}] = e.Weight
			}
		}
	}
	return m
}
