package repl

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// The names the completer offers after "cube.", after a graph query step
// and after cube.region(...) or cube.within(...). They mirror vm/js's API (vm/js/cube.go,
// gizmo.go, region.go).
var (
	cubeMembers   = []string{"V", "args", "argsBytes", "del", "dims", "edges", "geo", "get", "getBytes", "getJSON", "link", "log", "nearby", "path", "put", "putJSON", "region", "unlink", "walk", "within"}
	gizmoMethods  = []string{"all", "both", "count", "first", "has", "in", "limit", "out", "values"}
	regionMethods = []string{"columns", "count", "next", "return", "toArray"}
	// jsGlobals are offered for a bare word, with the session's own names.
	jsGlobals = []string{
		"Array", "BigInt", "Boolean", "Date", "Error", "JSON", "Map", "Math", "Number", "Object",
		"Promise", "RegExp", "Set", "String", "Symbol", "Uint8Array", "break", "const", "continue",
		"cube", "else", "false", "for", "function", "if", "isNaN", "let", "null", "parseFloat",
		"parseInt", "return", "true", "typeof", "undefined", "var", "while",
	}
)

// gizmoSteps are the calls that return a graph query.
var gizmoSteps = map[string]bool{"V": true, "out": true, "in": true, "both": true, "has": true, "limit": true}

// completer completes the word before the cursor: dot-commands and their
// arguments (namespaces, programs, on/off, files), members of cube, of a
// graph query and of a region iterator, and bare names (globals and the
// names the session's inputs declared).
type completer struct {
	ev       Evaluator
	ns       func() string
	declared map[string]bool
}

// declRe finds the names an input declares at its top level (roughly).
var declRe = regexp.MustCompile(`(?:\bfunction\*?|\bclass|\bconst|\blet|\bvar)\s+([A-Za-z_$][\w$]*)`)

// learn remembers the names src declares, for completion.
func (c *completer) learn(src string) {
	if c.declared == nil {
		c.declared = map[string]bool{}
	}
	for _, m := range declRe.FindAllStringSubmatch(src, -1) {
		c.declared[m[1]] = true
	}
}

// complete implements liner's WordCompleter: head and tail are kept, the
// completions replace what lies between.
func (c *completer) complete(ctx context.Context, line string, pos int) (head string, completions []string, tail string) {
	if pos > len(line) {
		pos = len(line)
	}
	before, tail := line[:pos], line[pos:]
	if isDotCommand(before) || strings.TrimSpace(before) == "." {
		return c.completeCommand(ctx, before, tail)
	}
	// The word being typed: identifier characters back from the cursor.
	i := len(before)
	for i > 0 && isIdentByte(before[i-1]) {
		i--
	}
	word := before[i:]
	head = before[:i]
	var cands []string
	if i > 0 && before[i-1] == '.' {
		cands = membersOf(before[:i-1])
	} else {
		cands = append(cands, jsGlobals...)
		for n := range c.declared {
			cands = append(cands, n)
		}
	}
	return head, withPrefix(cands, word), tail
}

// membersOf guesses what the expression ending at the end of s is and
// returns the names worth offering after its dot.
func membersOf(s string) []string {
	if strings.HasSuffix(s, ")") {
		// Find the call's name: skip back to the matching (.
		depth := 0
		j := len(s) - 1
		for ; j >= 0; j-- {
			switch s[j] {
			case ')', ']', '}':
				depth++
			case '(', '[', '{':
				depth--
			}
			if depth == 0 {
				break
			}
		}
		if j <= 0 {
			return nil
		}
		k := j
		for k > 0 && isIdentByte(s[k-1]) {
			k--
		}
		fn := s[k:j]
		switch {
		case (fn == "region" || fn == "within") && k > 0 && s[k-1] == '.':
			return regionMethods
		case gizmoSteps[fn] && k > 0 && s[k-1] == '.':
			return gizmoMethods
		}
		return nil
	}
	k := len(s)
	for k > 0 && isIdentByte(s[k-1]) {
		k--
	}
	if s[k:] == "cube" && (k == 0 || s[k-1] != '.') {
		return cubeMembers
	}
	return nil
}

func (c *completer) completeCommand(ctx context.Context, before, tail string) (string, []string, string) {
	lead := before[:len(before)-len(strings.TrimLeft(before, " \t"))]
	s := strings.TrimLeft(before, " \t")
	name, rest, hasArgs := strings.Cut(s[1:], " ")
	if !hasArgs {
		var names []string
		for _, cmd := range commandTable() {
			names = append(names, "."+cmd.name)
		}
		return lead, withPrefix(names, "."+name), tail
	}
	cmd := lookupCommand(name)
	if cmd == nil {
		return before, nil, tail
	}
	// Which argument is being typed, and what precedes it.
	fields := strings.Fields(rest)
	word := ""
	if !strings.HasSuffix(rest, " ") && len(fields) > 0 {
		word = fields[len(fields)-1]
		fields = fields[:len(fields)-1]
	}
	head := before[:len(before)-len(word)]
	kind := argNone
	switch {
	case len(fields) == 0:
		kind = cmd.complete
	case len(fields) == 1 && name == "prog":
		kind = argFile
	}
	var cands []string
	switch kind {
	case argNamespace:
		if nss, err := c.ev.Namespaces(ctx); err == nil {
			for _, n := range nss {
				cands = append(cands, n.Name)
			}
		}
	case argProgram:
		if ns := c.ns(); ns != "" {
			if ps, err := c.ev.Programs(ctx, ns); err == nil {
				for _, p := range ps {
					cands = append(cands, p.Name)
				}
			}
		}
	case argOnOff:
		cands = []string{"on", "off"}
	case argLimit:
		cands = []string{"off"}
	case argFile:
		return head, completeFile(word), tail
	}
	return head, withPrefix(cands, word), tail
}

// completeFile offers the files and directories that start with word.
func completeFile(word string) []string {
	matches, _ := filepath.Glob(globEscape(word) + "*")
	for i, m := range matches {
		if fi, err := os.Stat(m); err == nil && fi.IsDir() {
			matches[i] = m + string(filepath.Separator)
		}
	}
	return matches
}

func globEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)
	return r.Replace(s)
}

// withPrefix returns the sorted, distinct candidates that start with p.
func withPrefix(cands []string, p string) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range cands {
		if strings.HasPrefix(c, p) && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}
