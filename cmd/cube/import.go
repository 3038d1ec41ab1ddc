package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/cubelinux/cube"
)

// importBatch is how many PUTs go in one pipeline; the daemon commits a
// pipeline's consecutive PUTs to one namespace as one transaction.
const importBatch = 1000

// defaultLatLngScale makes --latlng coordinates degrees x 10^4 (about
// 11 m), as cube demo stores the cities, so the two answer the same
// queries; the bundled cities have 4 decimals, so nothing is lost.
const defaultLatLngScale = 1e4

// importCommand is "cube import -n NS [--dims d] [--format csv|jsonl] [--latlng | --geo] FILE".
type importCommand struct {
	*env
	dims   int
	format string
	latlng bool
	geo    bool
	scale  float64
}

func importCmd(e *env) *cobra.Command {
	c := &importCommand{env: e}
	cmd := &cobra.Command{
		Use:   "import -n NS [--dims d] [--format csv|jsonl] [--geo | --latlng [--scale s]] FILE",
		Short: "Load CSV or JSON lines into a namespace",
		Long: `Loads values into namespace NS (created with --dims d if it does not exist).
CSV rows are c1,...,cd,value (a header row is skipped); JSON lines are
{"c":[c1,...,cd],"v":"text"} or {"c":[...],"vb64":"base64 bytes"} ("v" may be
any JSON value; it is stored as its JSON text). FILE "-" reads standard input;
a FILE ending in .gz is decompressed. Flags may come before or after FILE.

--geo reads a CSV whose header names a lat and a lng (or lon) column, as
examples/cities/cities.csv.gz does, into a GEO namespace (created as one if
it does not exist): each row is stored at (lng, lat) in degrees, exactly
to 7 decimals, with the other columns as a JSON object for its value
({"country":"FR","name":"Paris"}); NEARBY and WITHIN on it measure metres:
  cube -n world import --geo examples/cities/cities.csv.gz
  cube within world 2.3522 48.8566 50000 COUNT

--latlng reads the same CSV into a plain 2-dimensional namespace, at
(lng, lat) in degrees x s (--scale, default 10000: about 11 m), the way
cube demo stores its world namespace:
  cube import -n world --latlng examples/cities/cities.csv.gz

The whole file is checked before anything is written: a bad row anywhere
stores nothing, and the error names its line. Rows are then written in
transactions of 1000; should the store or the daemon fail during the
load, the error names the line and says how many rows are stored (and
which lines may be, when the daemon went away before it answered).
Loads of more than a MiB show a progress bar on a terminal.`,
		Example: `  cube import -n pts --dims 2 points.csv
  cube -n world import --geo examples/cities/cities.csv.gz
  cube import -n grid --latlng examples/cities/cities.csv.gz
  cat points.jsonl | cube import -n pts --dims 2 --format jsonl -`,
		Args: withNamespace(e, argCount(1, 1, "one FILE")),
		RunE: func(cmd *cobra.Command, args []string) error { return c.Run(cmd.Context(), args[0]) },
	}
	f := cmd.Flags()
	f.IntVar(&c.dims, "dims", 0, "create the namespace with d dimensions")
	f.StringVar(&c.format, "format", "", "csv or jsonl (default: from the extension)")
	f.BoolVar(&c.geo, "geo", false, "CSV with lat and lng columns into a GEO namespace: (lng, lat) in degrees, exact")
	f.BoolVar(&c.latlng, "latlng", false, "CSV with lat and lng columns, stored at (lng, lat) x --scale")
	f.Float64Var(&c.scale, "scale", defaultLatLngScale, "--latlng: coordinate units per degree")
	return cmd
}

// importRow is one row of the input: where its coordinate starts in the
// file, the coordinate and the value.
type importRow struct {
	line  int
	coord []int32
	value []byte
}

// importer reads one input format.
type importer struct {
	format string  // csv or jsonl
	latlng bool    // csv with lat and lng columns
	geo    bool    // --geo: latlng, exact degrees into a GEO namespace
	scale  float64 // --latlng: coordinate units per degree
}

