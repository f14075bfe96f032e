package report

import (
	"bytes"
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
	line := fmt.Sprintf("forget quality F %.3f [%.3f, %.3f]", r.ForgetQuality.Estimate, r.ForgetQuality.Lo, r.ForgetQuality.Hi)
	if f := r.FinalScore; f != nil {
		line += fmt.Sprintf(", final score %.3f [%.3f, %.3f]", f.Estimate, f.Lo, f.Hi)
	}
	line += fmt.Sprintf(", mean KLoM forget %.3f, retain %.3f, test %.3f", r.KLoM.Forget.Estimate, r.KLoM.Retain, r.KLoM.Test)
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
	hist, err := barFigure("ε per forget example", "share of the forget set (%)", labels, []series{{"forget examples", shares, colForget}},
		"Each forget example's ε, by the competition's buckets (lower edge shown): the best threshold test between the K unlearned and the K retrained models' margins. Low ε: the unlearned models look retrained; the last bar scores 0.")
	if err != nil {
		return nil, err
	}
	scatter, err := epsilonScatter(rep, "ε against forget accuracy", "share of models classifying the example correctly", []scoreSide{
		{"unlearned models", colModel, func(e schema.ScoreForgetExample) float64 { return e.UnlearnedCorrect }},
		{"retrained models", colOracle, func(e schema.ScoreForgetExample) float64 { return e.RetrainedCorrect }},
	}, fmt.Sprintf("One point per forget example and side (ε above %g drawn at %g). An example the unlearned models still classify correctly more often than the retrained ones, with a high ε, is one the method did not forget.", rep.MaxEpsilon, rep.MaxEpsilon+0.5))
	if err != nil {
		return nil, err
	}
	figs := []Figure{hist, scatter}
	// The SVC MIA's verdicts per example, where the tasks recorded them.
	var svcSides []scoreSide
	if rep.Forget[0].UnlearnedSVCNonMember != nil {
		svcSides = append(svcSides, scoreSide{"unlearned models", colModel, func(e schema.ScoreForgetExample) float64 { return *e.UnlearnedSVCNonMember }})
	}
	if rep.Forget[0].RetrainedSVCNonMember != nil {
		svcSides = append(svcSides, scoreSide{"retrained models", colOracle, func(e schema.ScoreForgetExample) float64 { return *e.RetrainedSVCNonMember }})
	}
	if len(svcSides) > 0 {
		f, err := epsilonScatter(rep, "ε against the SVC MIA's verdict", "share of models whose SVC MIA calls the example a non-member", svcSides,
			"One point per forget example and side: SalUn's SVC MIA (true-label confidence), fitted per model, calls the example a non-member in this share of the models. The population-level MIA averages this axis; ε shows which examples it cannot tell apart.")
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
	p.Legend.Top = true
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
		p.Legend.Add(s.name, sc)
	}
	p.X.Min, p.X.Max = -0.05, 1.05
	p.Y.Min, p.Y.Max = 0, rep.MaxEpsilon+1.2 // room for the legend
	return figure(p, plotWidth, plotHeight, p.Title.Text, caption)
}

