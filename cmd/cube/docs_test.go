package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// docsRun turns TestDocCommands on: it runs every documented command,
// some of which download (the cities' rebuild) or need CI's tools, so the
// README's plain test command leaves it to CI (.ci/check.d/docs.sh).
var docsRun = flag.Bool("docs.run", false, "run TestDocCommands: every command of the documents, as written (CI's .ci/check.d/docs.sh does)")

var docsSlow = flag.Bool("docs.slow", false, "TestDocCommands also runs the documented commands that take tens of seconds (cube demo on every city, cube stress for 10 s); .ci/check.d/docs.sh does")

// The files whose commands TestDocCommands runs: every Markdown file a
// user reads, relative to the repository root.
var docGlobs = []string{"*.md", "docs/*.md", "examples/*.md", "examples/*/*.md", "plugins/pdk/*/*.md"}

// notTested is the marker that keeps a documented block out of the test,
// on a line of its own before the block's fence (blank lines between are
// allowed); the reason is shown as the skipped subtest's message:
//
//	<!-- not tested: needs clang and wasi-libc -->
var notTested = regexp.MustCompile(`^<!--\s*not tested:\s*(.*?)\s*-->\s*$`)

// A docCommand is one shell command of a fenced sh/console block.
type docCommand struct {
	file string // relative to the repository root
	line int    // of the command's first line in file
	text string // the command, continuation lines joined
	skip string // why it does not run, or ""
}