// Run loads the file at path ("-": standard input).
func (c *importCommand) Run(ctx context.Context, path string) error {
	ns, err := c.ns("import")
	if err != nil {
		return err
	}
	im := importer{format: c.format, latlng: c.latlng || c.geo, geo: c.geo, scale: c.scale}
	if c.geo {
		if c.latlng {
			return usagef("import: --geo and --latlng do not go together: --geo stores degrees exactly in a GEO namespace, --latlng degrees x --scale in a plain one")
		}
		if c.scale != defaultLatLngScale {
			return usagef("import: --geo stores degrees exactly (1e-7 degree); drop --scale")
		}
		im.scale = cube.GeoScale
	}
	if im.latlng {
		if im.format == "jsonl" {
			return usagef("import: --latlng and --geo read CSV, not --format jsonl")
		}
		if c.dims != 0 && c.dims != 2 {
			return usagef("import: --latlng and --geo make 2 coordinates (lng, lat); drop --dims %d", c.dims)
		}
		if !(im.scale > 0) || 180*im.scale > math.MaxInt32 {
			return usagef("import: --scale must be above 0 and at most %d, so that 180 degrees fits a 32-bit coordinate", math.MaxInt32/180)
		}
		im.format, c.dims = "csv", 2
	}
	if im.format == "" {
		switch strings.ToLower(filepath.Ext(strings.TrimSuffix(strings.ToLower(path), ".gz"))) {
		case ".csv":
			im.format = "csv"
		case ".jsonl", ".ndjson", ".json":
			im.format = "jsonl"
		default:
			return usagef("import: cannot tell the format of %s; pass --format csv or jsonl", path)
		}
	}
	if im.format != "csv" && im.format != "jsonl" {
		return usagef("import: --format must be csv or jsonl")
	}

	// The whole input is read twice: once to check every row, then to
	// load it. Standard input is kept in a temporary file in between.
	src, cleanup, err := c.source(path)
	if err != nil {
		return err
	}
	defer cleanup()

	// Pass 1: every row parses, and all have as many coordinates.
	var rows, rowDims, firstLine, bigLine, big int
	err = src(func(r io.Reader) error {
		return im.rows(r, func(row importRow) error {
			if rows == 0 {
				rowDims, firstLine = len(row.coord), row.line
			} else if len(row.coord) != rowDims {
				return fmt.Errorf("line %d: %d coordinates, but line %d has %d", row.line, len(row.coord), firstLine, rowDims)
			}
			if len(row.value) > big {
				big, bigLine = len(row.value), row.line
			}
			rows++
			return nil
		})
	}, "checking")
	if err != nil {
		return fmt.Errorf("import: %w; nothing was stored", err)
	}
	if rows == 0 {
		return fmt.Errorf("import: %s has no rows; nothing was stored", path)
	}

	// The namespace: its dimensions and value limit against the file's.
	if c.dims == 0 && !c.viaDaemon() && !hasStore(c.dataDir()) {
		// A new store has no namespaces: refuse before making one.
		return usagef("import: namespace %s does not exist (there is no store at %s yet); create it with --dims %d (the file's rows have %d coordinates)", ns, c.dataDir(), rowDims, rowDims)
	}
	cl, done, err := c.connectCreating(ctx)
	if err != nil {
		return err
	}
	defer done()
	d, maxValue, exists, geo, err := nsInfo(ctx, cl, ns)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	switch {
	case exists && geo && !im.geo:
		return usagef("import: namespace %s is GEO (longitude latitude in degrees): import a CSV with lat and lng columns into it with --geo", ns)
	case exists && !geo && im.geo:
		return usagef("import: namespace %s exists and is not GEO; --geo imports into a GEO namespace (pick a new name and it is created as one), --latlng into a plain one", ns)
	case !exists && c.dims == 0:
		return usagef("import: namespace %s does not exist; create it with --dims %d (the file's rows have %d coordinates)", ns, rowDims, rowDims)
	case !exists:
		d, maxValue = c.dims, cube.DefaultMaxValueSize
	case c.dims != 0 && c.dims != d:
		return usagef("import: namespace %s has %d dimensions, not --dims %d", ns, d, c.dims)
	}
	if rowDims != d {
		return fmt.Errorf("import: line %d: %d coordinates, namespace %s has %d dimensions; nothing was stored", firstLine, rowDims, ns, d)
	}
	if big > maxValue {
		return fmt.Errorf("import: line %d: a value of %d bytes, namespace %s takes at most %d; nothing was stored", bigLine, big, ns, maxValue)
	}
	if !exists {
		create := []any{"NS.CREATE", ns, "DIMS", d}
		if im.geo {
			create = []any{"NS.CREATE", ns, "GEO"}
		}
		if err := cl.Do(ctx, create...).Err(); err != nil && !strings.HasPrefix(err.Error(), "EXISTS") {
			return fmt.Errorf("import: create namespace %s: %w; nothing was stored", ns, err)
		}
	}

	// Pass 2: load, one transaction per batch.
	stored, unsure := 0, 0 // unsure: rows sent that no answer covers
	var batch []importRow
	flush := func() error {
		pipe := cl.Pipeline()
		for _, row := range batch {
			a := make([]any, 0, d+3)
			a = append(a, "PUT", ns)
			for _, x := range row.coord {
				if im.geo {
					a = append(a, cube.FormatDegrees(x)) // a GEO namespace reads degrees
				} else {
					a = append(a, x)
				}
			}
			pipe.Do(ctx, append(a, row.value)...)
		}
		cmds, err := pipe.Exec(ctx)
		var first error
		for i, cmd := range cmds {
			var reply redis.Error
			switch err := cmd.Err(); {
			case err == nil:
				stored++
			case !errors.As(err, &reply):
				// No answer (the connection or the daemon went away):
				// the batch may have committed or not.
				unsure = len(batch)
				return fmt.Errorf("lines %d-%d: no answer from the daemon (%w)", batch[0].line, batch[len(batch)-1].line, err)
			case first == nil:
				first = fmt.Errorf("line %d: %w", batch[i].line, err)
			}
		}
		if first == nil && err != nil && !errors.Is(err, redis.Nil) {
			unsure = len(batch) - len(cmds)
			first = fmt.Errorf("lines %d-%d: %w", batch[0].line, batch[len(batch)-1].line, err)
		}
		batch = batch[:0]
		return first
	}
	err = src(func(r io.Reader) error {
		return im.rows(r, func(row importRow) error {
			batch = append(batch, row)
			if len(batch) == importBatch {
				return flush()
			}
			return nil
		})
	}, "importing")
	if err == nil && len(batch) > 0 {
		err = flush()
	}
	if err != nil && unsure > 0 {
		return fmt.Errorf("import: %w; the import stopped there: %d of the file's %d rows are stored, and those %d lines may be too", err, stored, rows, unsure)
	}
	if err != nil {
		return fmt.Errorf("import: %w; the import stopped there: %d of the file's %d rows are stored", err, stored, rows)
	}
	values := "" // rows at one coordinate replace each other, so say both
	if v, err := cl.Do(ctx, "NS.INFO", ns).Result(); err == nil {
		if m, ok := v.(map[any]any); ok {
			values = fmt.Sprintf(", which now holds %d values", m["values"])
		}
	}
	fmt.Fprintf(c.stderr, "imported %d rows into %s%s\n", stored, ns, values)
	return nil
}

