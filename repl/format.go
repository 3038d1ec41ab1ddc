package repl

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

const (
	// maxTableRows bounds the rows a table shows; .json on prints all.
	maxTableRows = 1000
	// maxCellWidth: a result with a wider cell prints as JSON instead.
	maxCellWidth = 60
	// maxBytesShown bounds the hex dump of a byte-array result.
	maxBytesShown = 64
)

// formatResult renders a completion value: in text mode strings quoted,
// arrays of like objects (region results, edges, walks) as tables, other
// JSON indented; in JSON mode every result as one line of compact JSON.
func formatResult(r Result, jsonMode bool) string {
	typ, out := r.Type, r.Output
	if typ == "" {
		typ = guessType(out, r.JSON)
	}
	switch typ {
	case "undefined":
		if jsonMode {
			return "null"
		}
		return "undefined"
	case "string":
		return quote(string(out))
	case "bytes":
		if jsonMode {
			return quote(base64.StdEncoding.EncodeToString(out))
		}
		return formatBytes(out)
	case "function", "symbol", "bigint", "lazy":
		if jsonMode {
			return quote(string(out))
		}
		return string(out)
	}
	v, err := parseJSON(out)
	if err != nil {
		// Not JSON after all: show what came.
		return quote(string(out))
	}
	var b strings.Builder
	if jsonMode {
		writeJSON(&b, v, "", "")
		return b.String()
	}
	if t, ok := table(v); ok {
		return t
	}
	writeJSON(&b, v, "  ", "")
	return b.String()
}

// guessType types a result that came without one (from a daemon): JSON
// text is JSON, valid UTF-8 a string, anything else bytes.
func guessType(out []byte, isJSON bool) string {
	switch {
	case isJSON || (len(out) > 0 && json.Valid(out)):
		return "object"
	case len(out) == 0:
		return "undefined"
	case bytes.HasPrefix(out, []byte("[Function: ")) && bytes.HasSuffix(out, []byte("]")):
		return "function"
	case (bytes.HasPrefix(out, []byte("[cube.region: ")) || bytes.HasPrefix(out, []byte("[cube.V query: "))) && bytes.HasSuffix(out, []byte("]")):
		return "lazy"
	case utf8.Valid(out):
		return "string"
	}
	return "bytes"
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	// json.Marshal escapes <, > and & for HTML; a terminal wants them as is.
	r := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&")
	return r.Replace(string(b))
}

func formatBytes(b []byte) string {
	shown := b
	if len(shown) > maxBytesShown {
		shown = shown[:maxBytesShown]
	}
	s := fmt.Sprintf("<bytes %d: %s", len(b), hex.EncodeToString(shown))
	if len(shown) < len(b) {
		s += " ..."
	}
	return s + ">"
}

// formatOutput renders a program's output bytes (.run): text as it is,
// anything else as a hex dump.
func formatOutput(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return formatBytes(b)
}

// table renders an array of objects as a table when every element is an
// object and every cell is short; the columns are the keys in the order
// they first appear.
func table(v jvalue) (string, bool) {
	arr, ok := v.([]jvalue)
	if !ok || len(arr) == 0 {
		return "", false
	}
	var cols []string
	seen := map[string]bool{}
	for _, e := range arr {
		o, ok := e.(*jobject)
		if !ok || len(o.keys) == 0 {
			return "", false
		}
		for _, k := range o.keys {
			if !seen[k] {
				seen[k] = true
				cols = append(cols, k)
			}
		}
	}
	rows := arr
	if len(rows) > maxTableRows {
		rows = rows[:maxTableRows]
	}
	cells := make([][]string, len(rows))
	width := make([]int, len(cols))
	for i, c := range cols {
		width[i] = runewidth.StringWidth(c)
	}
	for r, e := range rows {
		o := e.(*jobject)
		cells[r] = make([]string, len(cols))
		for i, c := range cols {
			val, ok := o.vals[c]
			if !ok {
				continue
			}
			s := cell(val)
			w := runewidth.StringWidth(s)
			if w > maxCellWidth {
				return "", false
			}
			cells[r][i] = s
			width[i] = max(width[i], w)
		}
	}
	var b strings.Builder
	line := func(fields []string) {
		var l strings.Builder
		for i, f := range fields {
			if i > 0 {
				l.WriteString("  ")
			}
			l.WriteString(f)
			if i < len(fields)-1 {
				l.WriteString(strings.Repeat(" ", width[i]-runewidth.StringWidth(f)))
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " "))
		b.WriteByte('\n')
	}
	line(cols)
	dashes := make([]string, len(cols))
	for i := range cols {
		dashes[i] = strings.Repeat("-", width[i])
	}
	line(dashes)
	for _, r := range cells {
		line(r)
	}
	switch {
	case len(arr) > len(rows):
		fmt.Fprintf(&b, "(%d rows, first %d shown; .json on prints all)", len(arr), len(rows))
	case len(arr) == 1:
		b.WriteString("(1 row)")
	default:
		fmt.Fprintf(&b, "(%d rows)", len(arr))
	}
	return b.String(), true
}

// cell renders one table cell: strings bare (quoted only when they hold
// control characters or would be mistaken for blank), the rest as
// compact JSON.
func cell(v jvalue) string {
	if s, ok := v.(string); ok {
		if s == "" || strings.TrimSpace(s) != s || strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }) {
			return strconv.Quote(s)
		}
		return s
	}
	var b strings.Builder
	writeJSON(&b, v, "", "")
	return b.String()
}
