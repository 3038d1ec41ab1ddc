package resp_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cubelinux/cube/server/internal/resp"
)

func TestParse(t *testing.T) {
	lim := resp.Limits{MaxRequest: 64, MaxArgs: 4}
	tests := []struct {
		name string
		in   string
		n    int // bytes consumed; 0 = incomplete
		args []string
		err  error
	}{
		{"empty", "", 0, nil, nil},
		{"simple", "*1\r\n$4\r\nPING\r\n", 14, []string{"PING"}, nil},
		{"two", "*2\r\n$3\r\nGET\r\n$0\r\n\r\nrest", 19, []string{"GET", ""}, nil},
		{"binary", "*1\r\n$4\r\na\r\nb\r\n", 14, []string{"a\r\nb"}, nil},
		{"zero count", "*0\r\n", 4, nil, nil},
		{"partial header", "*1", 0, nil, nil},
		{"partial bulk len", "*1\r\n$1", 0, nil, nil},
		{"partial bulk", "*1\r\n$4\r\nPI", 0, nil, nil},
		{"partial crlf", "*1\r\n$4\r\nPING\r", 0, nil, nil},
		{"negative count", "*-1\r\n", 0, nil, resp.ErrProtocol},
		{"bad count", "*x\r\n", 0, nil, resp.ErrProtocol},
		{"no dollar", "*1\r\n+PING\r\n", 0, nil, resp.ErrProtocol},
		{"negative bulk", "*1\r\n$-5\r\nabcdefgh\r\n", 0, nil, resp.ErrProtocol},
		{"huge bulk", "*1\r\n$9223372036854775807\r\nab\r\n", 0, nil, resp.ErrProtocol},
		{"bulk over limit", "*1\r\n$65\r\n", 0, nil, resp.ErrTooLarge},
		{"total over limit", "*2\r\n$40\r\n" + string(bytes.Repeat([]byte("a"), 40)) + "\r\n$40\r\n", 0, nil, resp.ErrTooLarge},
		{"too many args", "*5\r\n", 0, nil, resp.ErrTooLarge},
		{"lf without cr", "*1\n$1\r\na\r\n", 0, nil, resp.ErrProtocol},
		{"bulk without crlf", "*1\r\n$1\r\nabc\r\n", 0, nil, resp.ErrProtocol},
		{"long length line", "*11111111111111111111111111111111111111111", 0, nil, resp.ErrProtocol},
		{"inline", "PUT ns 1 v\r\n", 12, []string{"PUT", "ns", "1", "v"}, nil},
		{"inline too many args", "PUT ns 1 2 v\r\n", 0, nil, resp.ErrTooLarge},
		{"inline over limit", string(bytes.Repeat([]byte("a"), 65)), 0, nil, resp.ErrTooLarge},
		{"inline at limit", string(bytes.Repeat([]byte("a"), 64)), 0, nil, nil},
		{"inline lf", "PING\n", 5, []string{"PING"}, nil},
		{"inline quotes", `SET "a b\x41\n" 'c d' x` + "\r\n", 25, []string{"SET", "a bA\n", "c d", "x"}, nil},
		{"inline empty", "\r\n", 2, nil, nil},
		{"inline partial", "PING", 0, nil, nil},
		{"inline unbalanced", "GET \"abc\r\n", 0, nil, resp.ErrProtocol},
		{"inline quote then text", "GET \"a\"b\r\n", 0, nil, resp.ErrProtocol},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, args, err := resp.Parse([]byte(tt.in), nil, lim)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if n != tt.n {
				t.Fatalf("n = %d, want %d", n, tt.n)
			}
			if len(args) != len(tt.args) {
				t.Fatalf("args = %q, want %q", args, tt.args)
			}
			for i := range args {
				if string(args[i]) != tt.args[i] {
					t.Fatalf("args = %q, want %q", args, tt.args)
				}
			}
		})
	}
}