// nsInfo returns a namespace's dimensions, value limit and whether it is
// GEO, or exists false.
func nsInfo(ctx context.Context, cl *redis.Client, ns string) (dims, maxValue int, exists, geo bool, err error) {
	v, err := cl.Do(ctx, "NS.INFO", ns).Result()
	if err != nil {
		if strings.HasPrefix(err.Error(), "NONS") {
			return 0, 0, false, false, nil
		}
		return 0, 0, false, false, err
	}
	m, ok := v.(map[any]any)
	if !ok {
		return 0, 0, false, false, fmt.Errorf("NS.INFO %s: unexpected reply %v", ns, v)
	}
	d, _ := m["dims"].(int64)
	mv, _ := m["max_value_size"].(int64)
	g, _ := m["geo"].(int64)
	return int(d), int(mv), true, g == 1, nil
}

// source returns a function that runs read on the decoded input (each
// call from its start), showing a progress bar on a terminal for inputs
// over a MiB.
func (c *importCommand) source(path string) (func(read func(io.Reader) error, what string) error, func(), error) {
	cleanup := func() {}
	if path == "-" {
		tmp, err := os.CreateTemp("", "cube-import-")
		if err != nil {
			return nil, nil, fmt.Errorf("import: keep standard input: %w", err)
		}
		cleanup = func() { tmp.Close(); os.Remove(tmp.Name()) }
		if _, err := io.Copy(tmp, c.stdin); err != nil {
			cleanup()
			return nil, nil, fmt.Errorf("import: read standard input: %w", err)
		}
		path = tmp.Name()
	} else if _, err := os.Stat(path); err != nil {
		return nil, nil, fmt.Errorf("import: %w", err)
	}
	return func(read func(io.Reader) error, what string) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		var in io.Reader = bufio.NewReaderSize(f, 1<<16)
		if fi, err := f.Stat(); err == nil && fi.Size() > 1<<20 {
			if tf, ok := c.stderr.(*os.File); ok && term.IsTerminal(int(tf.Fd())) {
				bar := progressbar.NewOptions64(fi.Size(), progressbar.OptionSetWriter(c.stderr),
					progressbar.OptionSetDescription(what+" "+filepath.Base(path)),
					progressbar.OptionShowBytes(true), progressbar.OptionThrottle(100_000_000),
					progressbar.OptionClearOnFinish())
				defer bar.Finish()
				r := progressbar.NewReader(in, bar)
				in = &r
			}
		}
		br := bufio.NewReader(in)
		if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
			z, err := gzip.NewReader(br)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			defer z.Close()
			return read(z)
		}
		return read(br)
	}, cleanup, nil
}

