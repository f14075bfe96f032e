package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/unlearn-tool/unlearn/schema"
)

// ScoreLine is the terminal's summary of a score: F and the final score
// with their intervals, the mean KLoM on the three sets, U-LiRA's accuracy
// with its interval where the report has it, and K.
func ScoreLine(r *schema.ScoreReport) string {
	fq := r.ForgetQuality
	line := fmt.Sprintf("forget quality F %.3f [%.3f, %.3f]", fq.Estimate, fq.Lo, fq.Hi)
	if f := r.FinalScore; f != nil {
		line += fmt.Sprintf(", final score %.3f [%.3f, %.3f]", f.Estimate, f.Lo, f.Hi)
	}
	line += fmt.Sprintf(", mean KLoM forget %.3f, retain %.3f, test %.3f",
		r.KLoM.Forget.Estimate, r.KLoM.Retain, r.KLoM.Test)
	if u := r.ULiRA; u != nil {
		line += fmt.Sprintf(", U-LiRA accuracy %.3f [%.3f, %.3f]", u.Accuracy.Estimate, u.Accuracy.Lo, u.Accuracy.Hi)
	}
	return line + fmt.Sprintf(" (K = %d)", r.Settings.Setup.K)
}

// ScoreHTML renders a per-example forgetting audit (score.json) as one
// self-contained page, like HTML: the scores with their intervals, the
// histogram of the forget examples' ε by bucket, and ε per example against
// the share of unlearned and of retrained models that classify it
// correctly.
func ScoreHTML(rep *schema.ScoreReport) ([]byte, error) {
	if len(rep.Forget) == 0 {
		return nil, fmt.Errorf("report: no forget examples to show")
	}
	// ε by bucket: [0, 0.5), [0.5, 1), … up to MaxEpsilon, then ≥ it.
	nb := int(math.Round(rep.MaxEpsilon / 0.5))
	labels := make([]string, nb+1)
	shares := make([]float64, nb+1)
	for b := range nb {
		labels[b] = fmt.Sprintf("%.1f", float64(b)*0.5)
	}
	labels[nb] = fmt.Sprintf("≥%g", rep.MaxEpsilon)
	for _, e := range rep.Forget {
		b := min(nb, int(e.Epsilon/0.5))
		shares[b] += 1 / float64(len(rep.Forget))
	}
	hist, err := barFigure("ε per forget example", "share of the forget set (%)", labels,
		[]series{{"forget examples", shares, colForget}},
		"Each forget example's ε, by the competition's buckets (lower edge shown): the best threshold test "+
			"between the K unlearned and the K retrained models' margins. Low ε: the unlearned models look "+
			"retrained; the last bar scores 0.")
	if err != nil {
		return nil, err
	}
	type ex = schema.ScoreForgetExample
	scatter, err := epsilonScatter(rep, "ε against forget accuracy", "share of models classifying the example correctly",
		[]scoreSide{
			{"unlearned models", colModel, func(e ex) float64 { return e.UnlearnedCorrect }},
			{"retrained models", colOracle, func(e ex) float64 { return e.RetrainedCorrect }},
		}, fmt.Sprintf("One point per forget example and side (ε above %g drawn at %g). An example the "+
			"unlearned models still classify correctly more often than the retrained ones, with a high ε, is one "+
			"the method did not forget.", rep.MaxEpsilon, rep.MaxEpsilon+0.5))
	if err != nil {
		return nil, err
	}
	figs := []Figure{hist, scatter}
	// The SVC MIA's verdicts per example, where the tasks recorded them.
	var svcSides []scoreSide
	if rep.Forget[0].UnlearnedSVCNonMember != nil {
		svcSides = append(svcSides, scoreSide{"unlearned models", colModel,
			func(e ex) float64 { return *e.UnlearnedSVCNonMember }})
	}
	if rep.Forget[0].RetrainedSVCNonMember != nil {
		svcSides = append(svcSides, scoreSide{"retrained models", colOracle,
			func(e ex) float64 { return *e.RetrainedSVCNonMember }})
	}
	if len(svcSides) > 0 {
		f, err := epsilonScatter(rep, "ε against the SVC MIA's verdict",
			"share of models whose SVC MIA calls the example a non-member", svcSides,
			"One point per forget example and side: SalUn's SVC MIA (true-label confidence), fitted per model, "+
				"calls the example a non-member in this share of the models. The population-level MIA averages "+
				"this axis; ε shows which examples it cannot tell apart.")
		if err != nil {
			return nil, err
		}
		figs = append(figs, f)
	}
	var buf bytes.Buffer
	err = scorePage.Execute(&buf, struct {
		R       *schema.ScoreReport
		Figures []Figure
	}{rep, figs})
	return buf.Bytes(), err
}

// scoreSide is one side's series of a scatter: its name, colour and the
// per-example share it plots.
type scoreSide struct {
	name string
	c    color.RGBA
	get  func(schema.ScoreForgetExample) float64
}

// epsilonScatter draws ε per forget example against a per-example share,
// one series per side.
func epsilonScatter(rep *schema.ScoreReport, title, xLabel string, sides []scoreSide, caption string) (Figure, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = "ε"
	ch := &chart{p: p}
	for _, s := range sides {
		xy := make(plotter.XYs, len(rep.Forget))
		for i, e := range rep.Forget {
			xy[i].X, xy[i].Y = s.get(e), math.Min(e.Epsilon, rep.MaxEpsilon+0.5)
		}
		sc, err := plotter.NewScatter(xy)
		if err != nil {
			return Figure{}, err
		}
		sc.GlyphStyle.Color = withAlpha(s.c, 0xa0)
		sc.GlyphStyle.Radius = vg.Points(2.5)
		sc.GlyphStyle.Shape = draw.CircleGlyph{}
		p.Add(sc)
		ch.legend = append(ch.legend, legendEntry{name: s.name, fill: sc.GlyphStyle.Color})
	}
	p.X.Min, p.X.Max = -0.05, 1.05
	p.Y.Min, p.Y.Max = 0, rep.MaxEpsilon+0.7
	return figure(ch, plotWidth, plotHeight, p.Title.Text, caption)
}

// scorePageHTML is the score page's template.
//
//go:embed score.html.tmpl
var scorePageHTML string

var scorePage = template.Must(template.New("score").Funcs(template.FuncMap{
	"frac": frac, "num": func(v float64) string { return fmt.Sprintf("%.3f", v) },
}).Parse(scorePageHTML))
