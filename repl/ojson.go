package repl

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
)

// jvalue is a JSON value that keeps the order of object keys, as the
// script built them: nil, bool, json.Number, string, []jvalue or *jobject.
type jvalue = any

type jobject struct {
	keys []string
	vals map[string]jvalue
}

// parseJSON decodes one JSON value keeping key order.
func parseJSON(b []byte) (jvalue, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	v, err := parseValue(d)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("trailing data after JSON value")
	}
	return v, nil
}

func parseValue(d *json.Decoder) (jvalue, error) {
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '[':
			arr := []jvalue{}
			for d.More() {
				v, err := parseValue(d)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := d.Token()
			return arr, err
		case '{':
			o := &jobject{vals: map[string]jvalue{}}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := parseValue(d)
				if err != nil {
					return nil, err
				}
				if _, dup := o.vals[k]; !dup {
					o.keys = append(o.keys, k)
				}
				o.vals[k] = v
			}
			_, err := d.Token()
			return o, err
		}
		return nil, errors.New("unexpected delimiter")
	default:
		return t, nil
	}
}

// writeJSON writes v as JSON: compact when indent is "", else indented,
// with short arrays of scalars (coordinates) kept on one line.
func writeJSON(w *strings.Builder, v jvalue, indent, prefix string) {
	switch v := v.(type) {
	case nil:
		w.WriteString("null")
	case bool:
		w.WriteString(strconv.FormatBool(v))
	case json.Number:
		w.WriteString(v.String())
	case string:
		b, _ := json.Marshal(v)
		w.Write(b)
	case []jvalue:
		if len(v) == 0 {
			w.WriteString("[]")
			return
		}
		if indent == "" || allScalars(v) {
			w.WriteByte('[')
			for i, e := range v {
				if i > 0 {
					w.WriteByte(',')
					if indent != "" {
						w.WriteByte(' ')
					}
				}
				writeJSON(w, e, indent, prefix)
			}
			w.WriteByte(']')
			return
		}
		w.WriteString("[\n")
		for i, e := range v {
			w.WriteString(prefix + indent)
			writeJSON(w, e, indent, prefix+indent)
			if i < len(v)-1 {
				w.WriteByte(',')
			}
			w.WriteByte('\n')
		}
		w.WriteString(prefix + "]")
	case *jobject:
		if len(v.keys) == 0 {
			w.WriteString("{}")
			return
		}
		if indent == "" {
			w.WriteByte('{')
			for i, k := range v.keys {
				if i > 0 {
					w.WriteByte(',')
				}
				writeJSON(w, k, "", "")
				w.WriteByte(':')
				writeJSON(w, v.vals[k], "", "")
			}
			w.WriteByte('}')
			return
		}
		w.WriteString("{\n")
		for i, k := range v.keys {
			w.WriteString(prefix + indent)
			writeJSON(w, k, "", "")
			w.WriteString(": ")
			writeJSON(w, v.vals[k], indent, prefix+indent)
			if i < len(v.keys)-1 {
				w.WriteByte(',')
			}
			w.WriteByte('\n')
		}
		w.WriteString(prefix + "}")
	}
}

// allScalars reports whether an array holds only a few numbers, strings,
// booleans or nulls, short enough for one line.
func allScalars(a []jvalue) bool {
	if len(a) > 16 {
		return false
	}
	for _, e := range a {
		switch e.(type) {
		case []jvalue, *jobject:
			return false
		}
	}
	return true
}

func jsonNumber(n int) json.Number { return json.Number(strconv.Itoa(n)) }
