package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Colours: the input model before unlearning, the model, the oracle, and
// the three MIA groups.
var (
	colBefore  = color.RGBA{R: 0x8c, G: 0x8c, B: 0x8c, A: 0xff}
	colModel   = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	colOracle  = color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}
	colMember  = color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
	colNonMem  = color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}
	colForget  = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	pngDPI     = 144
	plotWidth  = 5.1 * vg.Inch
	plotHeight = 3.1 * vg.Inch
)

func withAlpha(c color.RGBA, a uint8) color.NRGBA {
	return color.NRGBA{R: c.R, G: c.G, B: c.B, A: a}
}

// series is one coloured set of bars.
type series struct {
	name   string
	values []float64
	color  color.Color
}

// groupedBars draws one group of bars per label, one bar per series, with
// values in [0, 1] shown as percentages. The legend and the labels are
// drawn by chart, clear of the bars.
func groupedBars(title, ylabel string, labels []string, ss []series) (*chart, error) {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.Y.Min, p.Y.Max = 0, 100
	p.Y.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "0"}, {Value: 25, Label: "25"},
		{Value: 50, Label: "50"}, {Value: 75, Label: "75"}, {Value: 100, Label: "100"}})
	// Categories at 0, 1, ...; chart draws their names.
	p.X.Min, p.X.Max = -0.5, float64(len(labels))-0.5
	p.X.Tick.Marker = plot.ConstantTicks(nil)
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	p.Add(grid)
	ch := &chart{p: p, labels: labels}
	for _, s := range ss {
		if len(s.values) != len(labels) {
			return nil, fmt.Errorf("report: %s: %d values for %d labels", s.name, len(s.values), len(labels))
		}
		vals := make(plotter.Values, len(s.values))
		for k, v := range s.values {
			vals[k] = 100 * v
		}
		b, err := plotter.NewBarChart(vals, 1) // width set when drawn (chart.setBarWidth)
		if err != nil {
			return nil, err
		}
		b.LineStyle.Width = 0
		p.Add(b)
		ch.bars = append(ch.bars, b)
		ch.legend = append(ch.legend, legendEntry{name: s.name, fill: s.color})
	}
	return ch, nil
}

// distribution draws normalised histograms of several groups over a shared
// range. With clip, values above the 99th percentile of all groups (a few
// clipped logarithms or huge losses that would squash the rest) are counted
// in the last bin.
func distribution(title, xlabel string, groups []series, bins int, clip bool) (*chart, error) {
	var all []float64
	for _, g := range groups {
		all = append(all, g.values...)
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("report: no values for %s", title)
	}
	slices.Sort(all)
	lo := all[0]
	hi := all[len(all)-1]
	if clip {
		hi = all[min(len(all)-1, int(math.Ceil(0.99*float64(len(all)-1))))]
	}
	clipped := hi < all[len(all)-1]
	if hi <= lo {
		hi = lo + 1
	}
	width := (hi - lo) / float64(bins)
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	if clipped {
		p.X.Label.Text += fmt.Sprintf(" (last bin: ≥ %.3g)", hi-width)
	}
	p.Y.Label.Text = "share of group"
	ch := &chart{p: p}
	top := 0.0
	for _, g := range groups {
		counts := make([]float64, bins)
		for _, v := range g.values {
			k := int((v - lo) / width)
			k = max(0, min(bins-1, k))
			counts[k]++
		}
		h := &plotter.Histogram{Width: width, LineStyle: plotter.DefaultLineStyle}
		for k := range counts {
			b := plotter.HistogramBin{Min: lo + float64(k)*width, Max: lo + float64(k+1)*width}
			if len(g.values) > 0 {
				b.Weight = counts[k] / float64(len(g.values))
			}
			h.Bins = append(h.Bins, b)
		}
		for _, b := range h.Bins {
			top = math.Max(top, b.Weight)
		}
		c := g.color.(color.RGBA)
		h.FillColor = withAlpha(c, 0x28)
		h.LineStyle.Color = c
		h.LineStyle.Width = vg.Points(1.2)
		p.Add(h)
		ch.legend = append(ch.legend, legendEntry{name: fmt.Sprintf("%s (%d)", g.name, len(g.values)),
			fill: h.FillColor, outline: c})
	}
	p.Y.Min, p.Y.Max = 0, 1.05*math.Max(top, 1e-3)
	return ch, nil
}
