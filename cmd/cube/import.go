package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// importBatch is how many PUTs go in one pipeline; the daemon commits a
// pipeline's consecutive PUTs to one namespace as one transaction.
const importBatch = 1000

// importCommand: cube -n NS import [--dims d] [--format csv|jsonl] FILE.
type importCommand struct{ *env }

func (c *importCommand) Usage() string {
	return `usage: cube -n NS import [--dims d] [--format csv|jsonl] FILE

Loads values into namespace NS (created with --dims d if it does not exist).
CSV rows are c1,...,cd,value (a header row is skipped); JSON lines are
{"c":[c1,...,cd],"v":"text"} or {"c":[...],"vb64":"base64 bytes"} ("v" may be
any JSON value; it is stored as its JSON text). FILE "-" reads standard input.
Loads of more than a MiB show a progress bar on a terminal.
`
}

func (c *importCommand) Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.Usage = func() { fmt.Fprint(c.stderr, c.Usage()) }
	dims := fs.Int("dims", 0, "create the namespace with d dimensions")
	format := fs.String("format", "", "csv or jsonl (default: from the extension)")
	if err := fs.Parse(args); err != nil {
		return usagef("import: %v", err)
	}
	if fs.NArg() != 1 {
		return usagef("import needs one FILE\n%s", c.Usage())
	}
	ns, err := c.ns("import")
	if err != nil {
		return err
	}
	path := fs.Arg(0)
	if *format == "" {
		switch strings.ToLower(filepath.Ext(path)) {
		case ".csv":
			*format = "csv"
		case ".jsonl", ".ndjson", ".json":
			*format = "jsonl"
		default:
			return usagef("import: cannot tell the format of %s; pass --format csv or jsonl", path)
		}
	}
	var in io.Reader = c.stdin
	var size int64 = -1
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil {
			size = fi.Size()
		}
		in = f
	}
	if f, ok := c.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) && size > 1<<20 {
		bar := progressbar.NewOptions64(size, progressbar.OptionSetWriter(c.stderr),
			progressbar.OptionSetDescription("importing "+filepath.Base(path)),
			progressbar.OptionShowBytes(true), progressbar.OptionThrottle(100_000_000),
			progressbar.OptionClearOnFinish())
		defer bar.Finish()
		r := progressbar.NewReader(in, bar)
		in = &r
	}

	cl, done, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer done()
	if *dims > 0 {
		err := cl.Do(ctx, "NS.CREATE", ns, "DIMS", *dims).Err()
		if err != nil && !strings.HasPrefix(err.Error(), "EXISTS") {
			return err
		}
	}
	info, err := cl.Do(ctx, "NS.INFO", ns).Result()
	if err != nil {
		return fmt.Errorf("import: %w (create it with --dims d)", err)
	}
	d := int(info.(map[any]any)["dims"].(int64))

	n := 0
	pipe := cl.Pipeline()
	flush := func() error {
		cmds, err := pipe.Exec(ctx)
		for _, cmd := range cmds {
			if cmd.Err() != nil {
				return fmt.Errorf("import: %v: %w", cmd.Args(), cmd.Err())
			}
		}
		return err
	}
	put := func(line int, coord []string, value string) error {
		if len(coord) != d {
			return fmt.Errorf("import: line %d: %d coordinates, namespace %s has %d dimensions", line, len(coord), ns, d)
		}
		a := make([]any, 0, d+3)
		a = append(a, "PUT", ns)
		for _, x := range coord {
			a = append(a, x)
		}
		a = append(a, value)
		pipe.Do(ctx, a...)
		n++
		if n%importBatch == 0 {
			return flush()
		}
		return nil
	}
	switch *format {
	case "csv":
		r := csv.NewReader(bufio.NewReaderSize(in, 1<<16))
		r.FieldsPerRecord = -1
		r.ReuseRecord = true
		for line := 1; ; line++ {
			rec, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("import: %w", err)
			}
			if len(rec) < 2 {
				return fmt.Errorf("import: line %d: want c1,...,cd,value", line)
			}
			if _, err := strconv.ParseInt(strings.TrimSpace(rec[0]), 10, 32); err != nil {
				if line == 1 {
					continue // a header
				}
				return fmt.Errorf("import: line %d: %q is not an integer coordinate", line, rec[0])
			}
			coord := make([]string, len(rec)-1)
			for i := range coord {
				coord[i] = strings.TrimSpace(rec[i])
			}
			if err := put(line, coord, rec[len(rec)-1]); err != nil {
				return err
			}
		}
	case "jsonl":
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 1<<16), 64<<20)
		for line := 1; sc.Scan(); line++ {
			b := sc.Bytes()
			if len(strings.TrimSpace(string(b))) == 0 {
				continue
			}
			var rec struct {
				C    []json.Number   `json:"c"`
				V    json.RawMessage `json:"v"`
				VB64 string          `json:"vb64"`
			}
			if err := json.Unmarshal(b, &rec); err != nil {
				return fmt.Errorf("import: line %d: %w", line, err)
			}
			var value string
			switch {
			case rec.VB64 != "":
				v, err := base64.StdEncoding.DecodeString(rec.VB64)
				if err != nil {
					return fmt.Errorf("import: line %d: vb64: %w", line, err)
				}
				value = string(v)
			case len(rec.V) > 0 && rec.V[0] == '"':
				if err := json.Unmarshal(rec.V, &value); err != nil {
					return fmt.Errorf("import: line %d: %w", line, err)
				}
			default:
				value = string(rec.V)
			}
			coord := make([]string, len(rec.C))
			for i, x := range rec.C {
				coord[i] = x.String()
			}
			if err := put(line, coord, value); err != nil {
				return err
			}
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("import: %w", err)
		}
	default:
		return usagef("import: --format must be csv or jsonl")
	}
	if err := flush(); err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	fmt.Fprintf(c.stderr, "imported %d values into %s\n", n, ns)
	return nil
}
