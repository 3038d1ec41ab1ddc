package repl

import "testing"

func TestScanInput(t *testing.T) {
	tests := []struct {
		src         string
		open, empty bool
	}{
		{"", false, true},
		{"   \t", false, true},
		{"// comment", false, true},
		{"/* a */ /* b */", false, true},
		{"/* open", true, false},
		{"1 + 2", false, false},
		{"f(", true, false},
		{"f(\n1,\n2)", false, false},
		{"function f() {", true, false},
		{"function f() {\n return 1\n}", false, false},
		{"[1, [2,", true, false},
		{"{a: [1, 2]}", false, false},
		{"f())", false, false},   // stray closer: the engine reports it
		{"(]", false, false},     // mismatch: the engine reports it
		{"'{'", false, false},    // brackets in strings do not count
		{`"(\""`, false, false},  // escaped quote
		{"'abc", false, false},   // unterminated one-line string: an error, not more input
		{"'abc\\", true, false},  // escaped line end continues the string
		{"`a", true, false},      // template literals span lines
		{"`a\nb`", false, false}, //
		{"`${", true, false},     // inside a template's expression
		{"`${ {a: 1}.a }`", false, false},
		{"`${ `inner ${1}` }`", false, false},
		{"`${ `inner ${", true, false},
		{"x = /[(]/.test(s)", false, false}, // regex with a bracket
		{"x = /\\(/", false, false},         // escaped bracket in a regex
		{"a / b / (c", true, false},         // division, then an open paren
		{"return /{/", false, false},        // regex after a keyword
		{"f() / 2", false, false},           // division after a call
		{"s.split('/') // (", false, false}, // comment hides the bracket
		{"x = { // {\n", true, false},       // the comment's bracket does not count, the first does
		{"/* ( */ (1)", false, false},       //
		{"if (x) {\n} else {", true, false}, //
		{"a = 1 // end", false, false},      //
		{"é = (", true, false},              // non-ASCII identifiers
		{"x = 3 / (1 + 2) /* c */", false, false},
	}
	for _, tt := range tests {
		got := scanInput(tt.src)
		if got.open != tt.open || got.empty != tt.empty {
			t.Errorf("scanInput(%q) = %+v, want open=%v empty=%v", tt.src, got, tt.open, tt.empty)
		}
	}
}

// FuzzScanInput: any input, any bytes: no panic, and a complete input
// stays complete when more complete code follows on a new line if it was
// only white space.
func FuzzScanInput(f *testing.F) {
	for _, s := range []string{"f(", "`${`${", "/[/", "'\\", "/*", "a/b/c", "{[()]}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st := scanInput(s)
		if st.open && st.empty {
			t.Fatalf("scanInput(%q): open and empty", s)
		}
		if st2 := scanInput(s + "\n"); st2.empty != st.empty && !st.open {
			t.Fatalf("scanInput(%q) = %+v but with a newline %+v", s, st, st2)
		}
	})
}

func BenchmarkScanInput(b *testing.B) {
	src := "function f(a, b) {\n  const re = /[(]/g; // (\n  return `${a} ${b}`.replace(re, '(') + [1, 2, {x: 3}].length\n}"
	b.ReportAllocs()
	for b.Loop() {
		scanInput(src)
	}
}
