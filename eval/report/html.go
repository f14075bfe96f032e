package report

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"github.com/unlearn-tool/unlearn/internal/textio"
	"html/template"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/schema"
)

// Figure is one embedded plot.
type Figure struct {
	Title   string
	Caption string
	Alt     string
	// Src is the attribute src="data:image/png;base64,...", given as
	// HTMLAttr so the base64 text is written as is (html/template would
	// otherwise write '+' as an entity; browsers read both).
	Src   template.HTMLAttr
	Width int // CSS pixels
}

type figureRow struct {
	Heading string
	Text    string
	Figures []Figure
}

// HTML renders rep as one self-contained page: the metrics table, accuracy
// bars against the oracle, per-class accuracy, the MIA scores and the
// distributions of the MIA features for shadow members, shadow
// non-members and the forget set, then the provenance (paths, SHA-256,
// settings). Plots are PNG data URIs and a Content-Security-Policy forbids
// every request, so the page opens offline and loads nothing. rep needs its
// Metrics; the distribution plots come from ms (the MIADetail of the
// model's and the oracle's eval.Metrics; nil ones are left out).
func HTML(rep *schema.Report, ms eval.Measurements) ([]byte, error) {
	if rep.Metrics == nil {
		return nil, fmt.Errorf("report: no metrics to show")
	}
	var oracle *schema.Metrics
	if rep.Oracle != nil {
		oracle = rep.Oracle.Metrics
	}
	var rows []figureRow

	// Accuracy against the oracle.
	var accLabels []string
	var mv, ov []float64
	for _, k := range schema.AccuracyKeys {
		v, ok := rep.Accuracy.Get(k)
		if !ok {
			continue
		}
		accLabels = append(accLabels, k)
		mv = append(mv, v)
		if oracle != nil {
			o, _ := oracle.Accuracy.Get(k)
			ov = append(ov, o)
		}
	}
	ss := []series{{"model", mv, colModel}}
	if oracle != nil {
		ss = append(ss, series{"oracle", ov, colOracle})
	}
	var figs []Figure
	f, err := barFigure("Accuracy", "accuracy (%)", accLabels, ss,
		"Accuracy of the model (blue) and, when given, the oracle retrained without the forget set (orange). After good unlearning the forget bar matches the oracle's and the others stay.")
	if err != nil {
		return nil, err
	}
	figs = append(figs, f)
	if rep.MIA != nil {
		var mlabels []string
		var mm, om []float64
		for _, k := range schema.MIAKeys {
			v, ok := rep.MIA.Get(k)
			if !ok {
				continue
			}
			mlabels = append(mlabels, k)
			mm = append(mm, v)
			if oracle != nil {
				o, _ := oracle.MIA.Get(k)
				om = append(om, o)
			}
		}
		ss := []series{{"model", mm, colModel}}
		if oracle != nil && oracle.MIA != nil {
			ss = append(ss, series{"oracle", om, colOracle})
		}
		f, err := barFigure("Membership inference", "score (%)", mlabels, ss,
			"SVC scores: share of the forget set the attack calls non-member (SalUn's MIA-Efficacy). loss_lr: accuracy of telling forget from test losses (50% = chance). Good unlearning brings each bar to the oracle's.")
		if err != nil {
			return nil, err
		}
		figs = append(figs, f)
	}
	rows = append(rows, figureRow{Heading: "Overview", Figures: figs})

	// Per-class accuracy.
	figs = nil
	names := []string(nil)
	if rep.Data != nil {
		names = rep.Data.ClassNames
	}
	for _, sp := range []struct {
		name string
		m, o []schema.ClassAccuracy
	}{
		{"test", rep.PerClass.Test, perClassOf(oracle, "test")},
		{"forget", rep.PerClass.Forget, perClassOf(oracle, "forget")},
		{"retain", rep.PerClass.Retain, perClassOf(oracle, "retain")},
	} {
		if sp.m == nil {
			continue
		}
		var labels []string
		var a, b []float64
		for c, ca := range sp.m {
			if ca.Accuracy == nil {
				continue
			}
			label := strconv.Itoa(c)
			if c < len(names) && names[c] != "" {
				label = names[c]
			}
			labels = append(labels, label)
			a = append(a, *ca.Accuracy)
			if sp.o != nil && c < len(sp.o) && sp.o[c].Accuracy != nil {
				b = append(b, *sp.o[c].Accuracy)
			} else {
				b = append(b, 0)
			}
		}
		ss := []series{{"model", a, colModel}}
		if oracle != nil && sp.o != nil {
			ss = append(ss, series{"oracle", b, colOracle})
		}
		f, err := barFigure("Per-class accuracy: "+sp.name, "accuracy (%)", labels, ss,
			fmt.Sprintf("Accuracy on each class of the %s split that has examples.", sp.name))
		if err != nil {
			return nil, err
		}
		figs = append(figs, f)
	}
	rows = append(rows, figureRow{Heading: "Per class", Figures: figs})

	// MIA feature distributions.
	if ms.Model != nil && ms.Model.MIADetail != nil {
		text := "Distributions of the attack features for the shadow members (retain examples, green), the shadow non-members (test split, grey) and the forget set (red). The SVC learns to separate green from grey; the score is the share of red it places on the grey side. After good unlearning the red histogram looks like the oracle's. The probability-vector feature has one dimension per class and is not drawn."
		models := []struct {
			name string
			m    *eval.Metrics
		}{{"model", ms.Model}}
		if oracle != nil && ms.Oracle != nil && ms.Oracle.MIADetail != nil {
			models = append(models, struct {
				name string
				m    *eval.Metrics
			}{"oracle", ms.Oracle})
		}
		for _, feat := range []struct {
			name, xlabel string
			get          func(*eval.FeatureValues) []float64
			bins         int
			clip         bool
		}{
			{"correctness", "prediction correct (0 or 1)", func(f *eval.FeatureValues) []float64 { return f.Correctness }, 2, false},
			{"confidence", "probability of the true label", func(f *eval.FeatureValues) []float64 { return f.Confidence }, 30, false},
			{"entropy", "entropy of the prediction (nats)", func(f *eval.FeatureValues) []float64 { return f.Entropy }, 30, false},
			{"m_entropy", "modified entropy (nats)", func(f *eval.FeatureValues) []float64 { return f.MEntropy }, 30, true},
			{"loss", "cross-entropy loss (loss_lr's feature)", func(f *eval.FeatureValues) []float64 { return f.Loss }, 30, true},
		} {
			var figs []Figure
			for _, md := range models {
				sv := md.m.MIADetail.SVC
				p, err := distribution(fmt.Sprintf("%s: %s", md.name, feat.name), feat.xlabel, []series{
					{"members", feat.get(sv.Members), colMember},
					{"non-members", feat.get(sv.NonMembers), colNonMem},
					{"forget", feat.get(sv.Target), colForget},
				}, feat.bins, feat.clip)
				if err != nil {
					return nil, err
				}
				f, err := figure(p, plotWidth, plotHeight, fmt.Sprintf("%s of the %s", feat.name, md.name), "")
				if err != nil {
					return nil, err
				}
				figs = append(figs, f)
			}
			rows = append(rows, figureRow{Heading: "MIA feature: " + feat.name, Text: text, Figures: figs})
			text = ""
		}
	}

	var buf bytes.Buffer
	err = page.Execute(&buf, struct {
		R       *schema.Report
		Rows    []Row
		Figures []figureRow
	}{rep, Rows(rep), rows})
	if err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func perClassOf(m *schema.Metrics, split string) []schema.ClassAccuracy {
	if m == nil {
		return nil
	}
	switch split {
	case "test":
		return m.PerClass.Test
	case "forget":
		return m.PerClass.Forget
	case "retain":
		return m.PerClass.Retain
	}
	return nil
}

func barFigure(title, ylabel string, labels []string, ss []series, caption string) (Figure, error) {
	p, err := groupedBars(title, ylabel, labels, ss)
	if err != nil {
		return Figure{}, err
	}
	return figure(p, plotWidth, plotHeight, title, caption)
}

func figure(p *plot.Plot, w, h vg.Length, alt, caption string) (Figure, error) {
	b, err := renderPNG(p, w, h)
	if err != nil {
		return Figure{}, err
	}
	return Figure{
		Title:   p.Title.Text,
		Alt:     alt,
		Caption: caption,
		Src:     template.HTMLAttr(`src="data:image/png;base64,` + base64.StdEncoding.EncodeToString(b) + `"`),
		Width:   int(w.Points() * 96 / 72),
	}, nil
}

func pct(v *float64) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf("%.2f%%", 100**v)
}