// parseDocCommands returns the commands of the ```sh, ```bash, ```shell
// and ```console blocks of a Markdown file, in order. In console blocks
// only lines starting with "$ " are commands (the rest is output). A line
// ending in a backslash continues on the next; lines that are only a
// comment are dropped.
func parseDocCommands(file, text string) []docCommand {
	var cmds []docCommand
	var inBlock, console bool
	skip := ""  // the reason of a not-tested marker waiting for its block
	block := "" // the current block's skip reason
	var cont *docCommand
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if !inBlock {
			if m := notTested.FindStringSubmatch(trimmed); m != nil {
				skip = m[1]
				continue
			}
			if lang, ok := strings.CutPrefix(trimmed, "```"); ok {
				inBlock = true
				switch strings.TrimSpace(lang) {
				case "sh", "bash", "shell":
					console = false
				case "console":
					console = true
				default:
					// Not a shell block: its lines are skipped below.
					console, inBlock = false, true
					block = "\x00" // not commands at all
					skip = ""
					continue
				}
				block, skip = skip, ""
				continue
			}
			if trimmed != "" {
				skip = "" // a marker applies to the block right after it
			}
			continue
		}
		if trimmed == "```" {
			inBlock, cont, block = false, nil, ""
			continue
		}
		if block == "\x00" {
			continue
		}
		if cont != nil {
			cont.text += " " + strings.TrimSpace(strings.TrimSuffix(trimmed, `\`))
			if !strings.HasSuffix(trimmed, `\`) {
				cont = nil
			}
			continue
		}
		if console {
			c, ok := strings.CutPrefix(trimmed, "$ ")
			if !ok {
				continue
			}
			trimmed = c
		}
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		cmds = append(cmds, docCommand{file: file, line: n, text: strings.TrimSpace(strings.TrimSuffix(trimmed, `\`)), skip: block})
		if strings.HasSuffix(trimmed, `\`) {
			cont = &cmds[len(cmds)-1]
		}
	}
	return cmds
}

// words splits a command as the shell would for the simple commands the
// documents use (single and double quotes, no expansions): enough to see
// which programs it runs and to recognise a few forms.
func words(s string) []string {
	var out []string
	var cur strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		case c == '#' && !in:
			i = len(s) // a comment to the end of the line
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// slowCommands take tens of seconds as written; they run with -docs.slow
// (CI's .ci/check.d/docs.sh), and TestDemo and TestStress run the same
// verbs on smaller sizes in the ordinary test run.
var slowCommands = []*regexp.Regexp{
	regexp.MustCompile(`^(\./)?cube demo\s*(#|$)`),
	regexp.MustCompile(`^go run \./cmd/cube demo\s*(#|$)`),
	regexp.MustCompile(`^(\./)?cube stress .*--duration`),
}

// toScript turns a document's commands into a testscript script run in a
// directory that holds the repository's tracked files (as symbolic links)
// and the built cube as ./cube and on PATH. The few forms that a script
// cannot run as they are:
//
//   - go build -o cube ./cmd/cube: the test built ./cube already;
//   - go run ./cmd/cube ARGS: runs the built cube with ARGS;
//   - go test ...: the test suite itself (or longer runs of it), which CI
//     runs; not run from inside it;
//   - CMD &: starts CMD in the background; for cube serve, the script
//     then waits for the daemon's socket. A daemon still running at the end
//     is interrupted; if the document shuts it down, the script checks that
//     it exited 0.
//
// Everything else runs as written through sh -c and must exit 0. It
// returns the script and the commands it skipped.
func toScript(cmds []docCommand) (string, []docCommand) {
	var b strings.Builder
	var skipped []docCommand
	background, shutdown := false, false
	for _, c := range cmds {
		w := words(c.text)
		if c.skip == "" {
			switch {
			case len(w) >= 2 && w[0] == "go" && w[1] == "test":
				c.skip = "the test suite itself: CI runs it (.ci/run)"
			case !*docsSlow && matchAny(slowCommands, c.text):
				c.skip = "takes tens of seconds; go test -run TestDocCommands ./cmd/cube -docs.slow runs it (CI does, .ci/check.d/docs.sh)"
			default:
				if p := missingProgram(c.text); p != "" && os.Getenv("CI") == "" {
					c.skip = p + " is not installed (CI installs it: .ci/install.d)"
				}
			}
		}
		if c.skip != "" {
			skipped = append(skipped, c)
			continue
		}
		fmt.Fprintf(&b, "# %s:%d: %s\n", c.file, c.line, strings.ReplaceAll(c.text, "\n", " "))
		text := c.text
		if len(w) >= 4 && w[0] == "go" && w[1] == "build" && w[2] == "-o" && w[3] == "cube" {
			b.WriteString("exists cube\n\n")
			continue
		}
		if rest, ok := strings.CutPrefix(text, "go run ./cmd/cube"); ok {
			text = "./cube" + rest
		}
		if bg, ok := strings.CutSuffix(strings.TrimSpace(stripComment(text)), "&"); ok {
			fmt.Fprintf(&b, "exec sh -c %s &\n", quoteScript("exec "+strings.TrimSpace(bg)))
			background = true
			if sock := serveSocket(words(bg)); sock != "" {
				fmt.Fprintf(&b, "waitsocket %s\n", quoteScript(sock))
			}
			b.WriteString("\n")
			continue
		}
		if len(w) >= 2 && (w[0] == "./cube" || w[0] == "cube") && strings.EqualFold(w[len(w)-1], "shutdown") {
			shutdown = true
		}
		fmt.Fprintf(&b, "exec sh -c %s\n\n", quoteScript(text))
	}
	if background && shutdown {
		b.WriteString("# the daemon the document started and shut down exited 0\nwait\n")
	}
	return b.String(), skipped
}

func matchAny(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// stripComment drops a trailing shell comment (outside quotes).
func stripComment(s string) string {
	quote := byte(0)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return s[:i]
		}
	}
	return s
}

// missingProgram names the first program of a pipeline that is not on
// PATH (cube, ./cube and the repository's scripts always are).
func missingProgram(text string) string {
	for _, part := range strings.Split(stripComment(text), "|") {
		w := words(part)
		for len(w) > 0 && strings.Contains(w[0], "=") {
			w = w[1:] // VAR=value prefixes
		}
		if len(w) == 0 || w[0] == "cube" || strings.Contains(w[0], "/") {
			continue // a path (./cube, examples/x.sh) is the repository's, not an installed program
		}
		if _, err := exec.LookPath(w[0]); err != nil {
			return w[0]
		}
	}
	return ""
}

// serveSocket is where "cube serve" listens, from its --data/-d and
// -s/--socket flags (default ./cube.data/cube.sock), or "" if w is not a
// cube serve.
func serveSocket(w []string) string {
	if len(w) == 0 || (w[0] != "./cube" && w[0] != "cube") || !contains(w, "serve") {
		return ""
	}
	data, sock := "cube.data", ""
	for i := 1; i < len(w); i++ {
		a := w[i]
		val := func() string {
			if _, v, ok := strings.Cut(a, "="); ok {
				return v
			}
			if i+1 < len(w) {
				i++
				return w[i]
			}
			return ""
		}
		switch {
		case a == "--data" || a == "-d" || strings.HasPrefix(a, "--data="):
			data = val()
		case a == "-s" || a == "--socket" || strings.HasPrefix(a, "--socket="):
			sock = val()
		}
	}
	if sock == "" {
		sock = filepath.Join(data, "cube.sock")
	}
	return sock
}

func contains(w []string, s string) bool {
	for _, x := range w {
		if x == s {
			return true
		}
	}
	return false
}

// quoteScript quotes s as one testscript word.
func quoteScript(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

var (
	builtCube     string
	builtCubeErr  error
	buildCubeOnce sync.Once
)

// buildCube builds cmd/cube once per test binary, without the race
// detector: the documents' commands run the binary a user builds.
func buildCube(t *testing.T, root string) string {
	t.Helper()
	buildCubeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cube-docs-bin")
		if err != nil {
			builtCubeErr = err
			return
		}
		builtCube = filepath.Join(dir, "cube")
		cmd := exec.Command("go", "build", "-o", builtCube, "./cmd/cube")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			builtCubeErr = fmt.Errorf("go build ./cmd/cube: %v\n%s", err, out)
		}
	})
	if builtCubeErr != nil {
		t.Fatal(builtCubeErr)
	}
	return builtCube
}

// trackedTopLevel lists the repository's top-level files and folders
// that git tracks (what a fresh clone has), or all of them outside git.
func trackedTopLevel(t *testing.T, root string) []string {
	seen := map[string]bool{}
	var names []string
	if out, err := exec.Command("git", "-C", root, "ls-files").Output(); err == nil && len(out) > 0 {
		for _, p := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			top, _, _ := strings.Cut(p, "/")
			if !seen[top] {
				seen[top] = true
				names = append(names, top)
			}
		}
		return names
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") && e.Name() != "cube" && e.Name() != "cube.data" {
			names = append(names, e.Name())
		}
	}
	return names
}

