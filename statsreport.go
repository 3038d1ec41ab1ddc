package cube

import "time"

// The report types describe a store for a person or a script: every
// field is snake_case and every time or size has its unit in its name
// (_us, _ms, _bytes), so that neither has to know how Go encodes a
// time.Duration (nanoseconds, unlabelled) or which Go struct a figure
// came from. The daemon's STATS and the embedded REPL's .stats reply
// with them; they are the replies' documentation.

// NamespaceStats describes one namespace in a report.
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

// CheckpointStats describes one recent checkpoint in a report.
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

// StoreStats is the store in a report: namespaces, the log and its fsyncs,
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

// ProgramStats is one registered program in a report: what it is, its
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

func microseconds(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
func milliseconds(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ReportNamespace labels n.
func ReportNamespace(n NamespaceInfo) NamespaceStats {
	return NamespaceStats{Name: n.Name, Dims: n.Dims, Curve: n.Curve, MaxValueBytes: n.MaxValueSize,
		Values: n.Values, ValueBytes: n.ValueBytes, Edges: n.Edges, LastLSN: n.LastLSN}
}

// ReportStore labels st.
func ReportStore(st StoreInfo) StoreStats {
	out := StoreStats{
		Namespaces: make([]NamespaceStats, 0, len(st.Namespaces)),
		SyncMode:   st.Sync, WrittenLSN: st.WrittenLSN, SyncedLSN: st.SyncedLSN, LogBytes: st.LogBytes,
		Fsyncs: st.Syncs, FsyncP50US: microseconds(st.SyncLatency.P50), FsyncP99US: microseconds(st.SyncLatency.P99), FsyncMaxUS: microseconds(st.SyncLatency.Max),
		Checkpoints: make([]CheckpointStats, 0, len(st.Checkpoints)),
		Error:       st.Err,
	}
	for _, n := range st.Namespaces {
		out.Namespaces = append(out.Namespaces, ReportNamespace(n))
	}
	for _, c := range st.Checkpoints {
		out.Checkpoints = append(out.Checkpoints, CheckpointStats{Kind: c.Kind, File: c.File, LSN: c.LSN,
			Records: c.Records, Bytes: c.Bytes, DurationMS: milliseconds(c.Duration), At: c.At})
	}
	r := st.Recovery
	out.Recovery = RecoveryStats{CheckpointLSN: r.CheckpointLSN, BaseCheckpoint: r.Base, Deltas: r.Deltas,
		LogFirstLSN: r.LogFirstLSN, LogLastLSN: r.LogLastLSN, RecordsReplayed: r.Records,
		TornSegment: r.TornSegment, TornOffset: r.TornOffset, BytesDropped: r.BytesDropped,
		Repaired: r.Repaired, LostFirstLSN: r.LostFirst, LostLastLSN: r.LostLast, CutFiles: r.CutFiles,
		DurationMS: milliseconds(r.Duration)}
	return out
}

// ReportPrograms labels ps; nil for none, so that a reply can leave
// "programs" out.
func ReportPrograms(ps []ProgramInfo) []ProgramStats {
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
			TimeoutMS: milliseconds(p.Limits.Timeout), MemoryBytes: p.Limits.MemoryBytes, OutputBytes: p.Limits.OutputBytes,
			WritesLimit: p.Limits.Writes, HostCallsLimit: p.Limits.HostCalls, Isolation: p.Limits.Isolation.String(),
			Runs: t.Runs, Errors: errs, HostCalls: t.HostCalls, Writes: t.Writes, BytesOut: t.BytesOut,
			LatencyP50US: microseconds(t.Latency.P50), LatencyP99US: microseconds(t.Latency.P99), LatencyMaxUS: microseconds(t.Latency.Max),
			LatencySamples: t.Latency.Count,
		})
	}
	return out
}

// Report is a labelled view of st: the store and every program.
type Report struct {
	Store    StoreStats     `json:"store"`
	Programs []ProgramStats `json:"programs,omitempty"`
}

// Report labels st for a person or a script (see StoreStats).
func (st Stats) Report() Report {
	return Report{Store: ReportStore(st.Store), Programs: ReportPrograms(st.Programs)}
}

// NamespaceReport is what a report says of one namespace and its
// programs.
type NamespaceReport struct {
	Namespace NamespaceStats `json:"namespace"`
	Programs  []ProgramStats `json:"programs,omitempty"`
}
