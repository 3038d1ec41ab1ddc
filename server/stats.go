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
// (after durability, for writes). Its one histogram serves STATS and
// Prometheus alike (see latencyCollector): a second one, observed per
// call, cost more CPU than GET itself under a pipeline.
type cmdStat struct {
	name                 string // lower case, the metrics' label
	calls, errors, nanos atomic.Int64

	mu   sync.Mutex
	hist *hdrhistogram.Histogram // nanoseconds
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
	list  []*cmdStat // byCmd's values, in table order

	accepted, rejected, timedOut, protoErrors, unknown, cancelled, authFailures atomic.Int64
	// handedOff counts the times the event loop gave a connection to a
	// goroutine, handedBack the times a goroutine gave one back.
	handedOff, handedBack atomic.Int64

	reg        *prometheus.Registry
	progRuns   *prometheus.CounterVec
	progErrors *prometheus.CounterVec
}

func newServerStats(s *Server) *serverStats {
	st := &serverStats{byCmd: map[*Command]*cmdStat{}, reg: prometheus.NewRegistry()}
	st.progRuns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cube_program_runs_total",
		Help: "Program runs (RUN) and ad-hoc scripts (EVAL).",
	}, []string{"cmd"})
	st.progErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cube_program_errors_total",
		Help: "Program runs that failed, by reason.",
	}, []string{"cmd", "reason"})
	for _, c := range s.table {
		cs := newCmdStat(c)
		st.byCmd[c] = cs
		st.list = append(st.list, cs)
	}
	st.reg.MustRegister(newLatencyCollector(st.list), st.progRuns, st.progErrors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cube_connected_clients", Help: "Open client connections."},
			func() float64 { return float64(s.clients()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cube_connections_total", Help: "Connections accepted."},
			func() float64 { return float64(st.accepted.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cube_connections_rejected_total", Help: "Connections refused (max clients, shutting down)."},
			func() float64 { return float64(st.rejected.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cube_connections_handed_off_total", Help: "Times the event loop handed a Unix socket connection to a goroutine (a slow command, or a write that waited for a running program)."},
			func() float64 { return float64(st.handedOff.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cube_connections_handed_back_total", Help: "Times a goroutine gave a Unix socket connection back to the event loop (after its slow command, at its next batch of fast ones)."},
			func() float64 { return float64(st.handedBack.Load()) }),
		newStoreCollector(s),
	)
	if s.o.Cluster != nil {
		st.reg.MustRegister(newClusterCollector(s.o.Cluster))
	}
	return st
}

func newCmdStat(c *Command) *cmdStat {
	return &cmdStat{name: lowerName(c.Name), hist: hdrhistogram.New(1, int64(time.Minute), 2)}
}

func (st *serverStats) record(c *Command, d time.Duration, failed bool) {
	var f int64
	if failed {
		f = 1
	}
	st.recordN(c, d, 1, f)
}

// recordN counts n calls of c that each took d, failed of them errors:
// the event loop counts a pipeline's run of one command at once, since
// its commands were parsed together and their replies left together.
func (st *serverStats) recordN(c *Command, d time.Duration, n, failed int64) {
	cs := st.byCmd[c]
	if cs == nil {
		return
	}
	cs.calls.Add(n)
	cs.nanos.Add(int64(d) * n)
	if failed > 0 {
		cs.errors.Add(failed)
	}
	cs.mu.Lock()
	cs.hist.RecordValues(max(int64(d), 1), n)
	cs.mu.Unlock()
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

// latencyBuckets are the upper bounds, in seconds, of the Prometheus
// latency histogram's buckets: 2 µs to 16.8 s, doubling.
var latencyBuckets = prometheus.ExponentialBuckets(2e-6, 2, 24)

// latencyCollector exports the commands' latency histograms and error
// counts at scrape time, reading the same HDR histograms STATS reads, so
// a command's call costs one histogram update, not two. HDR keeps two
// significant digits: a bucket's count is exact to within 1% of its
// bound.
type latencyCollector struct {
	list      []*cmdStat
	dur, errs *prometheus.Desc
}

func newLatencyCollector(list []*cmdStat) *latencyCollector {
	return &latencyCollector{
		list: list,
		dur:  prometheus.NewDesc("cube_command_duration_seconds", "Server-side latency of commands, from parse to reply (after durability for writes).", []string{"cmd"}, nil),
		errs: prometheus.NewDesc("cube_command_errors_total", "Commands that replied an error.", []string{"cmd"}, nil),
	}
}

var _ prometheus.Collector = (*latencyCollector)(nil)

func (lc *latencyCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- lc.dur
	ch <- lc.errs
}

func (lc *latencyCollector) Collect(ch chan<- prometheus.Metric) {
	for _, cs := range lc.list {
		if cs.calls.Load() == 0 {
			continue
		}
		buckets := make(map[float64]uint64, len(latencyBuckets))
		cs.mu.Lock()
		count, nanos := cs.hist.TotalCount(), cs.nanos.Load()
		bars := cs.hist.Distribution()
		cs.mu.Unlock()
		// Bars come in increasing order: each counts toward every bucket
		// whose bound its values are under.
		var below uint64
		b := 0
		for _, bar := range bars {
			for b < len(latencyBuckets) && float64(bar.From) > latencyBuckets[b]*1e9 {
				buckets[latencyBuckets[b]] = below
				b++
			}
			below += uint64(bar.Count)
		}
		for ; b < len(latencyBuckets); b++ {
			buckets[latencyBuckets[b]] = below
		}
		ch <- prometheus.MustNewConstHistogram(lc.dur, uint64(count), float64(nanos)/1e9, buckets, cs.name)
		ch <- prometheus.MustNewConstMetric(lc.errs, prometheus.CounterValue, float64(cs.errors.Load()), cs.name)
	}
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
