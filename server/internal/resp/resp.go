// Package resp decodes RESP requests (the Redis protocol's client side:
// arrays of bulk strings, and inline commands) and encodes replies in RESP2
// or RESP3.
//
// The decoder is cube's own rather than redcon's reader: redcon's panics on a
// bulk length near MaxInt64 (an index overflow) and grows its buffer without
// bound, and a daemon must survive any bytes a client sends. Every length is
// checked against Limits before anything is allocated or indexed, and Parse
// never panics (FuzzParse). Replies are encoded with redcon's Append*
// functions where RESP2 and RESP3 agree.
package resp

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// Defaults for the zero fields of Limits.
const (
	DefaultMaxRequest = 64 << 20 // bytes of one command, all arguments together
	DefaultMaxArgs    = 1 << 20  // arguments of one command
	MaxInline         = 64 << 10 // bytes of one inline (telnet-style) command line
)

// Limits bound one request. The zero value of a field means its default.
type Limits struct {
	MaxRequest int
	MaxArgs    int
}

func (l Limits) withDefaults() Limits {
	if l.MaxRequest <= 0 {
		l.MaxRequest = DefaultMaxRequest
	}
	if l.MaxArgs <= 0 {
		l.MaxArgs = DefaultMaxArgs
	}
	return l
}

// Errors from Parse. After any of them the byte stream cannot be trusted to
// resynchronise, so the connection should reply with the error and close.
var (
	// ErrProtocol: bytes that are not a RESP request.
	ErrProtocol = errors.New("resp: protocol error")
	// ErrTooLarge: a request over Limits.MaxRequest or Limits.MaxArgs.
	ErrTooLarge = errors.New("resp: request too large")
)

// Parse decodes the first command in buf, appending its arguments to
// args[:0]. It returns n == 0 and no error when buf holds only part of a
// command: read more and call again. The arguments alias buf (or, for inline
// commands with quotes, fresh memory); copy them to keep them past the next
// read into buf.
//
// A request larger than the limits fails as soon as its header says so, or,
// for one whose size is not announced (an inline line), once buf holds more
// than the limit without completing it.
func Parse(buf []byte, args [][]byte, lim Limits) (n int, out [][]byte, err error) {
	lim = lim.withDefaults()
	out = args[:0]
	if len(buf) == 0 {
		return 0, out, nil
	}
	if buf[0] != '*' {
		return parseInline(buf, out, lim)
	}
	line, i, err := readLine(buf, 1, 32)
	if err != nil || line == nil {
		return 0, out[:0], err
	}
	count, ok := parseLen(line)
	if !ok {
		return 0, out[:0], fmt.Errorf("%w: invalid multibulk length %q", ErrProtocol, line)
	}
	if count > lim.MaxArgs {
		return 0, out[:0], fmt.Errorf("%w: %d arguments (the limit is %d)", ErrTooLarge, count, lim.MaxArgs)
	}
	total := 0
	for range count {
		if i >= len(buf) {
			return 0, out[:0], nil
		}
		if buf[i] != '$' {
			return 0, out[:0], fmt.Errorf("%w: expected '$', got %q", ErrProtocol, buf[i])
		}
		line, next, err := readLine(buf, i+1, 32)
		if err != nil {
			return 0, out[:0], err
		}
		if line == nil {
			return 0, out[:0], nil
		}
		size, ok := parseLen(line)
		if !ok {
			return 0, out[:0], fmt.Errorf("%w: invalid bulk length %q", ErrProtocol, line)
		}
		total += size
		if size > lim.MaxRequest || total > lim.MaxRequest {
			return 0, out[:0], fmt.Errorf("%w: over %d bytes", ErrTooLarge, lim.MaxRequest)
		}
		i = next
		if len(buf)-i < size+2 {
			return 0, out[:0], nil
		}
		if buf[i+size] != '\r' || buf[i+size+1] != '\n' {
			return 0, out[:0], fmt.Errorf("%w: bulk string not followed by CRLF", ErrProtocol)
		}
		out = append(out, buf[i:i+size:i+size])
		i += size + 2
	}
	return i, out, nil
}

