package server_test

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cubelinux/cube/server"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected replies in testdata/scripts from what the server replies")

// TestScripts runs every testdata/scripts/*.txt against a real server,
// over a real Unix socket, one connection per script (so EVAL's session
// carries from one request to the next). A script is a list of requests,
// each followed by the reply it expects, rendered as redis-cli shows it in
// a terminal:
//
//	# a comment; blank lines separate requests
//	server max-eval-timeout=2s max-eval-memory=64
//	> PUT ns 1 2 "hello world"
//	OK
//	> STATS ns
//	~ "values":1
//
// Arguments split on spaces; "..." quotes with Go escapes (\n, \x00, \");
// @file:PATH is the contents of a file under testdata. Expected lines that
// start with "~ " say only that the reply contains the rest of the line
// (as rendered, or unquoted in one of its strings), for replies with
// timings or sizes in them. The server line, before the
// first request, sets server.Options.
//
// go test ./server -run TestScripts -rewrite writes the replies the server
// gave into the scripts (the "~" lines stay); read the diff before
// committing it.
//
// The scripts took over TestErrors (each mistake's error, the connection
// still usable after it) and TestPrograms (PROG to UNPROG, EVAL's session
// per connection) from commands_test.go.
//
// Seen to fail: with the renderer printing a RESP3 double as a bulk string
// (resp3.txt), with every request sent on the first connection (the other
// connection's session saw twice: programs.txt), and with one character of
// an expected reply changed.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/scripts/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			runScript(t, f)
		})
	}
}

// scriptStep is one request of a script and what it expects.
type scriptStep struct {
	conn     string   // the connection it is sent on ("" the first)
	line     int      // of the request
	request  string   // as written, after "> "
	want     []string // exact reply lines
	contains []string // "~" lines
}

// script is a parsed file: its steps, and the lines between them (comments,
// blank lines, the server line) kept for -rewrite.
type script struct {
	opts  server.Options
	steps []scriptStep
	// chunks[i] is the text before step i; chunks[len(steps)] the tail.
	chunks []string
}

func parseScript(path string) (*script, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := &script{}
	var chunk strings.Builder
	var cur *scriptStep
	conn := ""
	flush := func() {
		if cur != nil {
			s.steps = append(s.steps, *cur)
			cur = nil
		}
	}
	for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		n := i + 1
		switch {
		case strings.HasPrefix(line, "> "):
			flush()
			s.chunks = append(s.chunks, chunk.String())
			chunk.Reset()
			cur = &scriptStep{conn: conn, line: n, request: line[2:]}
		case line == "" || strings.HasPrefix(line, "#"):
			flush()
			chunk.WriteString(line + "\n")
		case cur == nil && strings.HasPrefix(line, "server "):
			if len(s.steps) > 0 {
				return nil, fmt.Errorf("%s:%d: the server line goes before the first request", path, n)
			}
			if err := parseServerOpts(&s.opts, strings.Fields(line)[1:]); err != nil {
				return nil, fmt.Errorf("%s:%d: %v", path, n, err)
			}
			chunk.WriteString(line + "\n")
		case strings.HasPrefix(line, "conn "):
			flush()
			conn = strings.TrimSpace(line[len("conn "):])
			chunk.WriteString(line + "\n")
		case cur == nil:
			return nil, fmt.Errorf("%s:%d: a reply line with no request before it (start requests with \"> \")", path, n)
		case strings.HasPrefix(line, "~ "):
			cur.contains = append(cur.contains, line[2:])
		default:
			cur.want = append(cur.want, line)
		}
	}
	flush()
	s.chunks = append(s.chunks, chunk.String())
	return s, nil
}

func parseServerOpts(o *server.Options, kvs []string) error {
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("server option %q: want key=value", kv)
		}
		var err error
		switch k {
		case "max-eval-timeout":
			o.MaxEvalTimeout, err = time.ParseDuration(v)
		case "max-eval-memory": // MiB, as cube serve --max-eval-memory
			var mib int64
			mib, err = strconv.ParseInt(v, 10, 64)
			o.MaxEvalMemory = mib << 20
		default:
			return fmt.Errorf("unknown server option %q (max-eval-timeout, max-eval-memory)", k)
		}
		if err != nil {
			return fmt.Errorf("server option %s: %v", k, err)
		}
	}
	return nil
}

