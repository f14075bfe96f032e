package report

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

// imageFolderNames are class names as an ImageFolder dataset's folders
// give them: long, and alike apart from their ends.
func imageFolderNames(n int) []string {
	names := make([]string, n)
	kinds := []string{"automobile_and_truck", "airplane_and_helicopter", "bird", "cat_domestic_shorthair", "deer"}
	for i := range names {
		names[i] = fmt.Sprintf("%s_class_%d", kinds[i%len(kinds)], i)
	}
	return names
}

func numberNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprint(i)
	}
	return names
}

// barCase is a chart the layout tests draw: near-100 % bars under the
// legend (the worst case for it) and labels of every kind.
type barCase struct {
	name   string
	labels []string
	series int
}

var barCases = []barCase{
	{"accuracy keys", []string{"train", "test", "forget", "retain"}, 3},
	{"one series", []string{"train", "test", "forget", "retain"}, 1},
	{"mia keys", []string{"correctness", "confidence", "entropy", "m_entropy", "prob", "loss_lr"}, 3},
	{"10 classes", numberNames(10), 3},
	{"10 ImageFolder classes", imageFolderNames(10), 3},
	{"20 ImageFolder classes", imageFolderNames(20), 2},
	{"100 classes", numberNames(100), 3},
	{"100 ImageFolder classes", imageFolderNames(100), 3},
}

func (c barCase) chart(t *testing.T) *chart {
	t.Helper()
	var ss []series
	for s, col := range []color.RGBA{colBefore, colModel, colOracle}[:c.series] {
		v := make([]float64, len(c.labels))
		for i := range v {
			// The tallest bars in the last groups, where a legend in the
			// upper right corner would sit.
			v[i] = 1 - 0.002*float64((len(v)-1-i)*(s+1))
		}
		ss = append(ss, series{fmt.Sprintf("series %d", s), v, col})
	}
	ch, err := groupedBars("Per-class accuracy: test", "accuracy (%)", c.labels, ss)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// render draws ch with parts hidden and decodes the image.
func render(t *testing.T, ch *chart, hide hideParts) (image.Image, chartLayout) {
	t.Helper()
	b, lay, err := ch.pngHiding(plotWidth, ch.height(plotWidth, plotHeight), hide)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if d := os.Getenv("UNLEARN_CHART_DIR"); d != "" && hide == (hideParts{}) {
		name := strings.NewReplacer(" ", "_", "/", "_").Replace(t.Name()) + ".png"
		if err := os.WriteFile(filepath.Join(d, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return img, lay
}

// mask is a set of pixels.
type mask map[image.Point]bool

// diff returns the pixels that differ between two drawings of one chart:
// the footprint of what one drew and the other did not.
func diff(a, b image.Image) mask {
	m := mask{}
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if a.At(x, y) != b.At(x, y) {
				m[image.Pt(x, y)] = true
			}
		}
	}
	return m
}

// touches returns a pixel of a within d pixels (Chebyshev) of a pixel of
// b, if there is one.
func touches(a, b mask, d int) (image.Point, bool) {
	for p := range a {
		for dy := -d; dy <= d; dy++ {
			for dx := -d; dx <= d; dx++ {
				if b[p.Add(image.Pt(dx, dy))] {
					return p, true
				}
			}
		}
	}
	return image.Point{}, false
}

// toPixel maps a point of the layout (points, y up) to the image's pixel
// grid (y down).
func toPixel(lay chartLayout, img image.Image, q vg.Point) (float64, float64) {
	s := float64(pngDPI) / 72
	return float64(q.X-lay.Canvas.Min.X) * s, float64(img.Bounds().Dy()) - float64(q.Y-lay.Canvas.Min.Y)*s
}

// rectsOverlap says whether two rectangles share more than a sliver of
// rounding (bars side by side share an edge).
func rectsOverlap(a, b vg.Rectangle) bool {
	const eps = 1e-6
	return a.Min.X < b.Max.X-eps && b.Min.X < a.Max.X-eps && a.Min.Y < b.Max.Y-eps && b.Min.Y < a.Max.Y-eps
}

func rectPoly(r vg.Rectangle) [4]vg.Point {
	return [4]vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}}
}

