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
	// handedOff counts connections the event loop gave to a goroutine.
	handedOff atomic.Int64

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
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cube_connections_handed_off_total", Help: "Unix socket connections the event loop handed to a goroutine (their first slow command)."},
			func() float64 { return float64(st.handedOff.Load()) }),
		newStoreCollector(s),
	)
	if s.o.Cluster != nil {
		st.reg.MustRegister(newClusterCollector(s.o.Cluster))
	}
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
	st := sc.s.db.StoreInfo()
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

// The STATS reply's store and program figures are package cube's
// labelled report (snake_case, a unit in the name of every time and
// size), so the daemon and the embedded REPL describe a store alike.
type (
	NamespaceStats  = cube.NamespaceStats
	CheckpointStats = cube.CheckpointStats
	RecoveryStats   = cube.RecoveryStats
	StoreStats      = cube.StoreStats
	ProgramStats    = cube.ProgramStats
)

func namespaceStats(n cube.NamespaceInfo) NamespaceStats { return cube.ReportNamespace(n) }
func storeStats(st cube.StoreInfo) StoreStats            { return cube.ReportStore(st) }

// programsStats is the programs of ns ("" = every namespace) in STATS.
func (s *Server) programsStats(ns string) []ProgramStats {
	ps, _ := s.programStats(ns).([]cube.ProgramInfo)
	return programStatsOf(ps)
}

func programStatsOf(ps []cube.ProgramInfo) []ProgramStats { return cube.ReportPrograms(ps) }
