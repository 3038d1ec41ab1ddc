package main

import (
	"fmt"
	"image/color"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// writePlots draws the box queries two ways: each store's median latency
// against the box's side, and every query of the last repetition against
// the number of points it returned (what a box query should cost).
func writePlots(res *result, out string) error {
	var boxes []*workload
	for _, w := range res.workloads {
		if w.side > 0 {
			boxes = append(boxes, w)
		}
	}
	if len(boxes) == 0 {
		return nil
	}
	if err := plotSide(res, boxes, filepath.Join(out, "box-latency-by-side.png")); err != nil {
		return err
	}
	return plotResults(res, boxes, filepath.Join(out, "box-latency-by-results.png"))
}

func logAxes(p *plot.Plot) {
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	p.Legend.Top, p.Legend.Left = true, true
	p.Add(plotter.NewGrid())
}

func storeStyle(i int) (color.Color, draw.GlyphDrawer) { return plotutil.Color(i), plotutil.Shape(i) }

func plotSide(res *result, boxes []*workload, file string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Box queries on %d points in [0,%d)³: median latency", res.cfg.points, res.cfg.world)
	p.X.Label.Text = "box side"
	p.Y.Label.Text = "latency (µs)"
	logAxes(p)
	var ticks []plot.Tick
	for _, w := range boxes {
		ticks = append(ticks, plot.Tick{Value: float64(w.side), Label: fmt.Sprint(w.side)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	for i, s := range res.stores {
		var xys plotter.XYs
		for _, w := range boxes {
			if t := res.t[w.id][s]; t != nil {
				xys = append(xys, plotter.XY{X: float64(w.side), Y: float64(median(t.medians)) / 1e3})
			}
		}
		if len(xys) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		c, shape := storeStyle(i)
		l.Color, sc.Color, sc.Shape = c, c, shape
		l.Width = vg.Points(1.5)
		p.Add(l, sc)
		p.Legend.Add(s, l, sc)
	}
	return p.Save(16*vg.Centimeter, 11*vg.Centimeter, file)
}

func plotResults(res *result, boxes []*workload, file string) error {
	p := plot.New()
	p.Title.Text = "Box queries: latency against points returned (each query)"
	p.X.Label.Text = "points returned + 1"
	p.Y.Label.Text = "latency (µs)"
	logAxes(p)
	for i, s := range res.stores {
		var xys plotter.XYs
		for _, w := range boxes {
			if t := res.t[w.id][s]; t != nil {
				for _, sm := range t.samples {
					xys = append(xys, plotter.XY{X: float64(sm.n + 1), Y: float64(sm.d) / 1e3})
				}
			}
		}
		if len(xys) == 0 {
			continue
		}
		slices.SortFunc(xys, func(a, b plotter.XY) int {
			if a.X < b.X {
				return -1
			}
			if a.X > b.X {
				return 1
			}
			return 0
		})
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return err
		}
		c, shape := storeStyle(i)
		sc.Color, sc.Shape, sc.Radius = c, shape, vg.Points(1.8)
		p.Add(sc)
		p.Legend.Add(s, sc)
	}
	return p.Save(16*vg.Centimeter, 11*vg.Centimeter, file)
}
