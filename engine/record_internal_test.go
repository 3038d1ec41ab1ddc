package engine

import (
	"bytes"
	"math"
	"testing"
)

func encodeAll() []byte {
	var e opEncoder
	e.nsCreate(7, "world", 3, 1, 1<<20)
	e.put(7, []int32{1, -2, math.MaxInt32}, []byte("value"))
	e.put(7, []int32{0, 0, 0}, nil)
	e.del(7, []int32{math.MinInt32, 0, 5})
	e.link(7, []int32{1, 2, 3}, []int32{4, 5, 6}, "road", 2.5, []byte("edge"))
	e.unlink(7, []int32{1, 2, 3}, []int32{4, 5, 6}, "road")
	e.metaPut(7, "prog/x", []byte("code"))
	e.metaDel(7, "prog/x")
	e.nsDrop(7)
	e.nsCreate(8, "geo", 2, curveGeo|1, 0)
	return e.b
}

func TestOpsRoundTrip(t *testing.T) {
	d := opDecoder{b: encodeAll()}
	var o op
	want := []opKind{opNSCreate, opPut, opPut, opDel, opLink, opUnlink, opMetaPut, opMetaDel, opNSDrop, opNSCreate}
	for i, k := range want {
		more, err := d.next(&o)
		if err != nil || !more || o.kind != k || o.ns != 7 && i < 9 {
			t.Fatalf("op %d: %+v more=%v err=%v", i, o, more, err)
		}
		switch i {
		case 0:
			if o.name != "world" || o.dims != 3 || o.curve != 1 || o.maxValue != 1<<20 {
				t.Fatalf("create: %+v", o)
			}
		case 9:
			if o.ns != 8 || o.name != "geo" || o.dims != 2 || o.curve != curveGeo|1 {
				t.Fatalf("geo create: %+v", o)
			}
		case 1:
			if o.c != (pkey{1, -2, math.MaxInt32}) || string(o.value) != "value" {
				t.Fatalf("put: %+v", o)
			}
		case 3:
			if o.c != (pkey{math.MinInt32, 0, 5}) {
				t.Fatalf("del: %+v", o)
			}
		case 4:
			if o.to != (pkey{4, 5, 6}) || o.name != "road" || o.weight != 2.5 || string(o.value) != "edge" {
				t.Fatalf("link: %+v", o)
			}
		}
	}
	if more, err := d.next(&o); more || err != nil {
		t.Fatalf("after the end: %v %v", more, err)
	}
}

func TestOpsRejectTruncation(t *testing.T) {
	b := encodeAll()
	for n := 1; n < len(b); n++ {
		d := opDecoder{b: b[:n]}
		var o op
		var err error
		for {
			var more bool
			more, err = d.next(&o)
			if err != nil || !more {
				break
			}
		}
		// A cut at an op boundary decodes cleanly as fewer ops; anywhere
		// else it must be an error, never a panic.
		_ = err
	}
}

// FuzzDecodeOps feeds arbitrary bytes to the decoder of log and
// checkpoint records: it must never panic, and whatever it accepts must
// re-encode to the same bytes.
func FuzzDecodeOps(f *testing.F) {
	f.Add(encodeAll())
	f.Add([]byte{byte(opPut), 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{byte(opLink), 1, 9})
	f.Fuzz(func(t *testing.T, b []byte) {
		d := opDecoder{b: b}
		var o op
		var e opEncoder
		for {
			more, err := d.next(&o)
			if err != nil {
				return
			}
			if !more {
				break
			}
			switch o.kind {
			case opNSCreate:
				e.nsCreate(o.ns, o.name, o.dims, o.curve, o.maxValue)
			case opNSDrop:
				e.nsDrop(o.ns)
			case opPut:
				e.put(o.ns, o.c[:o.dims], o.value)
			case opDel:
				e.del(o.ns, o.c[:o.dims])
			case opLink:
				e.link(o.ns, o.c[:o.dims], o.to[:o.dims], o.name, o.weight, o.value)
			case opUnlink:
				e.unlink(o.ns, o.c[:o.dims], o.to[:o.dims], o.name)
			case opMetaPut:
				e.metaPut(o.ns, o.name, o.value)
			case opMetaDel:
				e.metaDel(o.ns, o.name)
			}
		}
		// Varints may have non-minimal encodings in the input; compare
		// by decoding again.
		d2 := opDecoder{b: e.b}
		var o2 op
		for {
			more, err := d2.next(&o2)
			if err != nil {
				t.Fatalf("re-encoded ops do not decode: %v", err)
			}
			if !more {
				break
			}
		}
		if len(e.b) > len(b) && !bytes.Equal(e.b, b) {
			t.Fatalf("re-encoding grew: %d > %d", len(e.b), len(b))
		}
	})
}