// rows calls fn with every row of r in order; the first error (a bad row,
// naming its line, or fn's) ends it.
func (im importer) rows(r io.Reader, fn func(importRow) error) error {
	if im.format == "jsonl" {
		return im.jsonRows(r, fn)
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	var lat, lng int // --latlng columns
	var names []string
	for rec := 1; ; rec++ {
		fields, err := cr.Read()
		if errors.Is(err, io.EOF) {
			if im.latlng && names == nil {
				return errors.New("the file is empty; --latlng wants a header naming lat and lng columns")
			}
			return nil
		}
		if err != nil {
			return err // csv's errors name the line
		}
		line, _ := cr.FieldPos(0)
		if im.latlng {
			if names == nil {
				names = append([]string(nil), fields...)
				lat, lng = latLngColumns(fields)
				if lat < 0 || lng < 0 {
					return fmt.Errorf("line %d: --latlng wants a header naming a lat and a lng (or lon) column; it has %s", line, strings.Join(fields, ","))
				}
				continue
			}
			if len(fields) != len(names) {
				return fmt.Errorf("line %d: %d fields, the header has %d", line, len(fields), len(names))
			}
			y, err := im.degrees(fields[lat], "lat", 90)
			if err != nil {
				return fmt.Errorf("line %d: %w", line, err)
			}
			x, err := im.degrees(fields[lng], "lng", 180)
			if err != nil {
				return fmt.Errorf("line %d: %w", line, err)
			}
			rest := map[string]string{}
			for i, f := range fields {
				if i != lat && i != lng {
					rest[names[i]] = f
				}
			}
			v, _ := json.Marshal(rest)
			if err := fn(importRow{line, []int32{x, y}, v}); err != nil {
				return err
			}
			continue
		}
		if len(fields) < 2 {
			return fmt.Errorf("line %d: want c1,...,cd,value", line)
		}
		coord := make([]int32, len(fields)-1)
		for i := range coord {
			s := strings.TrimSpace(fields[i])
			n, err := strconv.ParseInt(s, 10, 32)
			if err != nil {
				if rec == 1 && i == 0 {
					names = append([]string(nil), fields...)
					break // a header
				}
				hint := ""
				if latLngHeader(names) {
					hint = "; the header names lat and lng columns: add --latlng to store rows at (lng, lat)"
				}
				return fmt.Errorf("line %d: coordinate %d is %q, not an integer from %d to %d%s", line, i+1, s, math.MinInt32, math.MaxInt32, hint)
			}
			coord[i] = int32(n)
			if i == len(coord)-1 {
				if err := fn(importRow{line, coord, []byte(fields[len(fields)-1])}); err != nil {
					return err
				}
			}
		}
	}
}

// latLngHeader reports whether a CSV header has lat and lng columns.
func latLngHeader(names []string) bool {
	lat, lng := latLngColumns(names)
	return lat >= 0 && lng >= 0
}

// latLngColumns finds a CSV header's latitude and longitude columns; -1
// for one it lacks (the last of several names wins).
func latLngColumns(names []string) (lat, lng int) {
	lat, lng = -1, -1
	for i, f := range names {
		switch strings.ToLower(strings.TrimSpace(f)) {
		case "lat", "latitude":
			lat = i
		case "lng", "lon", "long", "longitude":
			lng = i
		}
	}
	return lat, lng
}

// degrees parses a --latlng angle into coordinate units; with --geo,
// exactly, from the decimal digits.
func (im importer) degrees(s, what string, limit float64) (int32, error) {
	if im.geo {
		v, err := cube.ParseDegrees(strings.TrimSpace(s))
		if err != nil || math.Abs(float64(v)) > limit*cube.GeoScale {
			return 0, fmt.Errorf("%s is %q, not decimal degrees from -%g to %g", what, s, limit, limit)
		}
		return v, nil
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.Abs(f) > limit {
		return 0, fmt.Errorf("%s is %q, not a number of degrees from -%g to %g", what, s, limit, limit)
	}
	return int32(math.Round(f * im.scale)), nil
}

func (im importer) jsonRows(r io.Reader, fn func(importRow) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		var rec struct {
			C    []json.Number   `json:"c"`
			V    json.RawMessage `json:"v"`
			VB64 string          `json:"vb64"`
		}
		if err := json.Unmarshal(b, &rec); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		if len(rec.C) == 0 {
			return fmt.Errorf(`line %d: no coordinate; want {"c":[c1,...,cd],"v":...}`, line)
		}
		var value []byte
		switch {
		case rec.VB64 != "":
			v, err := base64.StdEncoding.DecodeString(rec.VB64)
			if err != nil {
				return fmt.Errorf("line %d: vb64 is not base64: %w", line, err)
			}
			value = v
		case len(rec.V) > 0 && rec.V[0] == '"':
			var s string
			if err := json.Unmarshal(rec.V, &s); err != nil {
				return fmt.Errorf("line %d: %w", line, err)
			}
			value = []byte(s)
		default:
			value = append([]byte(nil), rec.V...)
		}
		coord := make([]int32, len(rec.C))
		for i, x := range rec.C {
			n, err := strconv.ParseInt(x.String(), 10, 32)
			if err != nil {
				return fmt.Errorf("line %d: coordinate %d is %s, not an integer from %d to %d", line, i+1, x, math.MinInt32, math.MaxInt32)
			}
			coord[i] = int32(n)
		}
		if err := fn(importRow{line, coord, value}); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("line %d: %w", line+1, err)
	}
	return nil
}
