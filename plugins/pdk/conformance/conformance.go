package conformance

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/vmtest"
)

// The programs every guest language implements.
const (
	Aggregate = "aggregate"
	Walk      = "walk"
	Writer    = "writer"
	Kitcheck  = "kitcheck"
)

// Programs lists the programs in a stable order.
func Programs() []string { return []string{Aggregate, Walk, Writer, Kitcheck} }

// Data is what a namespace holds before a case runs.
type Data struct {
	Dims   int
	Points []vm.Point
	Edges  []vm.Edge
}

// Case is one row of the table: a program run on data with arguments and
// limits, and what must come of it.
type Case struct {
	Name    string
	Program string
	Data    Data
	Args    []byte
	Limits  vm.Limits // applied when the program is compiled for this case
	// Want is the expected output of a successful run.
	Want string
	// WantKind, if non-zero, is the error kind the run must end with;
	// WantMsg, if set, must appear in the error's message.
	WantKind vm.ErrorKind
	WantMsg  string
	// WantPoints is the namespace's values after a successful run, in any
	// order; nil means unchanged. After a failed run the namespace must
	// always be unchanged.
	WantPoints []vm.Point
	// EngineBug, if set, names a known bug of the real engine that makes
	// this case fail there; the engine test skips the case, saying so.
	EngineBug string
}

// Outcome is what one run of a case produced, in a form that compares with ==
// across languages and hosts.
type Outcome struct {
	Output string
	Kind   vm.ErrorKind
	Msg    string // the error's message (empty on success)
	// Points is the namespace's values after the run (committed on success,
	// rolled back on failure), one "coord=value" per line in coordinate
	// order.
	Points string
}

// String renders the outcome for failure messages.
func (o Outcome) String() string {
	if o.Kind != 0 {
		return fmt.Sprintf("error %v: %q", o.Kind, o.Msg)
	}
	return fmt.Sprintf("output %q", o.Output)
}

// Same reports whether two outcomes agree: same output, same error kind, and
// the same data afterwards. Messages are compared only for guest errors,
// which the programs word themselves; a trap or limit is worded by the
// runtime.
func (o Outcome) Same(p Outcome) bool {
	if o.Output != p.Output || o.Kind != p.Kind || o.Points != p.Points {
		return false
	}
	return o.Kind != vm.KindGuest || o.Msg == p.Msg
}

// Check compares an outcome with the case's expectation.
func (c Case) Check(o Outcome) error {
	switch {
	case c.WantKind != 0 && o.Kind != c.WantKind:
		return fmt.Errorf("%w: %s: got %v, want error %v", ErrMismatch, c.Name, o, c.WantKind)
	case c.WantKind == 0 && o.Kind != 0:
		return fmt.Errorf("%w: %s: got %v, want output %q", ErrMismatch, c.Name, o, c.Want)
	case c.WantKind == 0 && o.Output != c.Want:
		return fmt.Errorf("%w: %s: got output %q, want %q", ErrMismatch, c.Name, o.Output, c.Want)
	case c.WantMsg != "" && !strings.Contains(o.Msg, c.WantMsg):
		return fmt.Errorf("%w: %s: got message %q, want it to contain %q", ErrMismatch, c.Name, o.Msg, c.WantMsg)
	}
	want := c.Data.Points
	if c.WantKind == 0 && c.WantPoints != nil {
		want = c.WantPoints
	}
	if w := RenderPoints(want); o.Points != w {
		return fmt.Errorf("%w: %s: data after the run:\n%s\nwant:\n%s", ErrMismatch, c.Name, o.Points, w)
	}
	return nil
}

// Loader is what Load needs of a host; every vm.Host is one.
type Loader interface {
	Put(ctx context.Context, c []int32, value []byte) error
	Link(ctx context.Context, e vm.Edge) error
}

// Load writes the case's data into h (a vmtest host, or an adapter over a
// real namespace).
func (d Data) Load(ctx context.Context, h Loader) error {
	for _, p := range d.Points {
		if err := h.Put(ctx, p.Coord, p.Value); err != nil {
			return fmt.Errorf("load %v: %w", p.Coord, err)
		}
	}
	for _, e := range d.Edges {
		if err := h.Link(ctx, e); err != nil {
			return fmt.Errorf("load edge %v -> %v: %w", e.From, e.To, err)
		}
	}
	return nil
}

// RenderPoints renders points in coordinate order, one "coord=value" a line,
// so that two sets of points compare as strings.
func RenderPoints(ps []vm.Point) string {
	h := vmtest.NewHost(1)
	if len(ps) > 0 {
		h = vmtest.NewHost(len(ps[0].Coord))
	}
	for _, p := range ps {
		_ = h.Put(context.Background(), p.Coord, p.Value)
	}
	return renderSnapshot(h.Snapshot())
}

func renderSnapshot(s vmtest.Snapshot) string {
	var b strings.Builder
	for _, p := range s.Points {
		fmt.Fprintf(&b, "%v=%q\n", p.Coord, p.Value)
	}
	return b.String()
}

// Run runs one case against p on a fresh vmtest host holding the case's
// data, inside a transaction that commits on success and rolls back on
// failure, as the registry does.
func Run(ctx context.Context, p vm.Program, c Case) (Outcome, error) {
	h := vmtest.NewHost(c.Data.Dims)
	if err := c.Data.Load(ctx, h); err != nil {
		return Outcome{}, err
	}
	tx := h.Begin()
	if c.Limits.ReadOnly {
		tx.SetReadOnly(true)
	}
	res, err := p.Run(ctx, tx, c.Args)
	var o Outcome
	if err != nil {
		var e *vm.Error
		if !errors.As(err, &e) {
			return Outcome{}, fmt.Errorf("run %s: not a vm error: %w", c.Name, err)
		}
		o.Kind, o.Msg = e.Kind, e.Msg
		if err := tx.Rollback(); err != nil {
			return Outcome{}, err
		}
	} else {
		o.Output = string(res.Output)
		if err := tx.Commit(); err != nil {
			return Outcome{}, err
		}
	}
	o.Points = renderSnapshot(h.Snapshot())
	return o, nil
}

// Coords encodes coordinates as the ABI does: consecutive little-endian
// int32s.
func Coords(cs ...int32) []byte {
	b := make([]byte, 4*len(cs))
	for i, c := range cs {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(c))
	}
	return b
}