func runScript(t *testing.T, path string) {
	s, err := parseScript(path)
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, s.opts)
	conns := map[string]*raw{}
	var names []string
	for _, st := range s.steps {
		if conns[st.conn] == nil {
			conns[st.conn] = dialRaw(t, "unix", ts.sock)
			names = append(names, st.conn)
		}
	}
	var out strings.Builder
	for i, st := range s.steps {
		r := conns[st.conn]
		out.WriteString(s.chunks[i])
		args, err := splitArgs(st.request)
		if err != nil {
			t.Fatalf("%s:%d: %v", path, st.line, err)
		}
		r.SetDeadline(time.Now().Add(30 * time.Second))
		if _, err := r.Write(encodeRequest(args)); err != nil {
			t.Fatalf("%s:%d: send: %v", path, st.line, err)
		}
		v, err := readRESP(r.r)
		if err != nil {
			t.Fatalf("%s:%d: %s: reading the reply: %v", path, st.line, st.request, err)
		}
		got := renderCLI(v, "")
		gotLines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
		out.WriteString("> " + st.request + "\n")
		for _, c := range st.contains {
			out.WriteString("~ " + c + "\n")
			if !strings.Contains(got, c) && !strings.Contains(plainText(v), c) {
				t.Errorf("%s:%d: %s\nreply:\n%s\nlacks %q", path, st.line, st.request, got, c)
			}
		}
		if len(st.contains) > 0 {
			continue
		}
		for _, l := range gotLines {
			out.WriteString(l + "\n")
		}
		if !*rewrite && strings.Join(gotLines, "\n") != strings.Join(st.want, "\n") {
			t.Errorf("%s:%d: %s\ngot:\n%s\nwant:\n%s\n(rerun with -rewrite to take the server's replies)", path, st.line, st.request, got, strings.Join(st.want, "\n"))
		}
	}
	out.WriteString(s.chunks[len(s.steps)])
	// Every connection outlives its script's mistakes.
	for _, name := range names {
		r := conns[name]
		r.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := r.Write(encodeRequest([][]byte{[]byte("PING")})); err != nil {
			t.Fatalf("%s: connection %q after the script: %v", path, name, err)
		}
		if v, err := readRESP(r.r); err != nil || v.str != "PONG" {
			t.Errorf("%s: connection %q after the script: PING = %+v, %v", path, name, v, err)
		}
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// splitArgs splits a request line: words on spaces, "..." as a Go string
// literal, @file:PATH as the file's bytes (PATH under testdata).
func splitArgs(line string) ([][]byte, error) {
	var args [][]byte
	for i := 0; i < len(line); {
		switch {
		case line[i] == ' ':
			i++
		case line[i] == '"':
			j := i + 1
			for ; j < len(line) && line[j] != '"'; j++ {
				if line[j] == '\\' {
					j++
				}
			}
			if j >= len(line) {
				return nil, fmt.Errorf("unclosed quote at column %d", i+1)
			}
			u, err := strconv.Unquote(line[i : j+1])
			if err != nil {
				return nil, fmt.Errorf("quoted argument at column %d: %v", i+1, err)
			}
			args = append(args, []byte(u))
			i = j + 1
		default:
			j := strings.IndexByte(line[i:], ' ')
			if j < 0 {
				j = len(line) - i
			}
			w := line[i : i+j]
			if name, ok := strings.CutPrefix(w, "@file:"); ok {
				b, err := os.ReadFile(filepath.Join("testdata", name))
				if err != nil {
					return nil, err
				}
				args = append(args, b)
			} else {
				args = append(args, []byte(w))
			}
			i += j
		}
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("empty request")
	}
	return args, nil
}

func encodeRequest(args [][]byte) []byte {
	b := fmt.Appendf(nil, "*%d\r\n", len(args))
	for _, a := range args {
		b = fmt.Appendf(b, "$%d\r\n", len(a))
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	return b
}

// respValue is one decoded reply. kind is its RESP type byte; str holds
// simple strings, errors, numbers and bulk strings; elems the elements of
// arrays, sets, pushes and maps (keys and values alternating).
type respValue struct {
	kind  byte
	str   string
	null  bool
	elems []respValue
}

func readRESP(r *bufio.Reader) (respValue, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return respValue{}, err
	}
	if len(line) < 3 || !strings.HasSuffix(line, "\r\n") {
		return respValue{}, fmt.Errorf("malformed reply line %q", line)
	}
	kind, body := line[0], line[1:len(line)-2]
	v := respValue{kind: kind}
	switch kind {
	case '+', '-', ':', ',', '#', '(':
		v.str = body
	case '_':
		v.null = true
	case '$', '=', '!':
		n, err := strconv.Atoi(body)
		if err != nil {
			return v, fmt.Errorf("bad length %q", body)
		}
		if n < 0 {
			v.null = true
			return v, nil
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return v, err
		}
		v.str = string(b[:n])
		if kind == '=' && len(v.str) >= 4 {
			v.str = v.str[4:] // the "txt:" of a verbatim string
		}
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(body)
		if err != nil {
			return v, fmt.Errorf("bad count %q", body)
		}
		if n < 0 {
			v.null = true
			return v, nil
		}
		if kind == '%' || kind == '|' {
			n *= 2
		}
		for range n {
			e, err := readRESP(r)
			if err != nil {
				return v, err
			}
			v.elems = append(v.elems, e)
		}
		if kind == '|' { // attributes precede the reply they describe
			return readRESP(r)
		}
	default:
		return v, fmt.Errorf("unknown reply type %q", kind)
	}
	return v, nil
}

// plainText is every string of v, unquoted, one a line.
func plainText(v respValue) string {
	var b strings.Builder
	var walk func(respValue)
	walk = func(v respValue) {
		b.WriteString(v.str + "\n")
		for _, e := range v.elems {
			walk(e)
		}
	}
	walk(v)
	return b.String()
}

// renderCLI renders v as redis-cli does on a terminal (its "TTY" format),
// ending in a newline; prefix indents the lines after the first of a
// nested aggregate.
func renderCLI(v respValue, prefix string) string {
	if v.null {
		return "(nil)\n"
	}
	switch v.kind {
	case '+':
		return v.str + "\n"
	case '-', '!':
		return "(error) " + v.str + "\n"
	case ':':
		return "(integer) " + v.str + "\n"
	case ',':
		return "(double) " + v.str + "\n"
	case '(':
		return "(big number) " + v.str + "\n"
	case '#':
		if v.str == "t" {
			return "(true)\n"
		}
		return "(false)\n"
	case '$':
		return cliQuote(v.str) + "\n"
	case '=':
		return v.str + "\n"
	}
	n, sep, empty := len(v.elems), ')', "(empty array)"
	switch v.kind {
	case '~':
		sep, empty = '~', "(empty set)"
	case '%':
		n, sep, empty = n/2, '#', "(empty hash)"
	}
	if n == 0 {
		return empty + "\n"
	}
	width := len(strconv.Itoa(n))
	inner := prefix + strings.Repeat(" ", width+2)
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(prefix)
		}
		fmt.Fprintf(&b, "%*d%c ", width, i+1, sep)
		if v.kind == '%' {
			b.WriteString(strings.TrimSuffix(renderCLI(v.elems[2*i], inner), "\n"))
			b.WriteString(" => ")
			b.WriteString(renderCLI(v.elems[2*i+1], inner))
		} else {
			b.WriteString(renderCLI(v.elems[i], inner))
		}
	}
	return b.String()
}

// cliQuote quotes s as redis-cli does: printable ASCII as it is, the C
// escapes for quote, backslash and the common controls, \xhh for any other
// byte (UTF-8 included).
func cliQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		default:
			if c >= 0x20 && c < 0x7f {
				b.WriteByte(c)
			} else {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