// TestDocCommands runs every shell command of the fenced sh and console
// blocks of README.md, docs/*.md and the other Markdown files (docGlobs),
// as written and in order, one testscript script per file, against the
// built cube in a directory holding the repository's tracked files: what a
// new user does on a fresh clone. Commands that download, need a
// toolchain the tests do not install, or run the suite itself are kept
// out and listed as skipped subtests (DocCommands/skipped/FILE:LINE) with
// the reason: see notTested, toScript and slowCommands.
//
// Breaks it caught, each tried on README.md and restored: "./cube -n world
// import --latlng examples/cities/cities.csv.gz --dimz 2" (a wrong flag:
// exit 2, the script fails at README.md's line); a program file the
// README registers that the repository does not ship (nearby.js, before
// examples/nearby/ held it); "./cube verify cube.data" while the README's
// daemon still served the store (verify refused it: in use).
func TestDocCommands(t *testing.T) {
	if !*docsRun {
		t.Skip("runs every documented command; -docs.run runs it (CI does: .ci/check.d/docs.sh)")
	}
	if testing.Short() {
		t.Skip("builds cube and runs the documents' commands (about 10 s)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, g := range docGlobs {
		m, err := filepath.Glob(filepath.Join(root, g))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	scripts := t.TempDir()
	var paths []string
	for _, f := range files {
		if strings.Contains(f, "node_modules") {
			continue
		}
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		cmds := parseDocCommands(filepath.ToSlash(rel), string(text))
		if len(cmds) == 0 {
			continue
		}
		script, skipped := toScript(cmds)
		for _, c := range skipped {
			t.Run(fmt.Sprintf("skipped/%s:%d", c.file, c.line), func(t *testing.T) {
				t.Skipf("%s: %s", c.text, c.skip)
			})
		}
		if strings.TrimSpace(script) == "" {
			continue
		}
		name := strings.TrimSuffix(strings.ReplaceAll(filepath.ToSlash(rel), "/", "_"), ".md")
		p := filepath.Join(scripts, name+".txtar")
		if err := os.WriteFile(p, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	if len(paths) == 0 {
		t.Fatal("no documented commands found: the Markdown files moved?")
	}
	cube := buildCube(t, root)
	top := trackedTopLevel(t, root)
	testscript.Run(t, testscript.Params{
		Files: paths,
		Setup: func(env *testscript.Env) error {
			for _, name := range top {
				if err := os.Symlink(filepath.Join(root, name), filepath.Join(env.WorkDir, name)); err != nil {
					return err
				}
			}
			bin := filepath.Join(env.WorkDir, ".bin")
			if err := os.Mkdir(bin, 0o755); err != nil {
				return err
			}
			for _, p := range []string{filepath.Join(env.WorkDir, "cube"), filepath.Join(bin, "cube")} {
				if err := os.Symlink(cube, p); err != nil {
					return err
				}
			}
			env.Setenv("PATH", bin+string(os.PathListSeparator)+env.Getenv("PATH"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// waitsocket PATH: until a daemon answers on the Unix socket PATH
			// (30 s at most).
			"waitsocket": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: waitsocket PATH")
				}
				sock := ts.MkAbs(args[0])
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				for {
					var d net.Dialer
					c, err := d.DialContext(ctx, "unix", sock)
					if err == nil {
						c.Close()
						return
					}
					if ctx.Err() != nil {
						ts.Fatalf("no daemon answered at %s within 30 s: %v", args[0], err)
					}
					time.Sleep(20 * time.Millisecond)
				}
			},
		},
	})
}

// TestParseDocCommands checks the extraction on a document with every
// form: a sh block with comments and a continuation, a console block with
// output, a marked block and a non-shell block. Breaks it caught: a
// marker that leaked onto the next block (the "go build" block showed as
// skipped), continuation lines kept as commands of their own.
func TestParseDocCommands(t *testing.T) {
	doc := "intro\n" +
		"```sh\n" +
		"./cube put w 1 2 x      # a comment\n" +
		"                        # only a comment\n" +
		"clang -O2 \\\n" +
		"      -o x.wasm x.c\n" +
		"```\n" +
		"<!-- not tested: needs clang -->\n" +
		"\n" +
		"```sh\n" +
		"clang x.c\n" +
		"```\n" +
		"```console\n" +
		"$ ./cube get w 1 2\n" +
		"x\n" +
		"```\n" +
		"```go\n" +
		"db, err := cube.Open(dir)\n" +
		"```\n" +
		"```sh\n" +
		"go build -o cube ./cmd/cube\n" +
		"```\n"
	got := parseDocCommands("d.md", doc)
	want := []docCommand{
		{"d.md", 3, "./cube put w 1 2 x      # a comment", ""},
		{"d.md", 5, "clang -O2 -o x.wasm x.c", ""},
		{"d.md", 11, "clang x.c", "needs clang"},
		{"d.md", 14, "./cube get w 1 2", ""},
		{"d.md", 21, "go build -o cube ./cmd/cube", ""},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("parsed\n%v\nwant\n%v", got, want)
	}
	if s := serveSocket(words("./cube serve --data d &")); s != "d/cube.sock" {
		t.Errorf("socket of serve --data d: %q", s)
	}
	if s := serveSocket(words("./cube serve -s /tmp/x.sock")); s != "/tmp/x.sock" {
		t.Errorf("socket of serve -s: %q", s)
	}
	script, _ := toScript([]docCommand{{"d.md", 1, "./cube serve --data d &   # the daemon", ""}, {"d.md", 2, "printf 'a''b' | ./cube x", ""}})
	for _, want := range []string{"exec sh -c 'exec ./cube serve --data d' &\nwaitsocket 'd/cube.sock'\n", "exec sh -c 'printf ''a''''b'' | ./cube x'\n"} {
		if !strings.Contains(script, want) {
			t.Errorf("script lacks %q:\n%s", want, script)
		}
	}
}

// fileMarker, on a line of its own before a fenced block, says the block
// is the whole of a file the repository ships (path from its root), so a
// reader can run the commands that name the file:
//
//	<!-- file: vm/wasm/testdata/c_sum.c -->
var fileMarker = regexp.MustCompile(`^<!--\s*file:\s*(\S+)\s*-->\s*$`)

// docFileBlocks returns, for each fileMarker of text, the file it names
// and the text of the fenced block that follows it.
func docFileBlocks(text string) (map[string]string, error) {
	blocks := map[string]string{}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		m := fileMarker.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if m == nil {
			continue
		}
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
			j++
		}
		if j == len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[j]), "```") {
			return nil, fmt.Errorf("line %d: %s is not followed by a fenced block", i+1, m[0])
		}
		var body strings.Builder
		k := j + 1
		for ; k < len(lines) && strings.TrimSpace(lines[k]) != "```"; k++ {
			body.WriteString(lines[k] + "\n")
		}
		if k == len(lines) {
			return nil, fmt.Errorf("line %d: the block after %s never closes", j+1, m[0])
		}
		blocks[m[1]] = body.String()
		i = k
	}
	return blocks, nil
}

// TestDocFiles checks that every block a document marks as a shipped file
// (fileMarker) is that file, byte for byte, so the commands that build or
// run it work on what the reader sees. Break it caught: a line changed in
// docs/ABI.md's C plugin block and not in vm/wasm/testdata/c_sum.c.
func TestDocFiles(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range docGlobs {
		files, err := filepath.Glob(filepath.Join(root, g))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.Contains(f, "node_modules") {
				continue
			}
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root, f)
			blocks, err := docFileBlocks(string(text))
			if err != nil {
				t.Errorf("%s: %v", rel, err)
				continue
			}
			for path, body := range blocks {
				n++
				want, err := os.ReadFile(filepath.Join(root, path))
				if err != nil {
					t.Errorf("%s shows %s, which the repository does not ship: %v", rel, path, err)
					continue
				}
				if body != string(want) {
					t.Errorf("%s's block for %s differs from the file: make them the same", rel, path)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no file blocks found: docs/ABI.md shows vm/wasm/testdata/c_sum.c")
	}
}
