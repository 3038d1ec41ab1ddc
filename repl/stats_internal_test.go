package repl

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/engine"
)

// TestLabelStatsWholeStore: an embedded store's statistics as a whole
// (what .stats shows with no namespace selected) become the labelled
// report: no Go field names, times with units.
//
// Seen to fail: with labelStats returning js unchanged for the "Engine"
// shape ("Engine": a Go field name).
func TestLabelStatsWholeStore(t *testing.T) {
	ctx := context.Background()
	db, err := cube.Open(t.TempDir(), cube.Options{Engine: engine.Options{Sync: engine.SyncNone}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.CreateNamespace(ctx, "w", engine.NamespaceOptions{Dims: 2}); err != nil {
		t.Fatal(err)
	}
	e := NewEmbedded(db)
	defer e.Close()
	js, err := e.Stats(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	out := string(labelStats(js))
	if m := regexp.MustCompile(`"[A-Z][A-Za-z0-9]*"\s*:`).FindString(out); m != "" {
		t.Errorf("labelled stats show a Go field name %s:\n%s", m, out)
	}
	for _, want := range []string{`"fsync_p50_us":`, `"sync_mode":`, `"name":"w"`} {
		if !strings.Contains(out, want) {
			t.Errorf("labelled stats lack %s:\n%s", want, out)
		}
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
}
