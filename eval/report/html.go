package report

import (
	"bytes"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"image/color"
	"strconv"

	"gonum.org/v1/plot/vg"

	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/internal/textio"
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
	ms3 := reportModels(rep)
	var rows []figureRow
	overview, err := overviewFigures(rep, ms3)
	if err != nil {
		return nil, err
	}
	rows = append(rows, figureRow{Heading: "Overview", Figures: overview})
	perClass, err := perClassFigures(rep, ms3)
	if err != nil {
		return nil, err
	}
	rows = append(rows, figureRow{Heading: "Per class", Figures: perClass})
	features, err := featureRows(rep, ms)
	if err != nil {
		return nil, err
	}
	rows = append(rows, features...)

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

// shownModel is one model of the report's charts: the input model before
// unlearning (when the report has it), the model, the oracle (when given).
type shownModel struct {
	name  string
	m     *schema.Metrics
	color color.RGBA
}

// reportModels returns the report's models in the charts' order.
func reportModels(rep *schema.Report) []shownModel {
	var ms []shownModel
	if rep.Before != nil && rep.Before.Metrics != nil {
		ms = append(ms, shownModel{"before", rep.Before.Metrics, colBefore})
	}
	ms = append(ms, shownModel{"model", rep.Metrics, colModel})
	if rep.Oracle != nil && rep.Oracle.Metrics != nil {
		ms = append(ms, shownModel{"oracle", rep.Oracle.Metrics, colOracle})
	}
	return ms
}

// legendWords says which colour is which model, for the captions.
func legendWords(ms []shownModel) string {
	words := map[string]string{"before": "the input model before unlearning (grey)", "model": "the model (blue)",
		"oracle": "the oracle retrained without the forget set (orange)"}
	var parts []string
	for _, m := range ms {
		parts = append(parts, words[m.name])
	}
	return textio.JoinAnd(parts)
}

// overviewFigures draws the accuracy and the MIA scores of every model.
func overviewFigures(rep *schema.Report, ms []shownModel) ([]Figure, error) {
	var labels []string
	for _, k := range schema.AccuracyKeys {
		if _, ok := rep.Accuracy.Get(k); ok {
			labels = append(labels, k)
		}
	}
	var ss []series
	for _, m := range ms {
		s := series{name: m.name, color: m.color}
		for _, k := range labels {
			v, _ := m.m.Accuracy.Get(k)
			s.values = append(s.values, v)
		}
		ss = append(ss, s)
	}
	acc, err := barFigure("Accuracy", "accuracy (%)", labels, ss, "Accuracy of "+legendWords(ms)+
		". After good unlearning the forget bar matches the oracle's and the others stay.")
	if err != nil {
		return nil, err
	}
	figs := []Figure{acc}
	if rep.MIA == nil {
		return figs, nil
	}
	labels = nil
	for _, k := range schema.MIAKeys {
		if _, ok := rep.MIA.Get(k); ok {
			labels = append(labels, k)
		}
	}
	ss = nil
	var shown []shownModel
	for _, m := range ms {
		if m.m.MIA == nil {
			continue
		}
		s := series{name: m.name, color: m.color}
		for _, k := range labels {
			v, _ := m.m.MIA.Get(k)
			s.values = append(s.values, v)
		}
		ss = append(ss, s)
		shown = append(shown, m)
	}
	mia, err := barFigure("Membership inference", "score (%)", labels, ss, "Scores of "+legendWords(shown)+
		". SVC scores: share of the forget set the attack calls non-member (SalUn's MIA-Efficacy). "+
		"loss_lr: accuracy of telling forget from test losses (50% = chance). "+
		"Good unlearning brings each bar to the oracle's.")
	if err != nil {
		return nil, err
	}
	return append(figs, mia), nil
}

// perClassFigures draws the accuracy on each class of the test, forget
// and retain splits, for every model that has the split, named by the
// dataset's class names where it has them.
func perClassFigures(rep *schema.Report, ms []shownModel) ([]Figure, error) {
	var names []string
	if rep.Data != nil {
		names = rep.Data.ClassNames
	}
	var figs []Figure
	for _, split := range []string{"test", "forget", "retain"} {
		own := perClassOf(rep.Metrics, split)
		if own == nil {
			continue
		}
		var labels []string
		var classes []int
		for c, ca := range own {
			if ca.Accuracy == nil {
				continue
			}
			label := strconv.Itoa(c)
			if c < len(names) && names[c] != "" {
				label = names[c]
			}
			labels = append(labels, label)
			classes = append(classes, c)
		}
		var ss []series
		var shown []shownModel
		for _, m := range ms {
			pc := perClassOf(m.m, split)
			if pc == nil {
				continue
			}
			s := series{name: m.name, color: m.color}
			for _, c := range classes {
				v := 0.0 // a class the other model's split lacks
				if c < len(pc) && pc[c].Accuracy != nil {
					v = *pc[c].Accuracy
				}
				s.values = append(s.values, v)
			}
			ss = append(ss, s)
			shown = append(shown, m)
		}
		f, err := barFigure("Per-class accuracy: "+split, "accuracy (%)", labels, ss,
			fmt.Sprintf("Accuracy of %s on each class of the %s split that has examples.", legendWords(shown), split))
		if err != nil {
			return nil, err
		}
		figs = append(figs, f)
	}
	return figs, nil
}

const featureText = "Distributions of the attack features for the shadow members (retain examples, green), " +
	"the shadow non-members (test split, grey) and the forget set (red). The SVC learns to separate green from " +
	"grey; the score is the share of red it places on the grey side. After good unlearning the red histogram " +
	"looks like the oracle's. The probability-vector feature has one dimension per class and is not drawn."

// featureRows draws the MIA feature distributions of the model and the
// oracle (from their measurements; nil ones are left out).
func featureRows(rep *schema.Report, ms eval.Measurements) ([]figureRow, error) {
	if ms.Model == nil || ms.Model.MIADetail == nil {
		return nil, nil
	}
	type measured struct {
		name string
		m    *eval.Metrics
	}
	models := []measured{{"model", ms.Model}}
	if rep.Oracle != nil && rep.Oracle.Metrics != nil && ms.Oracle != nil && ms.Oracle.MIADetail != nil {
		models = append(models, measured{"oracle", ms.Oracle})
	}
	type feature struct {
		name, xlabel string
		get          func(*eval.FeatureValues) []float64
		bins         int
		clip         bool
	}
	type fv = eval.FeatureValues
	var rows []figureRow
	text := featureText
	for _, feat := range []feature{
		{"correctness", "prediction correct (0 or 1)", func(f *fv) []float64 { return f.Correctness }, 2, false},
		{"confidence", "probability of the true label", func(f *fv) []float64 { return f.Confidence }, 30, false},
		{"entropy", "entropy of the prediction (nats)", func(f *fv) []float64 { return f.Entropy }, 30, false},
		{"m_entropy", "modified entropy (nats)", func(f *fv) []float64 { return f.MEntropy }, 30, true},
		{"loss", "cross-entropy loss (loss_lr's feature)", func(f *fv) []float64 { return f.Loss }, 30, true},
	} {
		var figs []Figure
		for _, md := range models {
			sv := md.m.MIADetail.SVC
			ch, err := distribution(fmt.Sprintf("%s: %s", md.name, feat.name), feat.xlabel, []series{
				{"members", feat.get(sv.Members), colMember},
				{"non-members", feat.get(sv.NonMembers), colNonMem},
				{"forget", feat.get(sv.Target), colForget},
			}, feat.bins, feat.clip)
			if err != nil {
				return nil, err
			}
			f, err := figure(ch, plotWidth, plotHeight, fmt.Sprintf("%s of the %s", feat.name, md.name), "")
			if err != nil {
				return nil, err
			}
			figs = append(figs, f)
		}
		rows = append(rows, figureRow{Heading: "MIA feature: " + feat.name, Text: text, Figures: figs})
		text = ""
	}
	return rows, nil
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
	ch, err := groupedBars(title, ylabel, labels, ss)
	if err != nil {
		return Figure{}, err
	}
	return figure(ch, plotWidth, plotHeight, title, caption)
}

func figure(ch *chart, w, h vg.Length, alt, caption string) (Figure, error) {
	b, _, err := ch.png(w, ch.height(w, h))
	if err != nil {
		return Figure{}, err
	}
	return Figure{
		Title:   ch.p.Title.Text,
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

// pageHTML is the page's template: the table, the figures and the
// provenance.
//
//go:embed page.html.tmpl
var pageHTML string

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"pct": pct, "points": points, "gap": gap, "frac": frac, "rate": rate, "trained": trained, "cost": cost,
	"retrainBasis": RetrainBasis, "epochsEquivalent": EpochsEquivalent, "retrainEpochs": retrainEpochs,
	"epochs": func(n int) string { return textio.Count(n, "epoch") },
}).Parse(pageHTML))
