package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// writeReport writes results.md (the table) and the plots into out.
func writeReport(res *result, out string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	md := table(res)
	if err := os.WriteFile(filepath.Join(out, "results.md"), []byte(md), 0o644); err != nil {
		return err
	}
	fmt.Print(md)
	return writePlots(res, out)
}

func table(res *result) string {
	var b strings.Builder
	c := res.cfg
	fmt.Fprintf(&b, "# cube beside its peers\n\n")
	if rev := revision(); rev != "" {
		fmt.Fprintf(&b, "cube at %s. ", rev)
	}
	fmt.Fprintf(&b, "%d 3-D points in [0,%d)³ and %d 2-D points in [0,%d)², %d-byte values; a graph over the first %d points with %d out-edges each (weight: distance). "+
		"Each store loaded once and at rest (cube checkpointed and reopened, Pebble flushed and compacted, bbolt synced). "+
		"%d queries of each kind per repetition, %d repetitions: a cell is the median of the repetitions' median query, with their range, "+
		"and the ratio to cube's (above 1: cube is faster). Every answer was checked against a brute-force reference. Seed %d, %s/%s, %d CPUs, %s; the run took %v.\n\n",
		c.points, c.world, c.flat, c.world, valueSize, c.nodes, outDegree, c.queries, c.reps, c.seed,
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), res.started.UTC().Format("2006-01-02"), res.elapsed.Round(time.Second))
	b.WriteString("| query | results |")
	for _, s := range res.stores {
		fmt.Fprintf(&b, " %s |", s)
	}
	b.WriteString("\n|---|---:|")
	for range res.stores {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, w := range res.workloads {
		row := res.t[w.id]
		if len(row) == 0 {
			continue
		}
		results := -1.0
		for _, s := range res.stores {
			if t := row[s]; t != nil {
				results = t.results
				break
			}
		}
		fmt.Fprintf(&b, "| %s | %s |", w.label, count(results))
		base := row["cube"]
		for _, s := range res.stores {
			t := row[s]
			if t == nil {
				b.WriteString(" – |")
				continue
			}
			lo, hi := slices.Min(t.medians), slices.Max(t.medians)
			fmt.Fprintf(&b, " %s (%s–%s)", dur(median(t.medians)), dur(lo), dur(hi))
			if base != nil && s != "cube" {
				fmt.Fprintf(&b, " ×%s", ratio(float64(median(t.medians))/float64(median(base.medians))))
			}
			b.WriteString(" |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n| store | load (points, 2-D points, edges; to rest) |\n|---|---:|\n")
	for _, s := range res.stores {
		fmt.Fprintf(&b, "| %s | %s%s |\n", s, dur(res.loads[s]), phases(res.phases[s]))
	}
	b.WriteString("\n")
	return b.String()
}

// revision names the cube measured: the last commit that changed its Go
// code outside bench/ (a commit of main, which a rebase of bench's own
// commits does not rename), with "+dirty" if that code has changes; ""
// outside git.
func revision() string {
	cubeCode := []string{":/*.go", ":/go.mod", ":/go.sum", ":(exclude,top)bench"}
	out, err := exec.Command("git", append([]string{"log", "-1", "--format=%h", "--"}, cubeCode...)...).Output()
	rev := strings.TrimSpace(string(out))
	if err != nil || rev == "" {
		return ""
	}
	if exec.Command("git", append([]string{"diff", "--quiet", "HEAD", "--"}, cubeCode...)...).Run() != nil {
		rev += "+dirty"
	}
	return rev
}

func phases(p string) string {
	if p == "" {
		return ""
	}
	return " (" + strings.TrimSpace(p) + ")"
}

func count(n float64) string {
	switch {
	case n < 0:
		return "–"
	case n < 10:
		return fmt.Sprintf("%.1f", n)
	}
	return fmt.Sprintf("%.0f", n)
}

func ratio(r float64) string {
	if r >= 10 {
		return fmt.Sprintf("%.0f", r)
	}
	return fmt.Sprintf("%.2g", r)
}

func dur(d time.Duration) string {
	switch {
	case d < time.Microsecond:
		return fmt.Sprintf("%d ns", d.Nanoseconds())
	case d < 100*time.Microsecond:
		return fmt.Sprintf("%.1f µs", float64(d)/1e3)
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.2f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}
