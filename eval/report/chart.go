package report

import (
	"bytes"
	"image/color"
	"math"
	"unicode/utf8"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// chart is a gonum plot with the parts this package draws itself so that
// they never cover the data: a legend in a strip between the title and the
// data area, and, for bar charts, the category labels under the x axis,
// turned or thinned so that no two overlap.
type chart struct {
	p      *plot.Plot // title, axes and data; no legend entries
	legend []legendEntry
	// labels name the categories at x = 0, 1, ...; nil for a plot with a
	// numeric x axis.
	labels []string
	// bars are the bar charts, one per series, whose width is set from the
	// data area's width when drawn.
	bars []*plotter.BarChart
}

// legendEntry is one series in the legend: a filled swatch for bars, a
// translucent one with an outline for histograms.
type legendEntry struct {
	name    string
	fill    color.Color
	outline color.Color // nil: none
}

// chartLayout is where the parts of a drawn chart lie, in points from the
// lower-left corner of the image (vg's coordinates): what the tests check
// for overlaps, alongside the pixels.
type chartLayout struct {
	Canvas, Data vg.Rectangle
	Legend       vg.Rectangle // the entries' bounding box; empty without entries
	Bars         []vg.Rectangle
	// Labels are the category labels drawn (every Step-th one), each as
	// the four corners of its turned text box.
	Labels   []labelBox
	Rotation float64 // of the labels, radians counter-clockwise
	Step     int
}

type labelBox struct {
	Index   int
	Text    string
	Corners [4]vg.Point
}

// hideParts draws a chart with parts in transparent ink (the layout stays
// the same), so that a test can tell each part's pixels apart. The zero
// value draws everything.
type hideParts struct {
	legend, bars, labels bool
	keepLabel            int // with labels: the category whose label is still drawn (-1: none)
}

// draw options, in points.
const (
	labelGap     = vg.Length(3)  // between labels, and between a label and the axis
	maxLabelLen  = 22            // characters; longer labels lose their middle
	legendSwatch = vg.Length(10) // side of a legend's colour box
	legendGap    = vg.Length(12) // between legend entries
	legendPad    = vg.Length(6)  // above and below the legend strip
)

// shorten keeps labels at most maxLabelLen characters by replacing their
// middle with "…": the start and the end (often a number that tells
// classes apart) both stay.
func shorten(s string) string {
	n := utf8.RuneCountInString(s)
	if n <= maxLabelLen {
		return s
	}
	r := []rune(s)
	head := (maxLabelLen - 1) / 2
	tail := maxLabelLen - 1 - head
	return string(r[:head]) + "…" + string(r[n-tail:])
}

// png draws the chart at the given size and returns the PNG bytes and the
// layout.
func (ch *chart) png(w, h vg.Length) ([]byte, chartLayout, error) {
	return ch.pngHiding(w, h, hideParts{})
}

// levelLabelRoom is about the room under the data area that level labels
// and the axis take.
const levelLabelRoom = vg.Length(36)

// height returns h, or more when turned labels take more room under the
// data area than level ones would: the image grows by the difference so
// that the data keeps its height.
func (ch *chart) height(w, h vg.Length) vg.Length {
	if len(ch.labels) == 0 {
		return h
	}
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(pngDPI))
	lay := ch.draw(draw.New(c), hideParts{})
	return h + max(0, lay.Data.Min.Y-lay.Canvas.Min.Y-levelLabelRoom)
}

func (ch *chart) pngHiding(w, h vg.Length, hide hideParts) ([]byte, chartLayout, error) {
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(pngDPI), vgimg.UseBackgroundColor(color.White))
	lay := ch.draw(draw.New(c), hide)
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return nil, chartLayout{}, err
	}
	return buf.Bytes(), lay, nil
}

