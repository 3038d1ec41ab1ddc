package wasm

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestABIDocumented keeps docs/ABI.md and abiFuncs in step: every function
// of cube_v1 has a prototype in §3's C listing and a row in its status
// table with as many parameters as its WebAssembly signature, and the
// document lists nothing the host lacks. Break caught: with the row of
// within_open removed from the table, the test names it.
func TestABIDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/ABI.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	var listed []string
	for _, m := range regexp.MustCompile(`CUBE_IMPORT\((\w+)\)\s+int32_t`).FindAllStringSubmatch(doc[strings.Index(doc, "## 3."):strings.Index(doc, "## 4.")], -1) {
		listed = append(listed, m[1])
	}
	rows := map[string]int{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(\\w+)\\(([^)]*)\\)`").FindAllStringSubmatch(doc, -1) {
		n := 0
		if strings.TrimSpace(m[2]) != "" {
			n = len(strings.Split(m[2], ","))
		}
		rows[m[1]] = n
	}
	var names []string
	for _, f := range abiFuncs {
		names = append(names, f.name)
		if !slices.Contains(listed, f.name) {
			t.Errorf("%s: no prototype in docs/ABI.md §3", f.name)
		}
		if n, ok := rows[f.name]; !ok {
			t.Errorf("%s: no row in docs/ABI.md §3's table", f.name)
		} else if n != len(f.params) {
			t.Errorf("%s: the table shows %d parameters, the host takes %d", f.name, n, len(f.params))
		}
	}
	for _, n := range listed {
		if !slices.Contains(names, n) {
			t.Errorf("docs/ABI.md lists %s, which cube_v1 does not have", n)
		}
	}
	for n := range rows {
		if !slices.Contains(names, n) {
			t.Errorf("docs/ABI.md's table has a row for %s, which cube_v1 does not have", n)
		}
	}
}