func points(v *float64) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf("%+.2f", 100**v)
}

func gap(v *float64) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf("%.2f", 100**v)
}

func frac(v float64) string { return fmt.Sprintf("%.2f%%", 100*v) }

// rate prints a learning rate to 4 significant digits (a range test's
// candidates are products like 0.3/√10 = 0.09486832980505139).
func rate(lr float64) string { return fmt.Sprintf("%.4g", lr) }

// trained says how many epochs the run trained: the auto schedule's last
// epoch and, when it differs, the epoch whose state is the result.
func trained(u *schema.Unlearning) string {
	if a := u.Auto; a != nil {
		s := textio.Count(a.StopEpoch, "epoch")
		if a.Epoch != a.StopEpoch && a.Epoch > 0 {
			s += fmt.Sprintf(" (the result is epoch %d)", a.Epoch)
		}
		return s
	}
	return textio.Count(u.Epochs, "epoch")
}

// cost says the run's time against the retraining estimate as the terminal
// does (WriteRunSummary): "N× this run" when the run was faster, "so this
// run cost N× retraining" when retraining would have been cheaper.
func cost(speedup float64) string {
	if speedup >= 1 {
		return fmt.Sprintf("%.1f× this run", speedup)
	}
	return fmt.Sprintf("so this run cost %.1f× retraining", 1/speedup)
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"pct": pct, "points": points, "gap": gap, "frac": frac, "rate": rate, "trained": trained, "cost": cost, "retrainBasis": RetrainBasis, "epochsEquivalent": EpochsEquivalent, "epochs": func(n int) string { return textio.Count(n, "epoch") }, "retrainEpochs": retrainEpochs,
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>unlearn: evaluation of {{.R.Model.Path}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1100px; padding: 0 1rem; color: #222; }
h1 { font-size: 1.5rem; margin-bottom: .2rem; }
h2 { font-size: 1.15rem; margin-top: 2rem; border-bottom: 1px solid #ddd; padding-bottom: .2rem; }
.sub { color: #555; margin-top: 0; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { padding: .25rem .7rem; text-align: right; border-bottom: 1px solid #eee; }
th { background: #f5f5f5; }
td.name, th.name { text-align: left; }
td.help { text-align: left; color: #666; font-size: .85rem; }
tr.group td { text-align: left; font-weight: 600; background: #fafafa; }
.figs { display: flex; flex-wrap: wrap; gap: 1rem; }
figure { margin: 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: .85rem; color: #555; max-width: 620px; }
code { font-size: .85rem; }
dl { display: grid; grid-template-columns: max-content auto; gap: .2rem 1rem; }
dt { font-weight: 600; }
dd { margin: 0; word-break: break-all; }
.note { color: #8a4b00; }
</style>
</head>
<body>
<h1>Unlearning evaluation</h1>
<p class="sub">{{with .R.Before}}unlearned from <code>{{.Model.Path}}</code>: {{end}}model <code>{{.R.Model.Path}}</code>{{if .R.Oracle}} against the oracle <code>{{.R.Oracle.Model.Path}}</code>{{end}}{{if .R.Forget}}, forget set <code>{{.R.Forget.Path}}</code> ({{.R.Forget.N}} examples){{end}}{{if .R.Data}}, data <code>{{.R.Data.Path}}</code>{{end}}</p>

<h2>Metrics</h2>
<table>
<tr><th class="name">metric</th>{{if .R.Before}}<th>before</th>{{end}}<th>model</th>{{if .R.Oracle}}<th>oracle</th><th>Δ (points)</th>{{end}}<th class="name">meaning</th></tr>
{{- $g := ""}}{{$o := .R.Oracle}}{{$b := .R.Before}}
{{- range .Rows}}
{{- if ne .Group $g}}{{$g = .Group}}<tr class="group"><td colspan="{{if $o}}{{if $b}}6{{else}}5{{end}}{{else}}{{if $b}}4{{else}}3{{end}}{{end}}">{{.Group}}</td></tr>{{end}}
<tr><td class="name">{{.Name}}</td>{{if $b}}<td>{{pct .Before}}</td>{{end}}<td>{{pct .Model}}</td>{{if $o}}<td>{{pct .Oracle}}</td><td>{{if eq .Group "summary"}}{{gap .Delta}}{{else}}{{points .Delta}}{{end}}</td>{{end}}<td class="help">{{.Help}}</td></tr>
{{- end}}
</table>
{{with .R.Unlearning}}<h2>Unlearning</h2>
<dl>
<dt>method</dt><dd>{{.Method}}: localization {{.Strategy}}{{if ne .Strategy "full"}} (budget {{.Budget}}){{end}}, algorithm {{.Algorithm}}, {{trained .}}, lr {{rate .LR}}, batch {{.BatchSize}}, seed {{.Seed}}</dd>
{{with .Audit}}<dt>changed</dt><dd>{{.ChangedParams}} of {{.TotalParams}} parameters in {{len .Changed}} tensors; every other parameter bit-identical to the input{{if .FoldedStatistics}} except {{.FoldedStatistics}} convolution weights and biases outside the mask that carry their channels' updated normalization statistics (BatchNormalization restored for the run and folded back){{end}}</dd>{{end}}
<dt>time</dt><dd>localize {{printf "%.1f" .Timings.LocalizeS}} s, unlearn {{printf "%.1f" .Timings.UnlearnS}} s{{if .EpochsEquivalent}} ({{epochsEquivalent .}}){{end}}{{if .RetrainEstimateS}}; retraining from scratch ({{retrainEpochs .}}) would take about {{printf "%.0f" .RetrainEstimateS}} s{{with retrainBasis .}} ({{.}}){{end}}, {{cost .Speedup}}{{end}}</dd>
{{with .Auto}}<dt>auto schedule</dt><dd>lr {{rate .LR}}{{if .RangeTest}} chosen by a range test ({{range $i, $t := .RangeTest}}{{if $i}}, {{end}}{{rate $t.LR}}: {{if $t.Diverged}}diverged{{else}}{{printf "%.4f" $t.Loss}}{{end}}{{end}}; retain probe loss after {{.RangeSteps}} steps){{end}}; stopped after epoch {{.StopEpoch}} of at most {{.MaxEpochs}} ({{.Reason}}){{if ne .Epoch .StopEpoch}}, result: epoch {{.Epoch}}{{end}}: {{.Detail}}</dd>{{end}}
{{range .Notes}}<dt class="note">note</dt><dd class="note">{{.}}</dd>{{end}}
<dt>verdict</dt><dd>{{if .Vouched}}vouched for: the auto schedule met its conditions and no signal disagrees{{else if .Flags}}<strong>not vouched for</strong> ({{range $i, $f := .Flags}}{{if $i}}, {{end}}{{$f.Kind}}{{end}}; see the notes above): check the result against an oracle before relying on it{{else if .Auto}}<strong>not vouched for</strong>: the auto schedule did not meet its conditions{{else}}a fixed recipe: no rule checked the result{{end}}</dd>
</dl>
{{with $px := .Proxies}}<h2>Oracle-free proxies</h2>
<p>What can be measured without a retrained oracle: accuracy on the test split (utility; the auto rule's) and on {{.HoldoutSize}} retain examples held out of training, the forget set against test examples that show what "never seen" looks like ({{if .Reference.IID}}an IID forget set: the whole test split{{else}}a non-IID forget set: the {{.Reference.NTest}} test examples of classes {{.Reference.Classes}}, weighted like the forget set{{end}}), and a membership-inference SVC fitted on held-out members against those reference non-members. Forgetting looks complete when the forget accuracy is near the reference's and the proxy MIA scores the forget set like the reference.</p>
<table>
<tr><th class="name">model</th><th>forget acc</th><th>reference acc</th><th>test acc</th><th>held-out acc</th><th>forget loss</th><th>reference loss</th>{{if .Before.MIA}}<th>MIA forget</th><th>MIA reference</th>{{end}}<th class="name">rule</th></tr>
<tr><td class="name">input</td><td>{{frac .Before.ForgetAccuracy}}</td><td>{{frac .Before.ReferenceAccuracy}}</td><td>{{frac .Before.TestAccuracy}}</td><td>{{frac .Before.HoldoutAccuracy}}</td><td>{{printf "%.4f" .Before.ForgetLoss}}</td><td>{{printf "%.4f" .Before.ReferenceLoss}}</td>{{with .Before.MIA}}<td>{{frac .Forget}}</td><td>{{frac .Reference}}</td>{{end}}<td class="help">test accuracy weighted like the held-out slice: {{frac .BeforeMatchedTest}}</td></tr>
{{range .Epochs}}<tr><td class="name">epoch {{.Epoch}} (lr {{printf "%.3g" .LR}})</td><td>{{frac .ForgetAccuracy}}</td><td>{{frac .ReferenceAccuracy}}</td><td>{{frac .TestAccuracy}}</td><td>{{frac .HoldoutAccuracy}}</td><td>{{printf "%.4f" .ForgetLoss}}</td><td>{{printf "%.4f" .ReferenceLoss}}</td>{{with .MIA}}<td>{{frac .Forget}}</td><td>{{frac .Reference}}</td>{{end}}<td class="help">{{with .Decision}}{{if .Stop}}stop: {{.Reason}}{{else}}go on{{end}}{{end}}</td></tr>
{{end}}<tr><td class="name">result</td><td>{{frac .After.ForgetAccuracy}}</td><td>{{frac .After.ReferenceAccuracy}}</td><td>{{frac .After.TestAccuracy}}</td><td>{{frac .After.HoldoutAccuracy}}</td><td>{{printf "%.4f" .After.ForgetLoss}}</td><td>{{printf "%.4f" .After.ReferenceLoss}}</td>{{with .After.MIA}}<td>{{frac .Forget}}</td><td>{{frac .Reference}}</td>{{end}}<td class="help"></td></tr>
{{with .Estimate}}<tr><td class="name">oracle estimate</td><td>{{frac .ReferenceAccuracy}}</td><td></td><td>{{frac .TestAccuracy}}</td><td></td><td></td><td></td>{{if $px.Before.MIA}}<td></td><td></td>{{end}}<td class="help">the input model's test predictions with each class's logit shifted by the log-ratio of its share of the training split without and with the forget set (largest shift {{printf "%.3f" .MaxShift}}{{if .Removed}}; classes {{.Removed}} removed entirely){{else}}){{end}}</td></tr>{{end}}
</table>{{end}}{{end}}
{{if .R.Oracle}}<p>Δ = oracle − model, in percentage points; agreement is the share of examples on which the two models predict the same class.</p>{{end}}
{{range .Figures}}
<h2>{{.Heading}}</h2>
{{if .Text}}<p>{{.Text}}</p>{{end}}
<div class="figs">
{{range .Figures}}<figure><img {{.Src}} alt="{{.Alt}}" width="{{.Width}}">{{if .Caption}}<figcaption>{{.Caption}}</figcaption>{{end}}</figure>
{{end}}</div>
{{end}}
<h2>Provenance</h2>
<dl>
<dt>model</dt><dd><code>{{.R.Model.Path}}</code> sha256 <code>{{.R.Model.SHA256}}</code></dd>
{{if .R.Oracle}}<dt>oracle</dt><dd><code>{{.R.Oracle.Model.Path}}</code> sha256 <code>{{.R.Oracle.Model.SHA256}}</code></dd>{{end}}
{{with .R.Data}}<dt>data</dt><dd><code>{{.Path}}</code> ({{.Format}}, {{.Classes}} classes) sha256 <code>{{.SHA256}}</code></dd>{{end}}
{{with .R.Forget}}<dt>forget set</dt><dd><code>{{.Path}}</code> ({{.N}} ids) sha256 <code>{{.SHA256}}</code></dd>{{end}}
<dt>examples</dt><dd>train {{.R.Counts.Train}}, test {{.R.Counts.Test}}{{with .R.Counts.Forget}}, forget {{.}}{{end}}{{with .R.Counts.Retain}}, retain {{.}}{{end}}</dd>
<dt>runtime</dt><dd>batch {{.R.Settings.BatchSize}}, device {{.R.Settings.Device}}, threads {{.R.Settings.Threads}}</dd>
{{with .R.Settings.MIA}}<dt>MIA</dt><dd>{{.ShadowMembers}} shadow members (first retain examples), {{.ShadowNonMembers}} shadow non-members (test split), {{.Target}} targets (forget set); SVC C={{.SVCC}}, gamma {{.SVCGamma}}, tol {{.SVCTol}}; modified entropy {{.MEntropy}}; loss attack {{.LossSplits}} stratified shuffle splits (test share {{.LossTestFraction}}), C={{.LossC}}, {{.LossPerClass}} per class, seed {{.Seed}}</dd>
{{range .Notes}}<dt class="note">note</dt><dd class="note">{{.}}</dd>{{end}}{{end}}
<dt>time</dt><dd>model {{printf "%.1f" .R.Timings.TotalS}} s{{if .R.Oracle}}, oracle {{printf "%.1f" .R.Oracle.Timings.TotalS}} s{{end}}</dd>
{{if .R.Tool}}<dt>tool</dt><dd>{{.R.Tool}}</dd>{{end}}
</dl>
</body>
</html>
`))