// draw lays the chart out on c and draws it: the legend strip takes room
// under the title (as the title's padding), the labels take room at the
// bottom, and where turned labels would reach past the left edge the plot
// moves right. The layout is found in a few rounds because the room the
// labels need depends on the width left to the data, and back.
func (ch *chart) draw(c draw.Canvas, hide hideParts) chartLayout {
	p := ch.p
	legH := ch.legendHeight()
	titlePad := p.Title.Padding
	p.Title.Padding = titlePad + legH
	defer func() { p.Title.Padding = titlePad }()

	var left, bottom vg.Length
	var lab labelPlan
	for range 4 {
		pc := draw.Crop(c, left, 0, bottom, 0)
		ch.setBarWidth(p.DataCanvas(pc))
		lab = ch.planLabels(p.DataCanvas(pc))
		needBottom, needLeft := vg.Length(0), vg.Length(0)
		if len(lab.boxes) > 0 {
			needBottom = pc.Min.Y - lab.minY + labelGap
			needLeft = max(0, c.Min.X+labelGap-lab.minX)
		}
		if needBottom <= bottom && needLeft <= 0 {
			break
		}
		bottom = max(bottom, needBottom)
		left += needLeft
	}
	pc := draw.Crop(c, left, 0, bottom, 0)
	for i, b := range ch.bars {
		b.Color = ch.legend[i].fill
		if hide.bars {
			b.Color = color.Transparent
		}
	}
	p.Draw(pc)
	dc := p.DataCanvas(pc)
	lay := chartLayout{Canvas: c.Rectangle, Data: dc.Rectangle, Rotation: lab.rotation, Step: lab.step}
	lay.Bars = ch.barRects(dc)
	// The strip between the title and the top of the axes.
	titleH := p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y
	if p.Title.Text == "" {
		titleH = 0
	}
	stripTop := c.Max.Y - titleH - titlePad
	lay.Legend = ch.drawLegend(c, dc, stripTop, hide.legend)
	for _, b := range lab.boxes {
		if !hide.labels || b.Index == hide.keepLabel {
			sty := lab.style
			c.FillText(sty, lab.anchors[b.Index], b.Text)
		}
		lay.Labels = append(lay.Labels, b)
	}
	return lay
}

// setBarWidth makes each group of bars take at most 80 % of the space
// between two categories (and a bar at most 22 points), so that groups
// never touch, however many categories there are.
func (ch *chart) setBarWidth(dc draw.Canvas) {
	n := len(ch.bars)
	if n == 0 || len(ch.labels) == 0 {
		return
	}
	slot := (dc.Max.X - dc.Min.X) / vg.Length(len(ch.labels))
	w := min(vg.Points(22), 0.8*slot/vg.Length(n))
	for i, b := range ch.bars {
		b.Width = w
		b.Offset = w * vg.Length(float64(i)-float64(n-1)/2)
	}
}

// barRects returns every bar's rectangle as BarChart.Plot draws it.
func (ch *chart) barRects(dc draw.Canvas) []vg.Rectangle {
	var rs []vg.Rectangle
	trX, trY := ch.p.Transforms(&dc)
	for _, b := range ch.bars {
		for i, v := range b.Values {
			x := trX(b.XMin+float64(i)) - b.Width/2 + b.Offset
			y0, y1 := trY(0), trY(v)
			rs = append(rs, vg.Rectangle{Min: vg.Point{X: x, Y: min(y0, y1)}, Max: vg.Point{X: x + b.Width, Y: max(y0, y1)}})
		}
	}
	return rs
}

// labelPlan is where the category labels go for one data area.
type labelPlan struct {
	style      text.Style
	rotation   float64
	step       int
	anchors    []vg.Point // per category; the labels' right end (turned) or top centre
	boxes      []labelBox // the labels drawn
	minX, minY vg.Length  // the lowest and leftmost corner of any box
}

// planLabels picks the first form in which neighbouring labels keep
// labelGap between them: level; turned 45°, when the distance between
// two turned lines (slot·sin 45°) clears the text's height; upright
// (90°); upright with only every k-th label. Turned labels are shortened
// (shorten).
func (ch *chart) planLabels(dc draw.Canvas) labelPlan {
	n := len(ch.labels)
	if n == 0 {
		return labelPlan{}
	}
	sty := ch.p.X.Tick.Label
	sty.Color = color.Black
	ext := sty.FontExtents()
	textH := ext.Ascent + ext.Descent
	trX, _ := ch.p.Transforms(&dc)
	slot := (dc.Max.X - dc.Min.X) / vg.Length(n)
	if n > 1 {
		slot = trX(1) - trX(0)
	}
	widest := vg.Length(0)
	for _, l := range ch.labels {
		widest = max(widest, sty.Width(l))
	}
	texts := ch.labels
	plan := labelPlan{step: 1}
	switch {
	case widest+labelGap <= slot:
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
	default:
		texts = make([]string, n)
		for i, l := range ch.labels {
			texts[i] = shorten(l)
		}
		sty.XAlign, sty.YAlign = draw.XRight, draw.YCenter
		plan.rotation = math.Pi / 2
		if slot*vg.Length(math.Sin(math.Pi/4)) >= textH+labelGap {
			plan.rotation = math.Pi / 4
		} else if slot < textH+labelGap {
			plan.step = int(math.Ceil(float64((textH + labelGap) / slot)))
		}
	}
	sty.Rotation = plan.rotation
	plan.style = sty
	top := dc.Min.Y - ch.p.X.Padding - ch.p.X.Width/2 - labelGap
	plan.minX, plan.minY = vg.Length(math.Inf(1)), vg.Length(math.Inf(1))
	plan.anchors = make([]vg.Point, n)
	for i := range n {
		plan.anchors[i] = vg.Point{X: trX(float64(i)), Y: top}
		if i%plan.step != 0 {
			continue
		}
		b := labelBox{Index: i, Text: texts[i], Corners: textCorners(sty, texts[i], plan.anchors[i])}
		for _, q := range b.Corners {
			plan.minX, plan.minY = min(plan.minX, q.X), min(plan.minY, q.Y)
		}
		plan.boxes = append(plan.boxes, b)
	}
	return plan
}

