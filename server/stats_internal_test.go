package server

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestLatencyFromOneHistogram: the Prometheus latency histogram is read
// from the same HDR histogram as STATS, and a pipeline's run of one
// command counted at once (recordDone) counts every call. Breaks seen
// failing it: bucket bounds compared in the wrong unit (µs for ns) put
// the 1 s call in no bucket; recordDone counting a group as one call
// leaves GET at 2 calls.
func TestLatencyFromOneHistogram(t *testing.T) {
	get, put := &Command{Name: "GET"}, &Command{Name: "PUT"}
	st := &serverStats{byCmd: map[*Command]*cmdStat{}}
	for _, c := range []*Command{get, put} {
		cs := newCmdStat(c)
		st.byCmd[c], st.list = cs, append(st.list, cs)
	}
	t0 := time.Now()
	t1 := t0.Add(time.Millisecond)
	done := []doneCmd{
		{get, t0, false}, {get, t0, false}, {get, t0, true}, // 3 µs each
		{put, t0, false},
		{get, t1, false}, // a later batch: 1 s
	}
	recordDone(st, done[:4], t0.Add(3*time.Microsecond))
	recordDone(st, done[4:], t1.Add(time.Second))

	if got := st.snapshot(get); got.Calls != 4 || got.Errors != 1 {
		t.Fatalf("STATS for GET: %+v, want 4 calls, 1 error", got)
	}
	h, errs := collect(t, st, "get")
	if h.GetSampleCount() != 4 {
		t.Errorf("histogram count %d, want 4", h.GetSampleCount())
	}
	if want := 3*3e-6 + 1.0; abs(h.GetSampleSum()-want) > 1e-9 {
		t.Errorf("histogram sum %g, want %g", h.GetSampleSum(), want)
	}
	for _, b := range h.GetBucket() {
		var want uint64
		switch ub := b.GetUpperBound(); {
		case ub < 3e-6:
			want = 0
		case ub < 1:
			want = 3
		default:
			want = 4
		}
		if b.GetCumulativeCount() != want {
			t.Errorf("bucket le=%g holds %d calls, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want)
		}
	}
	if errs != 1 {
		t.Errorf("errors %v, want 1", errs)
	}
}

// collect scrapes st's registry for one command's latency histogram and
// error count.
func collect(t *testing.T, st *serverStats, cmd string) (*dto.Histogram, float64) {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(newLatencyCollector(st.list))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var h *dto.Histogram
	errs := -1.0
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if !hasLabel(m, "cmd", cmd) {
				continue
			}
			switch {
			case mf.GetName() == "cube_command_duration_seconds":
				h = m.GetHistogram()
			case strings.HasPrefix(mf.GetName(), "cube_command_errors"):
				errs = m.GetCounter().GetValue()
			}
		}
	}
	if h == nil {
		t.Fatalf("no cube_command_duration_seconds for %s", cmd)
	}
	return h, errs
}

func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

func abs(x float64) float64 { return max(x, -x) }
