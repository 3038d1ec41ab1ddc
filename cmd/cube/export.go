package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
)

// exportCommand is "cube export -n NS [--format jsonl|csv]".
type exportCommand struct {
	*env
	format string
}

func exportCmd(e *env) *cobra.Command {
	c := &exportCommand{env: e}
	cmd := &cobra.Command{
		Use:   "export -n NS [--format jsonl|csv]",
		Short: "Print every value of a namespace, as JSON lines or CSV",
		Long: `Prints every value of namespace NS in curve order, as JSON lines that
cube import reads back ({"c":[...],"v":"text"}, or "vb64" for bytes that are
not UTF-8), or as CSV rows c1,...,cd,value (text values only: a namespace
with other bytes is refused, since CSV cannot carry them).`,
		Example: `  cube export -n world > world.jsonl
  cube export -n world --format csv > world.csv`,
		Args: withNamespace(e, noArgs),
		RunE: func(cmd *cobra.Command, args []string) error { return c.Run(cmd.Context()) },
	}
	cmd.Flags().StringVar(&c.format, "format", "jsonl", "jsonl or csv")
	return cmd
}

func (c *exportCommand) Run(ctx context.Context) error {
	if c.format != "jsonl" && c.format != "csv" {
		return usagef("export: --format must be jsonl or csv, not %q", c.format)
	}
	ns, err := c.ns("export")
	if err != nil {
		return err
	}
	cl, done, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer done()
	info, err := cl.Do(ctx, "NS.INFO", ns).Result()
	if err != nil {
		return err
	}
	d := int(info.(map[any]any)["dims"].(int64))
	a := []any{"REGION", ns}
	for range d {
		a = append(a, math.MinInt32)
	}
	for range d {
		a = append(a, math.MaxInt32)
	}
	res, err := cl.Do(ctx, a...).Slice()
	if err != nil {
		return err
	}
	if c.format == "csv" {
		// CSV carries text only: refuse before writing a row, rather
		// than write bytes that import would read back changed.
		for _, p := range res {
			pair := p.([]any)
			if v := pair[1].(string); !utf8.ValidString(v) {
				return fmt.Errorf("export: the value at %s is not UTF-8 text, which CSV cannot carry; use --format jsonl (it writes such values as base64, \"vb64\")", inline(pair[0]))
			}
		}
	}
	w := bufio.NewWriterSize(c.stdout, 1<<16)
	defer w.Flush()
	for _, p := range res {
		pair := p.([]any)
		coord := pair[0].([]any)
		v := pair[1].(string)
		cs := make([]string, len(coord))
		for i, x := range coord {
			cs[i] = strconv.FormatInt(x.(int64), 10)
		}
		if c.format == "csv" {
			q := v
			if strings.ContainsAny(v, ",\"\r\n") {
				q = `"` + strings.ReplaceAll(v, `"`, `""`) + `"`
			}
			fmt.Fprintf(w, "%s,%s\n", strings.Join(cs, ","), q)
			continue
		}
		var b []byte
		if utf8.ValidString(v) {
			b, _ = json.Marshal(v)
			fmt.Fprintf(w, `{"c":[%s],"v":%s}`+"\n", strings.Join(cs, ","), b)
		} else {
			fmt.Fprintf(w, `{"c":[%s],"vb64":"%s"}`+"\n", strings.Join(cs, ","), base64.StdEncoding.EncodeToString([]byte(v)))
		}
	}
	return nil
}
