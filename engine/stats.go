package engine

import (
	"fmt"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// RecoveryReport says what Open found and did.
type RecoveryReport struct {
	CheckpointLSN uint64   // the state the checkpoints restored
	Base          string   // base checkpoint file ("" if none)
	Deltas        []string // delta checkpoint files applied after it
	LogFirstLSN   uint64   // the log records on disk
	LogLastLSN    uint64
	Records       int    // log records replayed (those after CheckpointLSN)
	TornSegment   string // log file whose torn tail was cut ("" if none)
	TornOffset    int64  // where it was cut
	BytesDropped  int64  // how much was cut
	Repaired      string // the corruption Repair cut out ("" if none)
	LostFirst     uint64 // the LSNs lost with it
	LostLast      uint64
	CutFiles      []string // copies of what was cut
	Duration      time.Duration
}

func (r RecoveryReport) String() string {
	s := fmt.Sprintf("checkpoint lsn %d (%d deltas), log %d..%d, %d records replayed in %v", r.CheckpointLSN, len(r.Deltas), r.LogFirstLSN, r.LogLastLSN, r.Records, r.Duration.Round(time.Microsecond))
	if r.TornSegment != "" {
		s += fmt.Sprintf("; torn tail cut in %s at %d (%d bytes dropped)", r.TornSegment, r.TornOffset, r.BytesDropped)
	}
	if r.Repaired != "" {
		s += fmt.Sprintf("; REPAIRED %s, lost LSNs %d..%d, cut bytes kept in %v", r.Repaired, r.LostFirst, r.LostLast, r.CutFiles)
	}
	return s
}

// Latency summarizes a latency histogram.
type Latency struct {
	Count         int64
	P50, P99, Max time.Duration
}

// Stats is a point-in-time view of the store.
type Stats struct {
	Namespaces  []NamespaceInfo
	Sync        string
	WrittenLSN  uint64 // log records handed to the OS
	SyncedLSN   uint64 // log records known durable
	LogBytes    int64  // bytes of log on disk
	Syncs       int64  // fdatasyncs of the log
	SyncLatency Latency
	Checkpoints []CheckpointInfo // the most recent, oldest first
	Recovery    RecoveryReport
	Err         string // why the store is read-only, if it is
}

const keepCheckpoints = 16

type stats struct {
	mu       sync.Mutex
	syncs    int64
	syncHist *hdrhistogram.Histogram
	ckpts    []CheckpointInfo
	recovery RecoveryReport
}

func (s *stats) init() {
	s.syncHist = hdrhistogram.New(1, int64(time.Minute/time.Microsecond), 3)
}

func (s *stats) onSync(d time.Duration, _ int) {
	s.mu.Lock()
	s.syncs++
	_ = s.syncHist.RecordValue(max(1, d.Microseconds()))
	s.mu.Unlock()
}

func (s *stats) addCheckpoint(ci CheckpointInfo) {
	s.mu.Lock()
	s.ckpts = append(s.ckpts, ci)
	if len(s.ckpts) > keepCheckpoints {
		s.ckpts = s.ckpts[len(s.ckpts)-keepCheckpoints:]
	}
	s.mu.Unlock()
}

// Stats returns counts per namespace, log positions, fsync figures,
// recent checkpoints and the last recovery report. They are statistics,
// read without waiting: they may count writes not yet durable.
func (db *DB) Stats() Stats {
	st := Stats{
		Namespaces: db.namespaceInfos(),
		Sync:       db.opts.Sync.String(),
		WrittenLSN: db.log.Written(),
		SyncedLSN:  db.log.Synced(),
		LogBytes:   db.log.Size(),
	}
	if err := db.Err(); err != nil {
		st.Err = err.Error()
	}
	s := &db.stats
	s.mu.Lock()
	st.Syncs = s.syncs
	us := func(v int64) time.Duration { return time.Duration(v) * time.Microsecond }
	st.SyncLatency = Latency{Count: s.syncHist.TotalCount(), P50: us(s.syncHist.ValueAtQuantile(50)), P99: us(s.syncHist.ValueAtQuantile(99)), Max: us(s.syncHist.Max())}
	st.Checkpoints = append([]CheckpointInfo(nil), s.ckpts...)
	st.Recovery = s.recovery
	s.mu.Unlock()
	return st
}