// polyGap returns the separation of two convex quadrilaterals along the
// best separating axis (the separating axis theorem): positive when they
// are apart by that much, zero or negative when they intersect.
func polyGap(a, b [4]vg.Point) float64 {
	best := math.Inf(-1)
	for _, poly := range [][4]vg.Point{a, b} {
		for i := range 4 {
			p, q := poly[i], poly[(i+1)%4]
			nx, ny := float64(q.Y-p.Y), -float64(q.X-p.X)
			l := math.Hypot(nx, ny)
			if l == 0 {
				continue
			}
			nx, ny = nx/l, ny/l
			proj := func(poly [4]vg.Point) (lo, hi float64) {
				lo, hi = math.Inf(1), math.Inf(-1)
				for _, v := range poly {
					d := float64(v.X)*nx + float64(v.Y)*ny
					lo, hi = math.Min(lo, d), math.Max(hi, d)
				}
				return lo, hi
			}
			alo, ahi := proj(a)
			blo, bhi := proj(b)
			best = math.Max(best, math.Max(blo-ahi, alo-bhi))
		}
	}
	return best
}

func inside(r vg.Rectangle, q vg.Point) bool {
	return q.X >= r.Min.X && q.X <= r.Max.X && q.Y >= r.Min.Y && q.Y <= r.Max.Y
}

// The legend lies in its own strip: its box meets no bar's rectangle, and
// on the drawn image the pixels the legend inks and those the bars ink
// are at least 2 pixels apart.
func TestBarChartLegendClearOfBars(t *testing.T) {
	for _, c := range barCases {
		t.Run(c.name, func(t *testing.T) {
			ch := c.chart(t)
			full, lay := render(t, ch, hideParts{})
			noLegend, _ := render(t, ch, hideParts{legend: true})
			noBars, _ := render(t, ch, hideParts{bars: true})
			if lay.Legend.Size().X <= 0 || !inside(lay.Canvas, lay.Legend.Min) || !inside(lay.Canvas, lay.Legend.Max) {
				t.Fatalf("legend %v outside the canvas %v", lay.Legend, lay.Canvas)
			}
			if len(lay.Bars) != c.series*len(c.labels) {
				t.Fatalf("%d bars, want %d", len(lay.Bars), c.series*len(c.labels))
			}
			for i, b := range lay.Bars {
				if rectsOverlap(b, lay.Legend) {
					t.Errorf("bar %d %v overlaps the legend %v", i, b, lay.Legend)
				}
				if !inside(lay.Data, b.Min) || !inside(lay.Data, b.Max) {
					t.Errorf("bar %d %v outside the data area %v", i, b, lay.Data)
				}
			}
			// Neighbouring bars do not overlap either (groups of many classes).
			for i := 1; i < len(lay.Bars); i++ {
				for j := range i {
					if rectsOverlap(lay.Bars[i], lay.Bars[j]) {
						t.Fatalf("bars %d %v and %d %v overlap", i, lay.Bars[i], j, lay.Bars[j])
					}
				}
			}
			legendInk, barInk := diff(full, noLegend), diff(full, noBars)
			if len(legendInk) < 100 || len(barInk) < 1000 {
				t.Fatalf("legend inks %d pixels, bars %d", len(legendInk), len(barInk))
			}
			if p, ok := touches(legendInk, barInk, 2); ok {
				t.Errorf("legend pixel %v within 2 pixels of a bar's", p)
			}
		})
	}
}

