package experiment

import (
	"bytes"
	"fmt"
	"image/color"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

func png(p *plot.Plot, w, h vg.Length) ([]byte, error) {
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(120), vgimg.UseBackgroundColor(color.White))
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Plots draws, per forget set, |Δ| against the budget α for every method run
// at several budgets (the paper's Figure 2: one line per metric and method)
// and a bar chart of each method's avg |Δ| (at its best budget). It returns
// file names (PNG) and contents, in a fixed order.
func Plots(rows []Row) ([]string, map[string][]byte, error) {
	files := map[string][]byte{}
	var names []string
	bySet := map[string][]Row{}
	var sets []string
	for _, r := range rows {
		if _, ok := bySet[r.ForgetSet]; !ok {
			sets = append(sets, r.ForgetSet)
		}
		bySet[r.ForgetSet] = append(bySet[r.ForgetSet], r)
	}
	for _, fs := range sets {
		rs := bySet[fs]
		// |Δ| vs α.
		byName := map[string][]Row{}
		var methods []string
		for _, r := range rs {
			if r.Oracle || r.Budget == 0 {
				continue
			}
			if _, ok := byName[r.Name]; !ok {
				methods = append(methods, r.Name)
			}
			byName[r.Name] = append(byName[r.Name], r)
		}
		for _, metric := range []struct {
			key, label string
			get        func(Row) float64
		}{
			{"forget", "|Δ forget accuracy| (points)", func(r Row) float64 { return 100 * abs64(r.DForget.Mean) }},
			{"mia", "|Δ MIA " + MIAKey + "| (points)", func(r Row) float64 { return 100 * abs64(r.DMIA.Mean) }},
			{"test", "|Δ test accuracy| (points)", func(r Row) float64 { return 100 * abs64(r.DTest.Mean) }},
		} {
			p := plot.New()
			p.Title.Text = fmt.Sprintf("forget set %s: %s against the budget", fs, metric.key)
			p.X.Label.Text = "budget α (fraction of parameters)"
			p.Y.Label.Text = metric.label
			p.Add(plotter.NewGrid())
			lines := 0
			for i, name := range methods {
				pts := byName[name]
				if len(pts) < 2 {
					continue
				}
				sort.Slice(pts, func(a, b int) bool { return pts[a].Budget < pts[b].Budget })
				xy := make(plotter.XYs, len(pts))
				for k, r := range pts {
					xy[k] = plotter.XY{X: r.Budget, Y: metric.get(r)}
				}
				l, s, err := plotter.NewLinePoints(xy)
				if err != nil {
					return nil, nil, err
				}
				l.Color = plotutil.Color(i)
				s.Color = plotutil.Color(i)
				s.Shape = plotutil.Shape(i)
				p.Add(l, s)
				p.Legend.Add(name, l, s)
				lines++
			}
			if lines == 0 {
				continue
			}
			p.Legend.Top = true
			b, err := png(p, 6*vg.Inch, 3.6*vg.Inch)
			if err != nil {
				return nil, nil, err
			}
			n := fmt.Sprintf("budget-%s-%s.png", FileName(fs), metric.key)
			names = append(names, n)
			files[n] = b
		}
		// avg |Δ| per method, best budget.
		best := map[string]Row{}
		var order []string
		for _, r := range rs {
			if r.Oracle {
				continue
			}
			cur, ok := best[r.Name]
			if !ok {
				order = append(order, r.Name)
			}
			if !ok || r.Gap.Mean < cur.Gap.Mean {
				best[r.Name] = r
			}
		}
		if len(order) == 0 {
			continue
		}
		vals := make(plotter.Values, len(order))
		errs := make(plotter.YErrors, len(order))
		labels := make([]string, len(order))
		for i, name := range order {
			vals[i] = 100 * best[name].Gap.Mean
			errs[i].Low, errs[i].High = 100*best[name].Gap.CI, 100*best[name].Gap.CI
			labels[i] = name
		}
		p := plot.New()
		p.Title.Text = fmt.Sprintf("forget set %s: avg |Δ| to the oracle (forget acc., MIA), best budget", fs)
		p.Y.Label.Text = "points (lower is closer)"
		bars, err := plotter.NewBarChart(vals, vg.Points(18))
		if err != nil {
			return nil, nil, err
		}
		bars.Color = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
		bars.LineStyle.Width = 0
		p.Add(plotter.NewGrid(), bars)
		xy := make(plotter.XYs, len(order))
		for i := range order {
			xy[i] = plotter.XY{X: float64(i), Y: vals[i]}
		}
		if ye, err := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{xy, errs}); err == nil {
			p.Add(ye)
		}
		p.NominalX(labels...)
		p.Y.Min = 0
		p.X.Tick.Label.Rotation = 0.6
		p.X.Tick.Label.XAlign = draw.XRight
		b, err := png(p, 7*vg.Inch, 3.8*vg.Inch)
		if err != nil {
			return nil, nil, err
		}
		n := fmt.Sprintf("methods-%s.png", FileName(fs))
		names = append(names, n)
		files[n] = b
	}
	return names, files, nil
}

func abs64(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
