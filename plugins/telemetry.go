package plugins

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/vm"
)

// DefaultTelemetryInterval is how often changed telemetry counters are
// written to the namespace's metadata; a crash loses at most this much.
const DefaultTelemetryInterval = 10 * time.Second

// Latency histogram range: 1 ns to 1 hour (longer runs count as 1 hour),
// two significant digits.
const (
	histMin = 1
	histMax = int64(time.Hour)
	histSig = 2
)

// maxKind is the highest vm.ErrorKind counted on its own; errors that are
// not *vm.Error (the store failed, the namespace went away) count as kind 0,
// reported as "store".
const maxKind = int(vm.KindStackLimit)

// Telemetry is what a program's runs cost and how they ended. Counters
// cover every version of the program since it was first registered under
// its name (Unprog resets them).
type Telemetry struct {
	Runs      int64            // runs started, failed ones included
	Errors    map[string]int64 // failed runs by vm.ErrorKind.String() ("timeout", "guest error", ...); "store" for store errors
	HostCalls int64            // calls into the host
	Writes    int64            // writes of committed runs
	BytesOut  int64            // output bytes of successful runs
	Latency   engine.Latency   // wall time of runs, compile excluded
}

// telemetry is the live, mutable form. mu guards every field; it is a
// leaf lock (see Registry.mu for the order).
type telemetry struct {
	mu        sync.Mutex
	runs      int64
	errs      [maxKind + 1]int64
	hostCalls int64
	writes    int64
	bytesOut  int64
	hist      *hdrhistogram.Histogram
	dirty     bool
}

func newTelemetry() *telemetry {
	return &telemetry{hist: hdrhistogram.New(histMin, histMax, histSig)}
}

func (t *telemetry) record(d time.Duration, res vm.Result, err error) {
	v := int64(d)
	if v > histMax {
		v = histMax
	}
	if v < histMin {
		v = histMin
	}
	t.mu.Lock()
	t.runs++
	t.hostCalls += res.HostCalls
	if err != nil {
		k := int(vm.KindOf(err))
		if k > maxKind {
			k = 0
		}
		t.errs[k]++
	} else {
		t.writes += res.Writes
		t.bytesOut += int64(len(res.Output))
	}
	_ = t.hist.RecordValue(v) // in range by construction
	t.dirty = true
	t.mu.Unlock()
}

// The flusher writes the counters that changed to the store every
// Options.TelemetryInterval, and Close writes the last ones.

func (r *Registry) flusher(every time.Duration) {
	defer close(r.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-r.quit:
			return
		case <-t.C:
			if err := r.Flush(context.Background()); err != nil {
				r.log.Warn("plugins: telemetry not written", "err", err)
			}
		}
	}
}

// Flush writes the telemetry counters that changed since the last flush,
// one transaction per namespace. The flusher calls it every
// Options.TelemetryInterval and Close calls it last.
func (r *Registry) Flush(ctx context.Context) error {
	r.mu.RLock()
	regs := make([]*nsReg, 0, len(r.mu.regs))
	for _, g := range r.mu.regs {
		regs = append(regs, g)
	}
	r.mu.RUnlock()
	var errs []error
	for _, g := range regs {
		errs = append(errs, g.flush(ctx))
	}
	return errors.Join(errs...)
}