// The category labels never overlap: their turned boxes keep a gap, they
// stay on the canvas and below the data area, and on the drawn image each
// label inks only inside its box, at least 2 pixels from any other label's
// ink. Long names are shortened, keeping their ends.
func TestBarChartLabelsDoNotOverlap(t *testing.T) {
	for _, c := range barCases {
		t.Run(c.name, func(t *testing.T) {
			ch := c.chart(t)
			_, lay := render(t, ch, hideParts{})
			t.Logf("%d labels drawn of %d, every %d, turned %.0f°", len(lay.Labels), len(c.labels), lay.Step,
				lay.Rotation*180/math.Pi)
			if want := (len(c.labels) + lay.Step - 1) / lay.Step; len(lay.Labels) != want {
				t.Fatalf("%d labels drawn, want %d (every %d of %d)", len(lay.Labels), want, lay.Step, len(c.labels))
			}
			if len(c.labels) <= 20 && lay.Step != 1 {
				t.Errorf("only every %d of %d labels drawn", lay.Step, len(c.labels))
			}
			for i, b := range lay.Labels {
				if n := len([]rune(b.Text)); n > maxLabelLen {
					t.Errorf("label %q has %d characters", b.Text, n)
				}
				full := c.labels[b.Index]
				if b.Text != full && (!strings.HasSuffix(full, b.Text[strings.LastIndex(b.Text, "…")+len("…"):]) ||
					!strings.HasPrefix(full, b.Text[:strings.Index(b.Text, "…")])) {
					t.Errorf("label %q is not %q shortened in the middle", b.Text, full)
				}
				for _, q := range b.Corners {
					if !inside(lay.Canvas, q) || q.Y > lay.Data.Min.Y {
						t.Errorf("label %q corner %v outside the canvas %v or above the axis at %v", b.Text, q, lay.Canvas,
							lay.Data.Min.Y)
					}
				}
				for j := range i {
					if g := polyGap(b.Corners, lay.Labels[j].Corners); g < float64(labelGap)-0.01 {
						t.Errorf("labels %q and %q %.2f points apart", b.Text, lay.Labels[j].Text, g)
					}
				}
			}
			// Ink: draw no label, then each alone.
			none, _ := render(t, ch, hideParts{labels: true, keepLabel: -1})
			inks := make([]mask, len(lay.Labels))
			for i, b := range lay.Labels {
				one, _ := render(t, ch, hideParts{labels: true, keepLabel: b.Index})
				inks[i] = diff(one, none)
				if len(inks[i]) < 10 {
					t.Fatalf("label %q inks %d pixels", b.Text, len(inks[i]))
				}
				for p := range inks[i] {
					if !nearPoly(lay, one, b.Corners, p, 1.5) {
						t.Errorf("label %q inks pixel %v outside its box", b.Text, p)
						break
					}
				}
			}
			for i := range inks {
				for j := range i {
					if p, ok := touches(inks[i], inks[j], 2); ok {
						t.Errorf("labels %q and %q ink pixels within 2 of each other (%v)", lay.Labels[i].Text,
							lay.Labels[j].Text, p)
					}
				}
			}
		})
	}
}

// nearPoly says whether pixel p's centre lies within tol pixels of the
// convex polygon poly (layout points).
func nearPoly(lay chartLayout, img image.Image, poly [4]vg.Point, p image.Point, tol float64) bool {
	var xs, ys [4]float64
	for i, q := range poly {
		xs[i], ys[i] = toPixel(lay, img, q)
	}
	cx, cy := float64(p.X)+0.5, float64(p.Y)+0.5
	// Inside or near every edge's half-plane (the polygon's winding is
	// either way after the y flip).
	sign := 0.0
	for i := range 4 {
		j := (i + 1) % 4
		ex, ey := xs[j]-xs[i], ys[j]-ys[i]
		cross := ex*(cy-ys[i]) - ey*(cx-xs[i])
		if sign == 0 {
			sign = math.Copysign(1, (xs[1]-xs[0])*(ys[2]-ys[0])-(ys[1]-ys[0])*(xs[2]-xs[0]))
		}
		if cross*sign/math.Hypot(ex, ey) < -tol {
			return false
		}
	}
	return true
}

func TestShorten(t *testing.T) {
	for in, want := range map[string]string{
		"cat":                          "cat",
		"automobile_and_truck_class_3": "automobile…uck_class_3",
		"exactly_twenty_two_ch_":       "exactly_twenty_two_ch_",
		"ééééééééééééééééééééééééééééééé": "éééééééééé…ééééééééééé",
	} {
		if got := shorten(in); got != want {
			t.Errorf("shorten(%q) = %q, want %q", in, got, want)
		}
	}
}
