package conformance_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/cubelinux/cube/plugins/pdk/conformance"
	"github.com/cubelinux/cube/vm"
)

// TestCheck shows that Check tells a right outcome from wrong ones, so the
// table cannot pass by accident.
func TestCheck(t *testing.T) {
	for _, c := range conformance.Cases() {
		pts := c.WantPoints
		if c.Hostile() || pts == nil {
			pts = c.Data.Points
		}
		good := conformance.Outcome{Output: c.Want, Kind: c.WantKind, Msg: c.WantMsg, Points: conformance.RenderPoints(pts)}
		if err := c.Check(good); err != nil {
			t.Errorf("%s: the expected outcome fails: %v", c.Name, err)
		}
		bad := []conformance.Outcome{
			{Output: c.Want + "x", Kind: c.WantKind, Msg: c.WantMsg, Points: good.Points},
			{Output: c.Want, Kind: c.WantKind + 1, Msg: c.WantMsg, Points: good.Points},
			{Output: c.Want, Kind: c.WantKind, Msg: c.WantMsg, Points: good.Points + "[1]=\"extra\"\n"},
		}
		if c.Hostile() {
			bad[0] = conformance.Outcome{Output: "ok", Points: good.Points} // succeeded instead
			if c.WantMsg != "" {
				bad = append(bad, conformance.Outcome{Kind: c.WantKind, Msg: "other", Points: good.Points})
			}
		}
		for i, o := range bad {
			if err := c.Check(o); !errors.Is(err, conformance.ErrMismatch) {
				t.Errorf("%s: wrong outcome %d passes: %v", c.Name, i, err)
			}
		}
	}
}

// TestTable checks the table's shape: every program has successful and
// failing cases, names are unique, hostile cases name their kind.
func TestTable(t *testing.T) {
	names := map[string]bool{}
	ok, hostile := map[string]int{}, map[string]int{}
	for _, c := range conformance.Cases() {
		if names[c.Name] {
			t.Errorf("duplicate case %q", c.Name)
		}
		names[c.Name] = true
		if c.Hostile() {
			hostile[c.Program]++
		} else {
			ok[c.Program]++
			if c.Want == "" {
				t.Errorf("%s: no expected output", c.Name)
			}
		}
	}
	for _, p := range conformance.Programs() {
		if ok[p] == 0 || hostile[p] == 0 {
			t.Errorf("%s: %d successful and %d failing cases", p, ok[p], hostile[p])
		}
	}
}

// TestLimitsKinds: the hostile subset covers a guest error, a limit and a
// read-only write.
func TestLimitsKinds(t *testing.T) {
	kinds := map[vm.ErrorKind]bool{}
	for _, c := range conformance.Cases() {
		kinds[c.WantKind] = true
	}
	for _, k := range []vm.ErrorKind{vm.KindGuest, vm.KindOutputLimit, vm.KindWriteLimit, vm.KindReadOnly} {
		if !kinds[k] {
			t.Errorf("no case fails with %v", k)
		}
	}
}

// TestJSExample runs a case end to end through Sandboxes and Run with a
// JavaScript program written here, the way the examples' tests do.
func TestJSExample(t *testing.T) {
	ctx := context.Background()
	sb, err := conformance.NewSandboxes(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	path := t.TempDir() + "/aggregate.js"
	writeFile(t, path, `function run() {
	  const a = new DataView(cube.argsBytes.buffer), d = cube.dims, min = [], max = [];
	  if (cube.argsBytes.length !== 8 * d) throw new Error("aggregate: bad arguments");
	  for (let i = 0; i < d; i++) { min.push(a.getInt32(4 * i, true)); max.push(a.getInt32(4 * (d + i), true)); }
	  let sum = 0n, count = 0;
	  for (const p of cube.region(min, max)) if (/^-?[0-9]{1,18}$/.test(p.v)) { sum = BigInt.asIntN(64, sum + BigInt(p.v)); count++; }
	  return "sum=" + sum + " count=" + count;
	}`)
	for _, c := range conformance.Cases() {
		if c.Program != conformance.Aggregate {
			continue
		}
		p, err := sb.Program(ctx, path, c.Limits)
		if err != nil {
			t.Fatal(err)
		}
		o, err := conformance.Run(ctx, p, c)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Check(o); err != nil {
			t.Error(err)
		}
	}
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
