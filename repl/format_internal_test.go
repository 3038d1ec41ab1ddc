package repl

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFormatResult(t *testing.T) {
	tests := []struct {
		name string
		r    Result
		json bool
		want string
	}{
		{"undefined", Result{Type: "undefined"}, false, "undefined"},
		{"undefined json", Result{Type: "undefined"}, true, "null"},
		{"string", Result{Output: []byte("a\"b<"), Type: "string"}, false, `"a\"b<"`},
		{"number", Result{Output: []byte("42"), Type: "number", JSON: true}, false, "42"},
		{"object", Result{Output: []byte(`{"z":1,"a":[1,2]}`), Type: "object", JSON: true}, false, "{\n  \"z\": 1,\n  \"a\": [1, 2]\n}"},
		{"object json", Result{Output: []byte(`{"z":1,"a":[1,2]}`), Type: "object", JSON: true}, true, `{"z":1,"a":[1,2]}`},
		{"table", Result{Output: []byte(`[{"c":[1,2],"v":"x"},{"c":[3,4],"v":null}]`), Type: "object", JSON: true}, false,
			"c      v\n-----  ----\n[1,2]  x\n[3,4]  null\n(2 rows)"},
		{"table, ragged keys", Result{Output: []byte(`[{"a":1},{"b":"two words"}]`), Type: "object", JSON: true}, false,
			"a  b\n-  ---------\n1\n   two words\n(2 rows)"},
		{"not a table: mixed", Result{Output: []byte(`[{"a":1},2]`), Type: "object", JSON: true}, false, "[\n  {\n    \"a\": 1\n  },\n  2\n]"},
		{"not a table: wide cell", Result{Output: []byte(`[{"a":"` + strings.Repeat("x", 70) + `"}]`), Type: "object", JSON: true}, false,
			"[\n  {\n    \"a\": \"" + strings.Repeat("x", 70) + "\"\n  }\n]"},
		{"bytes", Result{Output: []byte{0, 1, 0xff}, Type: "bytes"}, false, "<bytes 3: 0001ff>"},
		{"bytes json", Result{Output: []byte{0, 1, 0xff}, Type: "bytes"}, true, `"AAH/"`},
		{"long bytes", Result{Output: make([]byte, 100), Type: "bytes"}, false, "<bytes 100: " + strings.Repeat("00", 64) + " ...>"},
		{"function", Result{Output: []byte("[Function: f]"), Type: "function"}, false, "[Function: f]"},
		// From a daemon, without a type.
		{"remote json", Result{Output: []byte(`[1,2]`)}, false, "[1, 2]"},
		{"remote text", Result{Output: []byte(`hello`)}, false, `"hello"`},
		{"remote empty", Result{}, false, "undefined"},
		{"remote bytes", Result{Output: []byte{0xff, 0xfe}}, false, "<bytes 2: fffe>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := formatResult(tt.r, tt.json); got != tt.want {
				t.Errorf("formatResult =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestTableRowCap(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	for i := range maxTableRows + 5 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"i":1}`)
	}
	b.WriteString("]")
	got := formatResult(Result{Output: []byte(b.String()), Type: "object", JSON: true}, false)
	if !strings.HasSuffix(got, "(1005 rows, first 1000 shown; .json on prints all)") {
		t.Errorf("tail = %q", got[len(got)-60:])
	}
}

// FuzzFormatResult: whatever bytes a daemon sends, formatting neither
// panics nor produces invalid UTF-8 from valid UTF-8, and JSON mode gives
// one line.
func FuzzFormatResult(f *testing.F) {
	for _, s := range []string{`[{"c":[1,2],"v":"x"}]`, `{"a":{"b":[]}}`, `"s"`, "\xff", `[{"a":1},{"a":{"x":[1]}}]`, `1e400`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, typ := range []string{"", "object", "string", "bytes"} {
			r := Result{Output: b, Type: typ, JSON: typ == "object"}
			out := formatResult(r, false)
			if utf8.Valid(b) && !utf8.ValidString(out) {
				t.Fatalf("formatResult(%q, %s) gave invalid UTF-8 %q", b, typ, out)
			}
			if one := formatResult(r, true); strings.Contains(one, "\n") {
				t.Fatalf("json mode of %q (%s) spans lines: %q", b, typ, one)
			}
		}
	})
}

func BenchmarkFormatTable(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("[")
	for i := range 100 {
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString(`{"c":[1,2],"v":"value"}`)
	}
	sb.WriteString("]")
	r := Result{Output: []byte(sb.String()), Type: "object", JSON: true}
	b.ReportAllocs()
	for b.Loop() {
		formatResult(r, false)
	}
}
