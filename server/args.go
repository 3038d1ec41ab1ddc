package server

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"weak"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/server/internal/resp"
)

var errNoAuth = errors.New("NOAUTH Authentication required: send AUTH <token> first (before it, only PING, HELLO, AUTH and QUIT work)")

// ns resolves a namespace argument. The connection keeps the last one it
// resolved while it is not dropped: clients send one namespace's name
// again and again, and the store's lookup (a lock, a hash of the name)
// was a tenth of a pipelined PUT's CPU. It keeps it weakly, so that an
// idle connection does not hold a dropped namespace's data in memory.
func (cl *call) ns(arg []byte) (*cube.Namespace, error) {
	if c := cl.c; c != nil && string(arg) == string(c.nsName) {
		if ns := c.nsHit.Value(); ns != nil && !ns.Dropped() {
			cl.geo = ns.Geo()
			return ns, nil
		}
	}
	ns, err := cl.s.db.Namespace(string(arg))
	if err != nil {
		if errors.Is(err, cube.ErrNoNamespace) {
			return nil, &codeError{"NONS", fmt.Sprintf("namespace '%s' does not exist; create it with NS.CREATE %s DIMS d", arg, arg)}
		}
		return nil, err
	}
	if c := cl.c; c != nil {
		c.nsName, c.nsHit = append(c.nsName[:0], arg...), weak.Make(ns)
	}
	cl.geo = ns.Geo()
	return ns, nil
}

// coordArgs checks that a command on ns has exactly `groups` coordinates
// of ns's dimensions after the namespace, plus fixed trailing words and
// optional extras (extra < 0: any number of optional words), and returns
// the coordinate words' start index.
func (cl *call) coordCount(ns *cube.Namespace, groups, trailing int, optional bool) error {
	d := ns.Dims()
	want := 2 + groups*d + trailing
	n := len(cl.args)
	if n == want || (optional && n > want) {
		return nil
	}
	dims := fmt.Sprintf("%d dimension%s", d, plural(d))
	if ns.Geo() {
		dims = "GEO: each coordinate is longitude latitude"
	}
	return usageErr("wrong number of arguments for '%s' in namespace '%s' (%s): usage: %s",
		strings.ToLower(cl.cmd.Name), ns.Name(), dims, cl.cmd.Synopsis)
}