var scorePage = template.Must(template.New("score").Funcs(template.FuncMap{
	"frac": frac, "num": func(v float64) string { return fmt.Sprintf("%.3f", v) },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<title>unlearn: forgetting score</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; padding: 0 1rem; color: #222; }
table { border-collapse: collapse; } th, td { padding: .25rem .7rem; text-align: right; border-bottom: 1px solid #eee; }
td.name { text-align: left; } td.help { text-align: left; color: #666; font-size: .85rem; }
.figs { display: flex; flex-wrap: wrap; gap: 1rem; } figure { margin: 0; } figure img { max-width: 100%; height: auto; }
figcaption { font-size: .85rem; color: #555; max-width: 620px; } code { font-size: .85rem; }
</style>
</head>
<body>
{{$s := .R.Settings.Setup}}
<h2>Forgetting score ({{$s.K}} unlearned, {{$s.K}} retrained models)</h2>
<p>Method {{with $s.Method.Method}}{{.}}: {{end}}{{$s.Method.Strategy}} + {{$s.Method.Algorithm}} on <code>{{.R.Settings.Paths.Model}}</code>, forget set <code>{{.R.Settings.Paths.Forget}}</code> ({{$s.Forget}} examples), against models retrained from scratch without it ({{$s.Recipe.Epochs}} epochs, lr {{$s.Recipe.LR}}). Intervals: {{.R.Bootstrap.Resamples}} bootstrap resamples of the models, {{frac .R.Bootstrap.Level}}. See docs/SCORE.md for what the numbers mean and how large K must be.</p>
<table>
<tr><th class="name">score</th><th>estimate</th><th>interval</th><th class="name">meaning</th></tr>
<tr><td class="name">forget quality F</td><td>{{num .R.ForgetQuality.Estimate}}</td><td>[{{num .R.ForgetQuality.Lo}}, {{num .R.ForgetQuality.Hi}}]</td><td class="help">mean bucket value of ε over the forget set; higher is better, compare at equal K</td></tr>
{{with .R.FinalScore}}<tr><td class="name">final score</td><td>{{num .Estimate}}</td><td>[{{num .Lo}}, {{num .Hi}}]</td><td class="help">F · (RA unlearned / RA retrained) · (TA unlearned / TA retrained)</td></tr>{{end}}
<tr><td class="name">mean KLoM, forget</td><td>{{num .R.KLoM.Forget.Estimate}}</td><td>[{{num .R.KLoM.Forget.Lo}}, {{num .R.KLoM.Forget.Hi}}]</td><td class="help">KL divergence of the margin histograms (nats); 0 = indistinguishable</td></tr>
<tr><td class="name">mean KLoM, retain sample</td><td>{{num .R.KLoM.Retain}}</td><td></td><td class="help">{{$s.Samples.Retain}} retain examples</td></tr>
<tr><td class="name">mean KLoM, test sample</td><td>{{num .R.KLoM.Test}}</td><td></td><td class="help">{{$s.Samples.Test}} test examples</td></tr>
{{with .R.ULiRA}}<tr><td class="name">U-LiRA accuracy</td><td>{{num .Accuracy.Estimate}}</td><td>[{{num .Accuracy.Lo}}, {{num .Accuracy.Hi}}]</td><td class="help">per-example likelihood-ratio attack, unlearned against retrained targets, mean balanced accuracy; 0.5 = indistinguishable, 1 = told apart ({{.Folds}} folds, {{.Shadows}} shadows per side, {{.Variance}} variance; pooled AUC {{num .AUC}})</td></tr>{{end}}
</table>
<table>
<tr><th class="name">mean accuracy</th><th>forget</th><th>retain sample</th><th>test sample</th></tr>
<tr><td class="name">unlearned</td><td>{{frac .R.Accuracy.Unlearned.Forget}}</td><td>{{frac .R.Accuracy.Unlearned.Retain}}</td><td>{{frac .R.Accuracy.Unlearned.Test}}</td></tr>
<tr><td class="name">retrained</td><td>{{frac .R.Accuracy.Retrained.Forget}}</td><td>{{frac .R.Accuracy.Retrained.Retain}}</td><td>{{frac .R.Accuracy.Retrained.Test}}</td></tr>
</table>
{{if or .R.SVCMIA.Unlearned .R.SVCMIA.Retrained}}<table>
<tr><th class="name">SVC MIA on the forget set</th><th>unlearned</th><th>retrained</th><th class="name">meaning</th></tr>
<tr><td class="name">called non-member</td><td>{{with .R.SVCMIA.Unlearned}}{{frac .}}{{else}}–{{end}}</td><td>{{with .R.SVCMIA.Retrained}}{{frac .}}{{else}}–{{end}}</td><td class="help">SalUn's SVC on the true label's confidence, fitted per model, mean over the side's models</td></tr>
</table>{{end}}
<div class="figs">
{{range .Figures}}<figure><img {{.Src}} alt="{{.Alt}}" width="{{.Width}}">{{if .Caption}}<figcaption>{{.Caption}}</figcaption>{{end}}</figure>
{{end}}</div>
<p>model sha256 <code>{{$s.ModelSHA256}}</code>, data sha256 <code>{{$s.DataSHA256}}</code>, forget sha256 <code>{{$s.ForgetSHA256}}</code>{{with .R.Tool}}; {{.}}{{end}}</p>
</body>
</html>
`))
