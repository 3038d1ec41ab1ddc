package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"get (12,34) = 408",
		"region [100,100]..[163,163]: 4096 values, sum 70829056",
		"walk 3 hops of road from (0,0): 4 nodes, last [3 3] at depth 3",
		"shortest path (0,0) -> (10,10): 11 nodes, weight 10",
		`reopened: namespace "grid" has 65536 values and 11 edges`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
