package resp

import (
	"math"
	"strconv"

	"github.com/tidwall/redcon"
)

// Writer appends replies to a buffer in the protocol version the client
// chose with HELLO: 2 (the default) or 3. RESP3's types degrade in RESP2 the
// way redis-server degrades them: a map becomes a flat array of key, value,
// a double a bulk string, a boolean an integer 1 or 0, null a null bulk.
type Writer struct {
	B     []byte
	Proto int
}

// Reset empties the buffer, keeping its memory.
func (w *Writer) Reset() { w.B = w.B[:0] }

// Len is the number of bytes waiting.
func (w *Writer) Len() int { return len(w.B) }

// OK appends +OK.
func (w *Writer) OK() { w.B = redcon.AppendOK(w.B) }

// Simple appends a simple string (no CR or LF allowed; they are replaced).
func (w *Writer) Simple(s string) { w.B = redcon.AppendString(w.B, s) }

// Error appends an error; s should start with an upper-case code such as
// "ERR". CR and LF are replaced so that the reply stays one line.
func (w *Writer) Error(s string) { w.B = redcon.AppendError(w.B, s) }

// Int appends an integer.
func (w *Writer) Int(n int64) { w.B = redcon.AppendInt(w.B, n) }

// Flag writes 1 for true and 0 for false: Redis's reply for "did it exist"
// (DEL, UNLINK, UNPROG).
func (w *Writer) Flag(b bool) {
	if b {
		w.Int(1)
	} else {
		w.Int(0)
	}
}

// Bulk appends a bulk string.
func (w *Writer) Bulk(b []byte) { w.B = redcon.AppendBulk(w.B, b) }

// BulkString appends a bulk string.
func (w *Writer) BulkString(s string) { w.B = redcon.AppendBulkString(w.B, s) }

// Array appends an array header of n elements.
func (w *Writer) Array(n int) { w.B = redcon.AppendArray(w.B, n) }

// Null appends a null: "_" in RESP3, a null bulk string in RESP2.
func (w *Writer) Null() {
	if w.Proto >= 3 {
		w.B = append(w.B, "_\r\n"...)
		return
	}
	w.B = redcon.AppendNull(w.B)
}

// NullArray appends a null array in RESP2 ("*-1"), null in RESP3.
func (w *Writer) NullArray() {
	if w.Proto >= 3 {
		w.B = append(w.B, "_\r\n"...)
		return
	}
	w.B = append(w.B, "*-1\r\n"...)
}

// Map appends a map header of n pairs; follow it with 2n elements.
func (w *Writer) Map(n int) {
	if w.Proto >= 3 {
		w.B = append(w.B, '%')
		w.B = strconv.AppendInt(w.B, int64(n), 10)
		w.B = append(w.B, '\r', '\n')
		return
	}
	w.Array(2 * n)
}

// Set appends a set header of n elements (an array in RESP2).
func (w *Writer) Set(n int) {
	if w.Proto >= 3 {
		w.B = append(w.B, '~')
		w.B = strconv.AppendInt(w.B, int64(n), 10)
		w.B = append(w.B, '\r', '\n')
		return
	}
	w.Array(n)
}

// Double appends a float: ",f" in RESP3, a bulk string in RESP2.
func (w *Writer) Double(f float64) {
	if w.Proto >= 3 {
		w.B = append(w.B, ',')
		switch {
		case math.IsInf(f, 1):
			w.B = append(w.B, "inf"...)
		case math.IsInf(f, -1):
			w.B = append(w.B, "-inf"...)
		case math.IsNaN(f):
			w.B = append(w.B, "nan"...)
		default:
			w.B = strconv.AppendFloat(w.B, f, 'g', -1, 64)
		}
		w.B = append(w.B, '\r', '\n')
		return
	}
	w.B = redcon.AppendBulkString(w.B, strconv.FormatFloat(f, 'g', -1, 64))
}

// Bool appends a boolean: "#t"/"#f" in RESP3, 1 or 0 in RESP2.
func (w *Writer) Bool(b bool) {
	if w.Proto >= 3 {
		if b {
			w.B = append(w.B, "#t\r\n"...)
		} else {
			w.B = append(w.B, "#f\r\n"...)
		}
		return
	}
	if b {
		w.Int(1)
	} else {
		w.Int(0)
	}
}

// Verbatim appends text meant for people: a verbatim string "txt" in RESP3
// (redis-cli prints it raw), a bulk string in RESP2.
func (w *Writer) Verbatim(s string) {
	if w.Proto >= 3 {
		w.B = append(w.B, '=')
		w.B = strconv.AppendInt(w.B, int64(len(s)+4), 10)
		w.B = append(w.B, "\r\ntxt:"...)
		w.B = append(w.B, s...)
		w.B = append(w.B, '\r', '\n')
		return
	}
	w.BulkString(s)
}

// Coord appends a coordinate as an array of integers.
func (w *Writer) Coord(c []int32) {
	w.Array(len(c))
	for _, x := range c {
		w.Int(int64(x))
	}
}
