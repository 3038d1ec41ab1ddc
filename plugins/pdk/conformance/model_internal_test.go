package conformance

import "testing"

// TestModelAgrees checks the reference model against the cases whose
// expectations were written by hand, so the model-derived expectations of
// the larger cases rest on a checked model.
func TestModelAgrees(t *testing.T) {
	for _, c := range Cases() {
		out, pts, err := runModel(c)
		switch {
		case c.Hostile() && c.WantKind == 1: // vm.KindGuest: the model fails the same way
			if err == nil || err.Error() != c.WantMsg {
				t.Errorf("%s: model gives %q, %v; want error %q", c.Name, out, err, c.WantMsg)
			}
		case c.Hostile():
			// limits and read-only are the sandbox's business, not the model's
		case err != nil:
			t.Errorf("%s: model fails: %v", c.Name, err)
		case out != c.Want:
			t.Errorf("%s: model gives %q, want %q", c.Name, out, c.Want)
		case c.WantPoints != nil && RenderPoints(pts) != RenderPoints(c.WantPoints):
			t.Errorf("%s: model leaves\n%s\nwant\n%s", c.Name, RenderPoints(pts), RenderPoints(c.WantPoints))
		}
	}
}

func TestParseInt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"-0", 0, true}, {"007", 7, true}, {"-42", -42, true},
		{"999999999999999999", 999999999999999999, true}, {"-999999999999999999", -999999999999999999, true},
		{"1234567890123456789", 0, false}, {"", 0, false}, {"-", 0, false}, {"+5", 0, false},
		{"1.5", 0, false}, {" 1", 0, false}, {"1 ", 0, false}, {"abc", 0, false}, {"--1", 0, false},
	} {
		got, ok := parseInt([]byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseInt(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestNearDataDistinct: no two points of nearData lie at the same distance
// from a centre of the near queries, so a host's order among equal
// distances cannot change which points are nearest. Break caught: with
// the distinctness check removed from nearData, 0,0 has ties.
func TestNearDataDistinct(t *testing.T) {
	d := nearData()
	if len(d.Points) < 250 {
		t.Fatalf("only %d points", len(d.Points))
	}
	for _, c := range nearCentres {
		seen := map[int64][]int32{}
		for _, p := range d.Points {
			d2 := dist2(p.Coord, c)
			if q, ok := seen[d2]; ok {
				t.Fatalf("%v and %v are both at squared distance %d from %v", p.Coord, q, d2, c)
			}
			seen[d2] = p.Coord
		}
	}
}
