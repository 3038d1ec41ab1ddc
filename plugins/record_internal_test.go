package plugins

import (
	"bytes"
	"errors"
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/vm"
)

func TestRecordRoundTrip(t *testing.T) {
	at := time.Unix(1700000000, 123).UTC()
	tests := []record{
		{kind: vm.JS, code: []byte("function run() {}"), registered: at},
		{kind: vm.WASM, readOnly: true, code: []byte{0, 'a', 's', 'm'}, registered: at},
		{kind: vm.WASM, code: []byte("x"), registered: at, limits: vm.Limits{Timeout: time.Second, MemoryBytes: -1, OutputBytes: 5, Writes: 1 << 40, HostCalls: -7, Isolation: vm.Reuse}},
	}
	seen := map[[32]byte]bool{}
	for _, r := range tests {
		b, err := r.seal()
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeRecord(b)
		if err != nil {
			t.Fatalf("%+v: %v", r, err)
		}
		if !reflect.DeepEqual(*got, r) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", *got, r)
		}
		if seen[r.version] {
			t.Fatal("two records, one version")
		}
		seen[r.version] = true
		// The registration time is not part of the version.
		r2 := r
		r2.registered = at.Add(time.Hour)
		r2.seal()
		if r2.version != r.version {
			t.Fatal("registration time changed the version")
		}
		// Any flipped byte is caught (version mismatch or a bad field).
		for i := range b {
			c := bytes.Clone(b)
			c[i] ^= 0x40
			if got, err := decodeRecord(c); err == nil && i >= 33 && !reflect.DeepEqual(got.code, r.code) {
				t.Fatalf("byte %d flipped: decoded %+v", i, got)
			}
		}
	}
	if _, err := (&record{kind: "lua"}).seal(); !errors.Is(err, ErrBadKind) {
		t.Fatalf("bad kind: %v", err)
	}
}

func TestTelemetryRoundTrip(t *testing.T) {
	tel := newTelemetry()
	for i, d := range []time.Duration{3 * time.Microsecond, 5 * time.Microsecond, 2 * time.Second, 2 * time.Hour} {
		var err error
		if i == 2 {
			err = &vm.Error{Kind: vm.KindTimeout}
		}
		if i == 3 {
			err = errors.New("store")
		}
		tel.record(d, vm.Result{Output: []byte("abc"), HostCalls: 2, Writes: 1}, err)
	}
	got, err := decodeTelemetry(tel.encode())
	if err != nil {
		t.Fatal(err)
	}
	a, b := tel.snapshot(), got.snapshot()
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", b, a)
	}
	if a.Runs != 4 || a.Errors["timeout"] != 1 || a.Errors["store"] != 1 || a.BytesOut != 6 || a.Writes != 2 || a.HostCalls != 8 || a.Latency.Max < time.Hour*99/100 {
		t.Fatalf("counters: %+v", a)
	}
	if tel.dirty {
		t.Fatal("encode left the telemetry dirty")
	}
}

func TestCheckName(t *testing.T) {
	for name, ok := range map[string]bool{"a": true, "sum-region_v2.1": true, "": false, "a b": false, "a/b": false, "é": false, "x\n": false} {
		if err := checkName(name); (err == nil) != ok {
			t.Errorf("checkName(%q) = %v", name, err)
		}
	}
}

// FuzzDecodeRecord: stored program records never panic the decoder, and a
// record that decodes seals back to the same bytes.
func FuzzDecodeRecord(f *testing.F) {
	r := record{kind: vm.JS, code: []byte("function run() {}"), registered: time.Unix(5, 0)}
	b, _ := r.seal()
	f.Add(b)
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRecord(b)
		if err != nil {
			return
		}
		again, err := r.seal()
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("decoded record does not seal back: %v", err)
		}
	})
}

// FuzzDecodeTelemetry: stored telemetry never panics the decoder.
func FuzzDecodeTelemetry(f *testing.F) {
	tel := newTelemetry()
	tel.record(time.Millisecond, vm.Result{}, nil)
	f.Add(tel.encode())
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		tel, err := decodeTelemetry(b)
		if err != nil {
			return
		}
		tel.snapshot()
		tel.encode()
	})
}

// TestLatencySnapshot: the snapshot's percentiles, read in one scan, are
// the histogram's own P50, P99 and Max, whatever was recorded.
//
// Break seen caught: the snapshot's Max read as the 99.9th percentile.
func TestLatencySnapshot(t *testing.T) {
	seed := time.Now().UnixNano()
	rnd := rand.New(rand.NewSource(seed))
	for round := range 50 {
		tel := newTelemetry()
		for range 1 + rnd.Intn(2000) {
			d := time.Duration(rnd.Int63n(int64(time.Duration(1) << uint(1+rnd.Intn(42)))))
			tel.record(d, vm.Result{}, nil)
		}
		got := tel.snapshot().Latency
		h := tel.hist
		want := engine.Latency{Count: h.TotalCount(), P50: time.Duration(h.ValueAtQuantile(50)), P99: time.Duration(h.ValueAtQuantile(99)), Max: time.Duration(h.Max())}
		if got != want {
			t.Fatalf("seed %d, round %d: snapshot %+v, histogram %+v", seed, round, got, want)
		}
	}
}

// BenchmarkTelemetrySnapshot is what every PROG's reply and every
// PROGS entry pays for a program's counters.
func BenchmarkTelemetrySnapshot(b *testing.B) {
	tel := newTelemetry()
	for i := range 10000 {
		tel.record(time.Duration(100+i%5000)*time.Microsecond, vm.Result{}, nil)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = tel.snapshot()
	}
}