// textCorners returns the corners of the box that text.Plain fills when it
// draws txt at pt with sty: the advance width by the ascent and descent
// around the baseline, turned by sty.Rotation about pt.
func textCorners(sty text.Style, txt string, pt vg.Point) [4]vg.Point {
	ext := sty.FontExtents()
	w := sty.Width(txt)
	h := sty.Height(txt)
	// text.Plain's baseline, in the turned frame with pt at the origin.
	x0 := vg.Length(sty.XAlign) * w
	base := h*vg.Length(sty.YAlign) - ext.Ascent + sty.Font.Size
	sin, cos := math.Sincos(sty.Rotation)
	turn := func(x, y vg.Length) vg.Point {
		return vg.Point{X: pt.X + x*vg.Length(cos) - y*vg.Length(sin), Y: pt.Y + x*vg.Length(sin) + y*vg.Length(cos)}
	}
	lo, hi := base-ext.Descent, base+ext.Ascent
	return [4]vg.Point{turn(x0, lo), turn(x0+w, lo), turn(x0+w, hi), turn(x0, hi)}
}

func (ch *chart) legendStyle() text.Style {
	sty := ch.p.Legend.TextStyle
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
	return sty
}

// legendHeight is the room the legend strip takes: one row of entries
// with padding above and below, or nothing without entries.
func (ch *chart) legendHeight() vg.Length {
	if len(ch.legend) == 0 {
		return 0
	}
	sty := ch.legendStyle()
	return max(legendSwatch, sty.Height("Mg")) + 2*legendPad
}

// drawLegend draws the entries in one row centred over the data area, in
// the strip that ends at top, and returns their bounding box.
func (ch *chart) drawLegend(c draw.Canvas, dc draw.Canvas, top vg.Length, hide bool) vg.Rectangle {
	if len(ch.legend) == 0 {
		return vg.Rectangle{}
	}
	sty := ch.legendStyle()
	rowH := max(legendSwatch, sty.Height("Mg"))
	total := vg.Length(0)
	for i, e := range ch.legend {
		if i > 0 {
			total += legendGap
		}
		total += legendSwatch + 4 + sty.Width(e.name)
	}
	x := (dc.Min.X+dc.Max.X)/2 - total/2
	x = max(c.Min.X+2, min(x, c.Max.X-2-total))
	yMid := top - legendPad - rowH/2
	box := vg.Rectangle{Min: vg.Point{X: x, Y: yMid - rowH/2}, Max: vg.Point{X: x + total, Y: yMid + rowH/2}}
	for _, e := range ch.legend {
		fill, outline := e.fill, e.outline
		if hide {
			fill, outline, sty.Color = color.Transparent, nil, color.Transparent
		}
		sw := vg.Rectangle{Min: vg.Point{X: x, Y: yMid - legendSwatch/2},
			Max: vg.Point{X: x + legendSwatch, Y: yMid + legendSwatch/2}}
		c.SetColor(fill)
		c.Fill(sw.Path())
		if outline != nil {
			c.StrokeLines(draw.LineStyle{Color: outline, Width: vg.Points(1.2)},
				[]vg.Point{sw.Min, {X: sw.Max.X, Y: sw.Min.Y}, sw.Max, {X: sw.Min.X, Y: sw.Max.Y}, sw.Min})
		}
		x += legendSwatch + 4
		c.FillText(sty, vg.Point{X: x, Y: yMid}, e.name)
		x += sty.Width(e.name) + legendGap
	}
	return box
}