func (g *nsReg) flush(ctx context.Context) error {
	g.wmu.Lock()
	defer g.wmu.Unlock()
	g.mu.RLock()
	var dirty []*entry
	for _, e := range g.mu.progs {
		e.tel.mu.Lock()
		if e.tel.dirty {
			dirty = append(dirty, e)
		}
		e.tel.mu.Unlock()
	}
	g.mu.RUnlock()
	if len(dirty) == 0 {
		return nil
	}
	err := g.ns.Update(ctx, func(tx *engine.Tx) error {
		for _, e := range dirty {
			if err := tx.SetMeta(statPrefix+e.name, e.tel.encode()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		for _, e := range dirty {
			e.tel.mu.Lock()
			e.tel.dirty = true
			e.tel.mu.Unlock()
		}
		if errors.Is(err, engine.ErrNoNamespace) {
			return nil // dropped: its telemetry went with it
		}
		return fmt.Errorf("plugins: telemetry of %q: %w", g.ns.Name(), err)
	}
	return nil
}

func kindName(k int) string {
	if k == 0 {
		return "store"
	}
	return vm.ErrorKind(k).String()
}

func (t *telemetry) snapshot() Telemetry {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := Telemetry{Runs: t.runs, HostCalls: t.hostCalls, Writes: t.writes, BytesOut: t.bytesOut, Errors: map[string]int64{}}
	for k, n := range t.errs {
		if n > 0 {
			s.Errors[kindName(k)] = n
		}
	}
	if n := t.hist.TotalCount(); n > 0 {
		// One scan of the buckets for the three: Max walked them all with
		// the histogram's iterator, and every PROG's reply (Registry.info)
		// paid for it, ~7% of the daemon's CPU under cube stress. The
		// 100th percentile is the highest value of the highest non-empty
		// bucket, as Max is.
		q := t.hist.ValueAtPercentilesSlice([]float64{50, 99, 100})
		s.Latency = engine.Latency{Count: n, P50: time.Duration(q[0]), P99: time.Duration(q[1]), Max: time.Duration(q[2])}
	}
	return s
}

// telemetryFormat is the first byte of a stored telemetry record:
//
//	format u8 | uvarint runs, host calls, writes, bytes out |
//	uvarint n, n × uvarint error count (index = vm.ErrorKind, 0 = store) |
//	uvarint m, m × (uvarint bucket index delta, uvarint count)
//
// The histogram is stored sparsely as its non-zero bucket counts; the
// bucket layout is fixed by histMin, histMax and histSig.
const telemetryFormat = 1

// encode returns the stored form and clears dirty.
func (t *telemetry) encode() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dirty = false
	b := []byte{telemetryFormat}
	b = binary.AppendUvarint(b, uint64(t.runs))
	b = binary.AppendUvarint(b, uint64(t.hostCalls))
	b = binary.AppendUvarint(b, uint64(t.writes))
	b = binary.AppendUvarint(b, uint64(t.bytesOut))
	b = binary.AppendUvarint(b, uint64(len(t.errs)))
	for _, n := range t.errs {
		b = binary.AppendUvarint(b, uint64(n))
	}
	counts := t.hist.Export().Counts
	m := 0
	for _, c := range counts {
		if c != 0 {
			m++
		}
	}
	b = binary.AppendUvarint(b, uint64(m))
	last := 0
	for i, c := range counts {
		if c != 0 {
			b = binary.AppendUvarint(b, uint64(i-last))
			b = binary.AppendUvarint(b, uint64(c))
			last = i
		}
	}
	return b
}

// decodeTelemetry decodes a stored telemetry record.
func decodeTelemetry(b []byte) (*telemetry, error) {
	bad := func(why string) error { return fmt.Errorf("%w: telemetry record: %s", ErrBadRecord, why) }
	if len(b) == 0 || b[0] != telemetryFormat {
		return nil, bad("format")
	}
	p := b[1:]
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(p)
		if n <= 0 {
			return 0, false
		}
		p = p[n:]
		return v, true
	}
	const maxCount = 1 << 62
	t := newTelemetry()
	var head [5]uint64
	for i := range head {
		v, ok := next()
		if !ok || v > maxCount {
			return nil, bad("counters")
		}
		head[i] = v
	}
	t.runs, t.hostCalls, t.writes, t.bytesOut = int64(head[0]), int64(head[1]), int64(head[2]), int64(head[3])
	nk := head[4]
	if nk > 64 {
		return nil, bad("error kinds")
	}
	for k := uint64(0); k < nk; k++ {
		v, ok := next()
		if !ok || v > maxCount {
			return nil, bad("error counts")
		}
		if int(k) <= maxKind {
			t.errs[k] = int64(v)
		} else {
			t.errs[0] += int64(v) // a kind this cube does not know
		}
	}
	snap := t.hist.Export()
	m, ok := next()
	if !ok || m > uint64(len(snap.Counts)) {
		return nil, bad("histogram size")
	}
	idx := 0
	var total uint64
	for i := uint64(0); i < m; i++ {
		d, ok1 := next()
		c, ok2 := next()
		if !ok1 || !ok2 || d > uint64(len(snap.Counts)) || c > maxCount || c == 0 || (i > 0 && d == 0) {
			return nil, bad("histogram bucket")
		}
		idx += int(d)
		total += c
		if idx >= len(snap.Counts) || total > maxCount {
			return nil, bad("histogram bucket index")
		}
		snap.Counts[idx] = int64(c)
	}
	if len(p) != 0 {
		return nil, bad("trailing bytes")
	}
	t.hist = hdrhistogram.Import(snap)
	return t, nil
}
