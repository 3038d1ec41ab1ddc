package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tiny is a run small enough for CI: every store, every query, every
// answer checked against the brute-force references.
func tiny(t *testing.T) config {
	return config{
		seed: 3, world: 64, points: 5000, flat: 2000, nodes: 500, queries: 5, gets: 200, reps: 1,
		sides: []int32{4, 16, 48}, radii: []float64{6}, flatR: []float64{5}, k: 10, hops: 3, maxHops: 4,
		stores: []string{"cube", "bbolt", "pebble", "sqlite", "redis"},
		dir:    t.TempDir(),
	}
}

// TestTinyRun runs the whole bench at a tiny size and looks at what it
// wrote. A wrong answer from any store fails it: with the skip-scan's
// row step (p[1]+1) changed to p[1]+2, bbolt's and Pebble's box queries
// came back short and the run failed.
func TestTinyRun(t *testing.T) {
	cfg := tiny(t)
	if !redisAvailable() {
		// CI installs it (.ci/install.d/server.sh); a developer's machine
		// may lack it, and then the run leaves Redis out.
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server is not installed, and CI must measure Redis")
		}
		t.Log("redis-server not found: Redis left out")
	}
	out := t.TempDir()
	if err := runAndReport(context.Background(), cfg, out); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	wants := []string{"| box side 16 |", "| shortest path <= 4 hops |", "cube", "bbolt", "Pebble"}
	if haveSQLite {
		wants = append(wants, "SQLite R*Tree")
	}
	for _, want := range wants {
		if !strings.Contains(string(md), want) {
			t.Errorf("results.md lacks %q:\n%s", want, md)
		}
	}
}

// TestReferencesCatchWrongAnswers: an answer one point short, or with a
// value of the wrong size, does not match its reference.
func TestReferencesCatchWrongAnswers(t *testing.T) {
	d := makeDataset(1, 1024, 2000, 0, 0)
	lo, hi := point{0, 0, 0}, point{511, 511, 511}
	ref := refBox(d.pts, lo, hi)
	if ref.n == 0 {
		t.Fatal("empty reference")
	}
	var full, short, badval answer
	skipped := false
	for _, p := range d.pts {
		if p[0] <= hi[0] && p[1] <= hi[1] && p[2] <= hi[2] {
			full.add(p, value(p))
			badval.add(p, value(p)[:50])
			if skipped {
				short.add(p, value(p))
			}
			skipped = true
		}
	}
	if !full.matches(ref) {
		t.Fatalf("the right answer %+v does not match %+v", full, ref)
	}
	if short.matches(ref) || badval.matches(ref) {
		t.Fatal("a wrong answer matches the reference")
	}
}
