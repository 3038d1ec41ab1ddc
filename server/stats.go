package server

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/engine"
)

// cmdStat counts one command's calls and their latency, measured from
// the moment the command was parsed to the moment its reply was ready
// (after durability, for writes).
type cmdStat struct {
	calls, errors, nanos atomic.Int64

	mu   sync.Mutex
	hist *hdrhistogram.Histogram // nanoseconds

	obs  prometheus.Observer
	errs prometheus.Counter
}

// CommandStat summarises one command's server-side latency.
type CommandStat struct {
	Calls  int64   `json:"calls"`
	Errors int64   `json:"errors"`
	MeanUS float64 `json:"mean_us"`
	P50US  float64 `json:"p50_us"`
	P99US  float64 `json:"p99_us"`
	MaxUS  float64 `json:"max_us"`
}

type serverStats struct {
	byCmd map[*Command]*cmdStat

	accepted, rejected, timedOut, protoErrors, unknown, cancelled, authFailures atomic.Int64

	reg        *prometheus.Registry
	progRuns   *prometheus.CounterVec
	progErrors *prometheus.CounterVec
}

func newServerStats(s *Server) *serverStats {
	st := &serverStats{byCmd: map[*Command]*cmdStat{}, reg: prometheus.NewRegistry()}
	lat := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "cube_command_duration_seconds",
		Help:    "Server-side latency of commands, from parse to reply (after durability for writes).",
		Buckets: prometheus.ExponentialBuckets(2e-6, 2, 24),
	}, []string{"cmd"})
	errs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cube_command_errors_total",
		Help: "Commands that replied an error.",
	}, []string{"cmd"})
	st.progRuns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cube_program_runs_total",
		Help: "Program runs (RUN) and ad-hoc scripts (EVAL).",
	}, []string{"cmd"})
	st.progErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cube_program_errors_total",
		Help: "Program runs that failed, by reason.",
	}, []string{"cmd", "reason"})
	for _, c := range s.table {
		st.byCmd[c] = &cmdStat{
			hist: hdrhistogram.New(1, int64(time.Minute), 2),
			obs:  lat.WithLabelValues(lowerName(c.Name)),
			errs: errs.WithLabelValues(lowerName(c.Name)),
		}
	}
	st.reg.MustRegister(lat, errs, st.progRuns, st.progErrors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cube_connected_clients", Help: "Open client connections."},
			func() float64 { return float64(s.clients()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cube_connections_total", Help: "Connections accepted."},
			func() float64 { return float64(st.accepted.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cube_connections_rejected_total", Help: "Connections refused (max clients, shutting down)."},
			func() float64 { return float64(st.rejected.Load()) }),
		newStoreCollector(s),
	)
	return st
}

func (st *serverStats) record(c *Command, d time.Duration, failed bool) {
	cs := st.byCmd[c]
	if cs == nil {
		return
	}
	cs.calls.Add(1)
	cs.nanos.Add(int64(d))
	if failed {
		cs.errors.Add(1)
		cs.errs.Inc()
	}
	cs.mu.Lock()
	cs.hist.RecordValue(max(int64(d), 1))
	cs.mu.Unlock()
	cs.obs.Observe(d.Seconds())
}

func (st *serverStats) snapshot(c *Command) CommandStat {
	cs := st.byCmd[c]
	calls := cs.calls.Load()
	out := CommandStat{Calls: calls, Errors: cs.errors.Load()}
	if calls == 0 {
		return out
	}
	out.MeanUS = float64(cs.nanos.Load()) / float64(calls) / 1e3
	cs.mu.Lock()
	out.P50US = float64(cs.hist.ValueAtQuantile(50)) / 1e3
	out.P99US = float64(cs.hist.ValueAtQuantile(99)) / 1e3
	out.MaxUS = float64(cs.hist.Max()) / 1e3
	cs.mu.Unlock()
	return out
}

// CommandStats returns every command's server-side statistics that has
// been called, keyed by lower-case name.
func (s *Server) CommandStats() map[string]CommandStat {
	out := map[string]CommandStat{}
	for _, c := range s.table {
		if st := s.stats.snapshot(c); st.Calls > 0 {
			out[lowerName(c.Name)] = st
		}
	}
	return out
}

// MetricsHandler serves the daemon's Prometheus metrics: command counts,
// errors and latency histograms, program runs and errors, the store's
// fsync count and latency, connections, and the Go runtime's.
func (s *Server) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(s.stats.reg, promhttp.HandlerOpts{})
}

// storeCollector reads the store's statistics at scrape time.
type storeCollector struct {
	s                                                              *Server
	syncs, syncLat, syncedLSN, logBytes, nsValues, nsEdges, failed *prometheus.Desc
}

func newStoreCollector(s *Server) *storeCollector {
	return &storeCollector{
		s:         s,
		syncs:     prometheus.NewDesc("cube_fsync_total", "fdatasyncs of the write-ahead log.", nil, nil),
		syncLat:   prometheus.NewDesc("cube_fsync_latency_seconds", "Latency of the log's fdatasyncs (recent quantiles, and the max).", []string{"quantile"}, nil),
		syncedLSN: prometheus.NewDesc("cube_log_synced_lsn", "The last log record known durable.", nil, nil),
		logBytes:  prometheus.NewDesc("cube_log_bytes", "Bytes of log on disk.", nil, nil),
		nsValues:  prometheus.NewDesc("cube_namespace_values", "Values stored, by namespace.", []string{"ns"}, nil),
		nsEdges:   prometheus.NewDesc("cube_namespace_edges", "Edges stored, by namespace.", []string{"ns"}, nil),
		failed:    prometheus.NewDesc("cube_store_failed", "1 if the store turned read-only after a log error.", nil, nil),
	}
}

func (sc *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{sc.syncs, sc.syncLat, sc.syncedLSN, sc.logBytes, sc.nsValues, sc.nsEdges, sc.failed} {
		ch <- d
	}
}

func (sc *storeCollector) Collect(ch chan<- prometheus.Metric) {
	st := sc.s.db.Engine().Stats()
	ch <- prometheus.MustNewConstMetric(sc.syncs, prometheus.CounterValue, float64(st.Syncs))
	ch <- prometheus.MustNewConstMetric(sc.syncLat, prometheus.GaugeValue, st.SyncLatency.P50.Seconds(), "0.5")
	ch <- prometheus.MustNewConstMetric(sc.syncLat, prometheus.GaugeValue, st.SyncLatency.P99.Seconds(), "0.99")
	ch <- prometheus.MustNewConstMetric(sc.syncLat, prometheus.GaugeValue, st.SyncLatency.Max.Seconds(), "1")
	ch <- prometheus.MustNewConstMetric(sc.syncedLSN, prometheus.GaugeValue, float64(st.SyncedLSN))
	ch <- prometheus.MustNewConstMetric(sc.logBytes, prometheus.GaugeValue, float64(st.LogBytes))
	for _, n := range st.Namespaces {
		ch <- prometheus.MustNewConstMetric(sc.nsValues, prometheus.GaugeValue, float64(n.Values), n.Name)
		ch <- prometheus.MustNewConstMetric(sc.nsEdges, prometheus.GaugeValue, float64(n.Edges), n.Name)
	}
	failed := 0.0
	if st.Err != "" {
		failed = 1
	}
	ch <- prometheus.MustNewConstMetric(sc.failed, prometheus.GaugeValue, failed)
}

func lowerName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// The STATS reply names every field in snake_case and puts the unit in
// the name of every quantity that has one (_us, _ms, _bytes, _s), so
// that neither a person nor a script has to know how Go encodes a
// time.Duration (nanoseconds, unlabelled) or which Go struct a figure
// came from. STATS builds these from the store's and the registry's
// types; they are the reply's documentation.

// NamespaceStats describes one namespace in STATS.
type NamespaceStats struct {
	Name          string `json:"name"`
	Dims          int    `json:"dims"`
	Curve         string `json:"curve"`
	MaxValueBytes int    `json:"max_value_bytes"`
	Values        int    `json:"values"`
	ValueBytes    int64  `json:"value_bytes"`
	Edges         int    `json:"edges"`
	LastLSN       uint64 `json:"last_lsn"` // the last log record that wrote to it
}

// CheckpointStats describes one recent checkpoint in STATS.
type CheckpointStats struct {
	Kind       string    `json:"kind"` // "base" or "delta"
	File       string    `json:"file"`
	LSN        uint64    `json:"lsn"`
	Records    uint64    `json:"records"`
	Bytes      int64     `json:"bytes"`
	DurationMS float64   `json:"duration_ms"`
	At         time.Time `json:"at"`
}

// RecoveryStats is what the store's last open found and did.
type RecoveryStats struct {
	CheckpointLSN   uint64   `json:"checkpoint_lsn"`
	BaseCheckpoint  string   `json:"base_checkpoint,omitempty"`
	Deltas          []string `json:"delta_checkpoints,omitempty"`
	LogFirstLSN     uint64   `json:"log_first_lsn"`
	LogLastLSN      uint64   `json:"log_last_lsn"`
	RecordsReplayed int      `json:"records_replayed"`
	TornSegment     string   `json:"torn_segment,omitempty"`
	TornOffset      int64    `json:"torn_offset_bytes,omitempty"`
	BytesDropped    int64    `json:"torn_bytes_dropped,omitempty"`
	Repaired        string   `json:"repaired,omitempty"`
	LostFirstLSN    uint64   `json:"lost_first_lsn,omitempty"`
	LostLastLSN     uint64   `json:"lost_last_lsn,omitempty"`
	CutFiles        []string `json:"cut_files,omitempty"`
	DurationMS      float64  `json:"duration_ms"`
}

// StoreStats is the store in STATS: namespaces, the log and its fsyncs,
// checkpoints, the last recovery.
type StoreStats struct {
	Namespaces  []NamespaceStats  `json:"namespaces"`
	SyncMode    string            `json:"sync_mode"`
	WrittenLSN  uint64            `json:"written_lsn"` // log records handed to the OS
	SyncedLSN   uint64            `json:"synced_lsn"`  // log records known durable
	LogBytes    int64             `json:"log_bytes"`
	Fsyncs      int64             `json:"fsyncs"`
	FsyncP50US  float64           `json:"fsync_p50_us"`
	FsyncP99US  float64           `json:"fsync_p99_us"`
	FsyncMaxUS  float64           `json:"fsync_max_us"`
	Checkpoints []CheckpointStats `json:"checkpoints"` // the most recent, oldest first
	Recovery    RecoveryStats     `json:"recovery"`
	// Error says why the store turned read-only, if it did.
	Error string `json:"error,omitempty"`
}

// ProgramStats is one registered program in STATS: what it is, its
// limits as registered (0 = the default) and its telemetry.
type ProgramStats struct {
	Namespace      string           `json:"namespace"`
	Name           string           `json:"name"`
	Kind           string           `json:"kind"`
	Version        string           `json:"version"`
	ReadOnly       bool             `json:"read_only"`
	CodeBytes      int              `json:"code_bytes"`
	Registered     time.Time        `json:"registered"`
	TimeoutMS      float64          `json:"timeout_ms"`
	MemoryBytes    int64            `json:"memory_bytes"`
	OutputBytes    int64            `json:"output_bytes"`
	WritesLimit    int64            `json:"writes_limit"`
	HostCallsLimit int64            `json:"host_calls_limit"`
	Isolation      string           `json:"isolation"`
	Runs           int64            `json:"runs"`
	Errors         map[string]int64 `json:"errors"` // failed runs by reason
	HostCalls      int64            `json:"host_calls"`
	Writes         int64            `json:"writes"`
	BytesOut       int64            `json:"bytes_out"`
	LatencyP50US   float64          `json:"latency_p50_us"`
	LatencyP99US   float64          `json:"latency_p99_us"`
	LatencyMaxUS   float64          `json:"latency_max_us"`
	LatencySamples int64            `json:"latency_samples"`
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func namespaceStats(n engine.NamespaceInfo) NamespaceStats {
	return NamespaceStats{Name: n.Name, Dims: n.Dims, Curve: n.Curve, MaxValueBytes: n.MaxValueSize,
		Values: n.Values, ValueBytes: n.ValueBytes, Edges: n.Edges, LastLSN: n.LastLSN}
}

func storeStats(st engine.Stats) StoreStats {
	out := StoreStats{
		Namespaces: make([]NamespaceStats, 0, len(st.Namespaces)),
		SyncMode:   st.Sync, WrittenLSN: st.WrittenLSN, SyncedLSN: st.SyncedLSN, LogBytes: st.LogBytes,
		Fsyncs: st.Syncs, FsyncP50US: us(st.SyncLatency.P50), FsyncP99US: us(st.SyncLatency.P99), FsyncMaxUS: us(st.SyncLatency.Max),
		Checkpoints: make([]CheckpointStats, 0, len(st.Checkpoints)),
		Error:       st.Err,
	}
	for _, n := range st.Namespaces {
		out.Namespaces = append(out.Namespaces, namespaceStats(n))
	}
	for _, c := range st.Checkpoints {
		out.Checkpoints = append(out.Checkpoints, CheckpointStats{Kind: c.Kind, File: c.File, LSN: c.LSN,
			Records: c.Records, Bytes: c.Bytes, DurationMS: ms(c.Duration), At: c.At})
	}
	r := st.Recovery
	out.Recovery = RecoveryStats{CheckpointLSN: r.CheckpointLSN, BaseCheckpoint: r.Base, Deltas: r.Deltas,
		LogFirstLSN: r.LogFirstLSN, LogLastLSN: r.LogLastLSN, RecordsReplayed: r.Records,
		TornSegment: r.TornSegment, TornOffset: r.TornOffset, BytesDropped: r.BytesDropped,
		Repaired: r.Repaired, LostFirstLSN: r.LostFirst, LostLastLSN: r.LostLast, CutFiles: r.CutFiles,
		DurationMS: ms(r.Duration)}
	return out
}

// programsStats is the programs of ns ("" = every namespace) in STATS.
func (s *Server) programsStats(ns string) []ProgramStats {
	ps, _ := s.programStats(ns).([]cube.ProgramInfo)
	return programStatsOf(ps)
}

// programStatsOf labels what the registry reports; nil for none, so the
// reply leaves "programs" out.
func programStatsOf(ps []cube.ProgramInfo) []ProgramStats {
	if len(ps) == 0 {
		return nil
	}
	out := make([]ProgramStats, 0, len(ps))
	for _, p := range ps {
		t := p.Telemetry
		errs := t.Errors
		if errs == nil {
			errs = map[string]int64{}
		}
		out = append(out, ProgramStats{
			Namespace: p.Namespace, Name: p.Name, Kind: string(p.Kind), Version: p.Version,
			ReadOnly: p.ReadOnly, CodeBytes: p.CodeSize, Registered: p.Registered,
			TimeoutMS: ms(p.Limits.Timeout), MemoryBytes: p.Limits.MemoryBytes, OutputBytes: p.Limits.OutputBytes,
			WritesLimit: p.Limits.Writes, HostCallsLimit: p.Limits.HostCalls, Isolation: p.Limits.Isolation.String(),
			Runs: t.Runs, Errors: errs, HostCalls: t.HostCalls, Writes: t.Writes, BytesOut: t.BytesOut,
			LatencyP50US: us(t.Latency.P50), LatencyP99US: us(t.Latency.P99), LatencyMaxUS: us(t.Latency.Max),
			LatencySamples: t.Latency.Count,
		})
	}
	return out
}