func TestParseInlineTooLong(t *testing.T) {
	buf := bytes.Repeat([]byte("a"), resp.MaxInline+1)
	if _, _, err := resp.Parse(buf, nil, resp.Limits{}); !errors.Is(err, resp.ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
}

func TestWriter(t *testing.T) {
	for _, tt := range []struct {
		proto int
		fn    func(w *resp.Writer)
		want  string
	}{
		{2, func(w *resp.Writer) { w.Null() }, "$-1\r\n"},
		{3, func(w *resp.Writer) { w.Null() }, "_\r\n"},
		{2, func(w *resp.Writer) { w.Map(1); w.BulkString("a"); w.Int(1) }, "*2\r\n$1\r\na\r\n:1\r\n"},
		{3, func(w *resp.Writer) { w.Map(1); w.BulkString("a"); w.Int(1) }, "%1\r\n$1\r\na\r\n:1\r\n"},
		{2, func(w *resp.Writer) { w.Double(1.5) }, "$3\r\n1.5\r\n"},
		{3, func(w *resp.Writer) { w.Double(1.5) }, ",1.5\r\n"},
		{2, func(w *resp.Writer) { w.Bool(true) }, ":1\r\n"},
		{3, func(w *resp.Writer) { w.Bool(false) }, "#f\r\n"},
		{2, func(w *resp.Writer) { w.Error("ERR a\r\nb") }, "-ERR a  b\r\n"},
		{3, func(w *resp.Writer) { w.Verbatim("hi") }, "=6\r\ntxt:hi\r\n"},
		{2, func(w *resp.Writer) { w.Coord([]int32{-1, 2}) }, "*2\r\n:-1\r\n:2\r\n"},
	} {
		w := resp.Writer{Proto: tt.proto}
		tt.fn(&w)
		if string(w.B) != tt.want {
			t.Errorf("proto %d: got %q, want %q", tt.proto, w.B, tt.want)
		}
	}
}

// FuzzParse feeds arbitrary bytes to Parse: it must never panic, never
// consume more than it was given, and what it accepts must re-encode to a
// request that parses to the same arguments.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"*1\r\n$4\r\nPING\r\n", "*3\r\n$3\r\nPUT\r\n$1\r\na\r\n$0\r\n\r\n", "PING\r\n",
		"*1\r\n$9223372036854775807\r\nab\r\n", "*1\r\n$-5\r\nabcdefgh\r\n", `a "b\x41" 'c'` + "\n",
	} {
		f.Add([]byte(s))
	}
	lim := resp.Limits{MaxRequest: 1 << 16, MaxArgs: 1 << 10}
	// A stranger's limits (see server's maxPreAuthRequest), scaled down.
	small := resp.Limits{MaxRequest: 64, MaxArgs: 4}
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, args, err := resp.Parse(b, nil, small); err == nil {
			total := 0
			for _, a := range args {
				total += len(a)
			}
			if total > small.MaxRequest || len(args) > small.MaxArgs {
				t.Fatalf("%q parsed into %d arguments of %d bytes, over %+v", b, len(args), total, small)
			}
		}
		rest := b
		for len(rest) > 0 {
			n, args, err := resp.Parse(rest, nil, lim)
			if err != nil || n == 0 {
				return
			}
			if n > len(rest) {
				t.Fatalf("consumed %d of %d bytes", n, len(rest))
			}
			var w resp.Writer
			w.Array(len(args))
			for _, a := range args {
				w.Bulk(a)
			}
			m, again, err := resp.Parse(w.B, nil, lim)
			if err != nil || m != len(w.B) || len(again) != len(args) {
				t.Fatalf("re-encoded %q: n=%d err=%v args=%q", w.B, m, err, again)
			}
			for i := range args {
				if !bytes.Equal(args[i], again[i]) {
					t.Fatalf("arg %d: %q != %q", i, args[i], again[i])
				}
			}
			rest = rest[n:]
		}
	})
}
