package js_test

import (
	"context"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/vmtest"
)

// columnsHost is a 2-D host whose values exercise every mode: decimals,
// what Number reads otherwise (spaces, hex, Infinity, garbage, empty,
// overflow) and non-ASCII text.
func columnsHost(t testing.TB) *vmtest.Host {
	h := vmtest.NewHost(2)
	vals := []string{"1", " 2 ", "0x10", "abc", "", "1e400", "-0", "3.25", "Infinity", "inf", "1_0", "żółw", "12e", ".5", "5.", "+7"}
	for i, v := range vals {
		h.Put(context.Background(), []int32{int32(i), int32(-i)}, []byte(v))
	}
	return h
}

// TestColumns checks columns against the model it replaces: the same
// iterator's points as objects. Breaks caught: values "number" through
// strconv.ParseFloat alone (" 2 " and "0x10" read 0, not 2 and 16; "1_0"
// 10, not NaN); the points a prior next() buffered skipped (mix: 1 point,
// not 16); {limit} ignored (limit: 16 points, not 3).
func TestColumns(t *testing.T) {
	sb := newSB(t)
	h := columnsHost(t)
	p := compile(t, sb, `function run(a) {
		const box = () => cube.region([0, -99], [99, 0]);
		const objs = box().toArray();
		const out = {};
		const s = box().columns();
		out.types = [s.c.length, s.c[0].constructor.name, Array.isArray(s.v)];
		out.strings = s.n === objs.length && objs.every((p, i) => p.c[0] === s.c[0][i] && p.c[1] === s.c[1][i] && p.v === s.v[i]);
		const num = box().columns({values: "number"});
		out.numberType = num.v.constructor.name;
		out.numbers = num.n === objs.length && objs.every((p, i) => Object.is(+p.v, num.v[i]));
		const bad = objs.map((p, i) => [p.v, num.v[i], +p.v]).filter(x => !Object.is(x[1], x[2]));
		if (bad.length) out.badNumbers = JSON.stringify(bad);
		const by = box().columns({values: "bytes"});
		const dec = new TextDecoderLike();
		out.bytes = by.off.length === by.n + 1 && objs.every((p, i) => dec.decode(by.v.subarray(by.off[i], by.off[i + 1])) === p.v);
		out.bytesTypes = [by.v.constructor.name, by.off.constructor.name];
		// Chunks: every point once, then n = 0 for good.
		const it = box(), seen = [];
		for (let c; (c = it.columns({max: 5})).n > 0;) {
			if (c.n > 5) return "chunk of " + c.n;
			for (let i = 0; i < c.n; i++) seen.push(c.v[i]);
		}
		out.chunks = seen.join("|") === objs.map(p => p.v).join("|") && it.columns().n === 0 && it.next().done;
		// Mixed with next(): columns takes up where next left off.
		const m = box();
		const first = m.next().value.v;
		out.mix = [first].concat(m.columns().v).length;
		out.limit = [cube.region([0, -99], [99, 0], {limit: 3}).columns().n, cube.region([0, -99], [99, 0], {limit: 0}).columns().n];
		const lim = cube.region([0, -99], [99, 0], {limit: 7});
		out.limitChunks = [lim.columns({max: 4}).n, lim.columns({max: 4}).n, lim.columns().n];
		out.within = cube.within([0, 0], 2.5).columns().c[0].join(",");
		out.empty = JSON.stringify(cube.region([500, 500], [600, 600]).columns({values: "bytes"}));
		for (const bad of [{values: "json"}, {max: -1}, "x"]) {
			try { box().columns(bad); out.noThrow = bad } catch (e) { (out.errs = out.errs || []).push(e.name + ": " + e.message) }
		}
		return out;
	}
	// Enough of TextDecoder for UTF-8, which goja lacks.
	function TextDecoderLike() {}
	TextDecoderLike.prototype.decode = function (u8) {
		let s = "";
		for (let i = 0; i < u8.length; i++) s += "%" + (u8[i] < 16 ? "0" : "") + u8[i].toString(16);
		return decodeURIComponent(s);
	};`, vm.Limits{})
	got := run(t, p, h, "")
	want := `{"types":[2,"Int32Array",true],"strings":true,"numberType":"Float64Array","numbers":true,` +
		`"bytes":true,"bytesTypes":["Uint8Array","Uint32Array"],"chunks":true,"mix":16,"limit":[3,0],"limitChunks":[4,3,0],` +
		`"within":"0,1","empty":"{\"n\":0,\"c\":[{},{}],\"v\":{},\"off\":{\"0\":0}}",` +
		`"errs":["TypeError: region.columns: values must be \"string\", \"number\" or \"bytes\", got \"json\"",` +
		`"TypeError: region.columns: option max must be a non-negative integer, got -1",` +
		`"TypeError: region.columns: options must be an object, got a string"]}`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestColumnsGeo: in a GEO namespace the axes are Float64Arrays of
// degrees, as exact as c in {c, v}.
func TestColumnsGeo(t *testing.T) {
	sb := newSB(t)
	h := vmtest.NewGeoHost()
	p := compile(t, sb, `function run() {
		cube.put([2.3522, 48.8566], "Paris");
		cube.put([-0.1276, 51.5072], "London");
		const c = cube.region([-10, 40], [10, 60]).columns();
		return [c.c[0].constructor.name, Array.from(c.c[0]).sort().join(","), Array.from(c.c[1]).sort().join(","), c.v.slice().sort().join(",")].join(" ");
	}`, vm.Limits{})
	if got, want := run(t, p, h, ""), "Float64Array -0.1276,2.3522 48.8566,51.5072 London,Paris"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestColumnsHostCalls: columns counts one host call per batch of 64
// points, as iterating does, so the host-call limit bounds it the same
// way. Break caught: no call counted in columns' loop (HostCalls 1 for
// 1,000 points, and the limit of 5 never reached).
func TestColumnsHostCalls(t *testing.T) {
	sb := newSB(t)
	h := vmtest.NewHost(1)
	for i := int32(0); i < 1000; i++ {
		h.Put(context.Background(), []int32{i}, []byte("x"))
	}
	calls := func(body string, lim vm.Limits) (int64, error) {
		p := compile(t, sb, "function run() {\n"+body+"\n}", lim)
		res, err := p.Run(context.Background(), h, nil)
		return res.HostCalls, err
	}
	iter, err := calls(`return cube.region([0], [999]).count()`, vm.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	cols, err := calls(`return cube.region([0], [999]).columns().n`, vm.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if cols < iter-1 || cols > iter+1 {
		t.Errorf("columns counted %d host calls for 1,000 points, iterating %d", cols, iter)
	}
	_, err = calls(`try { cube.region([0], [999]).columns() } catch (e) {} return "swallowed"`, vm.Limits{HostCalls: 5})
	wantKind(t, err, vm.KindHostCallLimit)
}

// TestColumnsHostile: one columns call cannot allocate past the run's
// memory budget, nor be caught, nor outlive the run's timeout on a scan
// that never ends.
func TestColumnsHostile(t *testing.T) {
	sb := newSB(t)
	// 100,000 points of 100 bytes from a scan that allocates nothing to
	// keep (so the heap watchdog, which also ends runs that grow past the
	// budget, has nothing to see before columns does): 10 MB as bytes,
	// more as strings, against a budget of 4 MiB (columns keeps to half). Break caught: reserve
	// not failing (the watchdog ended the runs instead, its message naming
	// no region.columns).
	host := endless{Host: vmtest.NewHost(2), value: []byte(strings.Repeat("v", 100))}
	for _, mode := range []string{"string", "bytes", "number"} {
		lim := vm.Limits{MemoryBytes: 4 << 20, Timeout: 10 * time.Second}
		n := 100_000
		if mode == "number" {
			n = 500_000 // 8 MB of numbers, 8 MB of coordinates
		}
		p := compile(t, sb, `function run() {
			try { return cube.region([0, 0], [1, 1], {limit: `+strconv.Itoa(n)+`}).columns({values: "`+mode+`"}).n } catch (e) { return "caught " + e }
		}`, lim)
		// The heap watchdog is process-wide and samples, so on a loaded
		// machine it can end a run before columns' own check does (its
		// message names no region.columns; seen in CI 1 run in ~10).
		// Columns must be the one that ends it in one of three tries;
		// with reserve broken, all three are the watchdog's.
		var e *vm.Error
		for try := 0; try < 3; try++ {
			runtime.GC()
			_, err := p.Run(context.Background(), host, nil)
			e = wantKind(t, err, vm.KindMemoryLimit)
			if strings.Contains(e.Msg, "region.columns") {
				break
			}
		}
		if !strings.Contains(e.Msg, "region.columns") || !strings.Contains(e.Msg, "{max: n}") {
			t.Errorf("%s: message %q does not say what to do", mode, e.Msg)
		}
		// The same in chunks runs. Its budget has headroom: the heap
		// watchdog is process-wide and samples, and the chunks' garbage
		// on a loaded machine took it past 4 MiB.
		p = compile(t, sb, `function run() {
			const it = cube.region([0, 0], [1, 1], {limit: `+strconv.Itoa(n)+`});
			let n = 0;
			for (let c; (c = it.columns({max: 1000, values: "`+mode+`"})).n > 0;) n += c.n;
			return n;
		}`, vm.Limits{MemoryBytes: 64 << 20, Timeout: 10 * time.Second})
		if got := run(t, p, host, ""); got != strconv.Itoa(n) {
			t.Errorf("%s in chunks: %s points", mode, got)
		}
	}

	// A scan that never ends, with a budget too big to reach: the
	// timeout must stop the Go loop. Break caught: no host call counted
	// (and so no liveness check) in columns' loop -> the run did not end
	// within 10 s.
	p := compile(t, sb, `function run() {
		try { cube.region([0, 0], [1, 1]).columns({values: "number"}) } catch (e) {}
		return "swallowed";
	}`, vm.Limits{MemoryBytes: 1 << 40, Timeout: 200 * time.Millisecond})
	done := make(chan error, 1)
	go func() {
		_, err := p.Run(context.Background(), endless{Host: vmtest.NewHost(2), value: []byte("1")}, nil)
		done <- err
	}()
	select {
	case err := <-done:
		wantKind(t, err, vm.KindTimeout)
	case <-time.After(10 * time.Second):
		t.Fatal("columns over an endless scan outlived its 200 ms timeout by 10 s")
	}
}

// endless is a host whose region scans never end; every point has value.
type endless struct {
	*vmtest.Host
	value []byte
}

func (h endless) Region(context.Context, []int32, []int32) vm.Cursor[vm.Point] {
	return &endlessCursor{value: h.value, c: make([]int32, 2)}
}

// endlessCursor reuses its coordinate, as the engine's cursors may.
type endlessCursor struct {
	value []byte
	c     []int32
}

func (c *endlessCursor) Next() (vm.Point, bool) {
	c.c[0]++
	c.c[1] = -c.c[0]
	return vm.Point{Coord: c.c, Value: c.value}, true
}
func (*endlessCursor) Err() error { return nil }
func (*endlessCursor) Close()     {}

// TestDocJSExample runs the first program of docs/JS.md (the columns
// example) on a 2-D host and checks its answer, so the document cannot
// drift from the API.
func TestDocJSExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/JS.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```js\n(function run.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/JS.md has no ```js block with a function run")
	}
	h := vmtest.NewHost(2)
	for x := int32(0); x < 4; x++ {
		h.Put(context.Background(), []int32{x, 1}, []byte(strconv.Itoa(int(10*x))))
	}
	p := compile(t, newSB(t), string(m[1]), vm.Limits{})
	if got, want := run(t, p, h, ""), `{"n":4,"sum":60,"meanX":1.5}`; got != want {
		t.Errorf("docs/JS.md's example returned %s, want %s", got, want)
	}
}