// readLine returns the bytes from buf[i] up to a CRLF and the index after
// it; nil if no CRLF arrived yet. A line longer than max is an error.
func readLine(buf []byte, i, max int) (line []byte, next int, err error) {
	j := bytes.IndexByte(buf[i:min(len(buf), i+max+2)], '\n')
	if j < 0 {
		if len(buf)-i > max+1 {
			return nil, 0, fmt.Errorf("%w: length line too long", ErrProtocol)
		}
		return nil, 0, nil
	}
	j += i
	if j == i || buf[j-1] != '\r' {
		return nil, 0, fmt.Errorf("%w: expected CRLF", ErrProtocol)
	}
	return buf[i : j-1], j + 1, nil
}

// parseLen parses a non-negative decimal length of at most 10 digits.
func parseLen(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 10 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// parseInline splits a telnet-style line (within lim) on blanks, honouring "..." (with
// \n \r \t \\ \" \xHH escapes) and '...' like redis-server.
func parseInline(buf []byte, out [][]byte, lim Limits) (int, [][]byte, error) {
	limit := min(MaxInline, lim.MaxRequest)
	j := bytes.IndexByte(buf[:min(len(buf), limit+1)], '\n')
	if j < 0 {
		if len(buf) > limit {
			return 0, out, fmt.Errorf("%w: inline command over %d bytes", ErrTooLarge, limit)
		}
		return 0, out, nil
	}
	line := buf[:j]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	var err error
	out, err = splitArgs(line, out)
	if err != nil {
		return 0, out[:0], err
	}
	if len(out) > lim.MaxArgs {
		return 0, out[:0], fmt.Errorf("%w: %d arguments (the limit is %d)", ErrTooLarge, len(out), lim.MaxArgs)
	}
	return j + 1, out, nil
}

func splitArgs(line []byte, out [][]byte) ([][]byte, error) {
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			return out, nil
		}
		switch line[i] {
		case '"':
			var arg []byte
			i++
			for {
				if i >= len(line) {
					return out, fmt.Errorf("%w: unbalanced quotes in request", ErrProtocol)
				}
				c := line[i]
				if c == '"' {
					i++
					break
				}
				if c == '\\' && i+1 < len(line) {
					i++
					switch e := line[i]; e {
					case 'n':
						c = '\n'
					case 'r':
						c = '\r'
					case 't':
						c = '\t'
					case 'b':
						c = '\b'
					case 'a':
						c = '\a'
					case 'x':
						if i+2 < len(line) {
							if v, err := strconv.ParseUint(string(line[i+1:i+3]), 16, 8); err == nil {
								c = byte(v)
								i += 2
								break
							}
						}
						c = 'x'
					default:
						c = e
					}
				}
				arg = append(arg, c)
				i++
			}
			if i < len(line) && !isSpace(line[i]) {
				return out, fmt.Errorf("%w: closing quote must be followed by a space", ErrProtocol)
			}
			out = append(out, arg)
		case '\'':
			var arg []byte
			i++
			for {
				if i >= len(line) {
					return out, fmt.Errorf("%w: unbalanced quotes in request", ErrProtocol)
				}
				c := line[i]
				if c == '\'' {
					i++
					break
				}
				if c == '\\' && i+1 < len(line) && line[i+1] == '\'' {
					i++
					c = '\''
				}
				arg = append(arg, c)
				i++
			}
			if i < len(line) && !isSpace(line[i]) {
				return out, fmt.Errorf("%w: closing quote must be followed by a space", ErrProtocol)
			}
			out = append(out, arg)
		default:
			s := i
			for i < len(line) && !isSpace(line[i]) {
				i++
			}
			out = append(out, line[s:i:i])
		}
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}