// coords opens every command on coordinates: it resolves the namespace
// in args[1], checks the number of words (one coordinate of its
// dimensions per name in what, trailing fixed words, and options if
// optional; see coordCount) and parses the coordinates, each named in
// messages by its word of what ("" for a command's only one). At most two.
func (cl *call) coords(trailing int, optional bool, what ...string) (*cube.Namespace, [2][]int32, error) {
	var cs [2][]int32
	ns, err := cl.ns(cl.args[1])
	if err != nil {
		return nil, cs, err
	}
	if err := cl.coordCount(ns, len(what), trailing, optional); err != nil {
		return nil, cs, err
	}
	d := ns.Dims()
	for i, w := range what {
		if cs[i], err = cl.coord(2+i*d, w, cl.buf[i][:d]); err != nil {
			return nil, cs, err
		}
	}
	return ns, cs, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// coord parses len(c) integers starting at args[i] or, in a geo
// namespace, a longitude and a latitude in decimal degrees, into c.
func (cl *call) coord(i int, what string, c []int32) ([]int32, error) {
	d := len(c)
	if cl.geo {
		return cl.degrees(i, what, c)
	}
	for k := range d {
		v, err := strconv.ParseInt(string(cl.args[i+k]), 10, 32)
		if err != nil {
			if what != "" {
				what += " "
			}
			return nil, usageErr("%scoordinate %d of %d is not a 32-bit integer: '%s'", what, k+1, d, clip(cl.args[i+k]))
		}
		c[k] = int32(v)
	}
	return c, nil
}

// degrees parses a longitude and a latitude in decimal degrees at
// args[i], exactly (cube.ParseDegrees: at most 7 decimals are kept),
// into c (of length 2), and checks their ranges.
func (cl *call) degrees(i int, what string, c []int32) ([]int32, error) {
	if what != "" {
		what += " "
	}
	for k, axis := range []struct {
		name string
		max  int32
	}{{"longitude", 180 * cube.GeoScale}, {"latitude", 90 * cube.GeoScale}} {
		v, err := cube.ParseDegrees(string(cl.args[i+k]))
		if err != nil || v < -axis.max || v > axis.max {
			return nil, usageErr("%s%s must be decimal degrees in -%d..%d (a GEO namespace takes longitude then latitude, e.g. 2.3522 48.8566 for Paris), got '%s'",
				what, axis.name, axis.max/cube.GeoScale, axis.max/cube.GeoScale, clip(cl.args[i+k]))
		}
		c[k] = v
	}
	return c, nil
}

// coordOut writes a coordinate of the command's namespace: integers, or
// in a geo namespace [longitude, latitude] as decimal strings, exact
// (2.3522 comes back as "2.3522").
func (cl *call) coordOut(c []int32) {
	if !cl.geo {
		cl.w.Coord(c)
		return
	}
	cl.w.Array(len(c))
	for _, x := range c {
		cl.w.BulkString(cube.FormatDegrees(x))
	}
}

func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

func parseCount(b []byte, what string) (int, error) {
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || v < 0 || v > math.MaxInt32 {
		return 0, usageErr("%s must be a non-negative integer, got '%s'", what, clip(b))
	}
	return int(v), nil
}

func parseDir(b []byte) (cube.Direction, bool) {
	switch strings.ToUpper(string(b)) {
	case "OUT":
		return cube.Out, true
	case "IN":
		return cube.In, true
	case "BOTH":
		return cube.Both, true
	}
	return 0, false
}

// options walks the optional words after position i: each keyword is
// looked up in opts (upper case), and takes that many values.
func (cl *call) options(i int, opts map[string]int, fn func(key string, vals [][]byte) error) error {
	for i < len(cl.args) {
		key := strings.ToUpper(string(cl.args[i]))
		n, ok := opts[key]
		if !ok {
			return usageErr("%s: unknown option '%s'; usage: %s", cl.cmd.Name, clip(cl.args[i]), cl.cmd.Synopsis)
		}
		if n > 0 && i+n >= len(cl.args) {
			return usageErr("%s: option %s needs a value; usage: %s", cl.cmd.Name, key, cl.cmd.Synopsis)
		}
		if err := fn(key, cl.args[i+1:i+1+n]); err != nil {
			return err
		}
		i += 1 + n
	}
	return nil
}

// codeError is an error reply with its own code instead of ERR.
type codeError struct{ code, msg string }

func (e *codeError) Error() string { return e.code + " " + e.msg }

// errorText turns an error into the text of a RESP error reply: an upper
// case code, then what was wrong and, where it helps, what to do.
func errorText(err error) string {
	var ce *codeError
	var ue *usageError
	if s, ok := progErrorText(err); ok {
		return s
	}
	if s, ok := replyText(err); ok {
		return s
	}
	switch {
	case errors.As(err, &ce):
		return ce.Error()
	case errors.As(err, &ue):
		return "ERR " + ue.msg
	case err == errNoAuth:
		return err.Error()
	case errors.Is(err, cube.ErrNoNamespace):
		return "NONS " + trim(err)
	case errors.Is(err, cube.ErrNamespaceExists):
		return "EXISTS " + trim(err)
	case errors.Is(err, cube.ErrFailed), errors.Is(err, cube.ErrReadOnly):
		return "READONLY " + trim(err)
	case errors.Is(err, cube.ErrClosed):
		return "SHUTDOWN the store is closed; the daemon is shutting down"
	case errors.Is(err, context.DeadlineExceeded):
		return "TIMEOUT " + trim(err)
	case errors.Is(err, context.Canceled):
		return "ERR cancelled: the daemon is shutting down"
	}
	return "ERR " + trim(err)
}

// trim drops the package prefix of an engine error: the client knows it
// is talking to cube.
func trim(err error) string {
	s := err.Error()
	s = strings.ReplaceAll(s, "engine: ", "")
	s = strings.ReplaceAll(s, "cube: ", "")
	return s
}

func protoText(err error) string {
	if errors.Is(err, resp.ErrTooLarge) {
		return strings.Replace(err.Error(), "resp: request too large: ", "request too large: ", 1)
	}
	return "Protocol error: " + strings.TrimPrefix(strings.TrimPrefix(err.Error(), "resp: protocol error: "), "resp: ")
}

func unknownText(args [][]byte) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ERR unknown command '%s', with args beginning with:", clip(args[0]))
	for i, a := range args[1:] {
		if i == 3 {
			break
		}
		fmt.Fprintf(&b, " '%s'", clip(a))
	}
	b.WriteString("; try HELP")
	return b.String()
}
