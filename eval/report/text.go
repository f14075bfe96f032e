package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/unlearn-tool/unlearn/internal/textio"
	"github.com/unlearn-tool/unlearn/schema"
)

// WriteTable writes the terminal metrics table of rep: one row per metric
// (Rows), the model's value, the original model's when rep.Before is set,
// and with an oracle the oracle's and Δ in percentage points; then the
// example counts (the notes are the log's: Messages). It returns the first
// error of w.
func WriteTable(w io.Writer, rep *schema.Report) error {
	ew := &textio.ErrWriter{W: w}
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	oracle, before := rep.Oracle != nil, rep.Before != nil
	head := "metric\t"
	if before {
		head += "\t  before"
	}
	head += "\t   model"
	if oracle {
		head += "\t  oracle\tΔ (points)"
	}
	fmt.Fprintln(tw, head)
	group := ""
	for _, row := range Rows(rep) {
		g := ""
		if row.Group != group {
			g, group = row.Group, row.Group
		}
		switch row.Group {
		case "agreement":
			fmt.Fprintf(tw, "%s\t%s\t%s%8s", g, row.Name, skip(before), pctCell(row.Model))
		case "summary": // a mean of |Δ|: no sign
			fmt.Fprintf(tw, "%s\t%s\t%s%8s\t%8s\t%8.2f", g, row.Name, skip(before), "", "", 100**row.Delta)
		default:
			fmt.Fprintf(tw, "%s\t%s\t", g, row.Name)
			if before {
				fmt.Fprintf(tw, "%8s\t", pctCell(row.Before))
			}
			fmt.Fprintf(tw, "%8s", pctCell(row.Model))
			if oracle {
				fmt.Fprintf(tw, "\t%8s\t%8s", pctCell(row.Oracle), deltaCell(row.Delta))
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if rep.Counts.Forget != nil {
		fmt.Fprintf(ew, "examples: train %d, test %d, forget %d, retain %d",
			rep.Counts.Train, rep.Counts.Test, *rep.Counts.Forget, *rep.Counts.Retain)
	} else {
		fmt.Fprintf(ew, "examples: train %d, test %d", rep.Counts.Train, rep.Counts.Test)
	}
	if s := rep.Settings.MIA; s != nil {
		fmt.Fprintf(ew, "; MIA shadow members %d, non-members %d", s.ShadowMembers, s.ShadowNonMembers)
	}
	fmt.Fprintln(ew)
	if rep.MIA != nil {
		fmt.Fprintln(ew, "mia: share of the forget set each SVC calls non-member (SalUn); "+
			"loss_lr: attack accuracy, 50% = chance")
	}
	if oracle {
		fmt.Fprintln(ew, "Δ = oracle − model; agreement: same predicted class as the oracle")
	}
	return ew.Err
}

// compareColumn is one metric column of the comparison table: its title,
// the value of a model and the model's Δ to the oracle (nil: absent).
type compareColumn struct {
	title string
	get   func(m *schema.Metrics) *float64
	delta func(d *schema.Delta) *float64
}

// compareColumns are the metric columns of WriteCompare's table: forget,
// retain and test accuracy, and with membership inference the
// correctness and confidence SVC scores and the loss attack.
func compareColumns(withMIA bool) []compareColumn {
	type (
		met   = schema.Metrics
		delta = schema.Delta
	)
	cols := []compareColumn{
		{"forget", func(m *met) *float64 { return m.Accuracy.Forget }, func(d *delta) *float64 { return d.Accuracy.Forget }},
		{"retain", func(m *met) *float64 { return m.Accuracy.Retain }, func(d *delta) *float64 { return d.Accuracy.Retain }},
		{"test", func(m *met) *float64 { return &m.Accuracy.Test }, func(d *delta) *float64 { return &d.Accuracy.Test }},
	}
	if !withMIA {
		return cols
	}
	for _, k := range []string{"correctness", "confidence", "loss_lr"} {
		title := "mia " + k
		if k == "loss_lr" {
			title = "loss_lr"
		}
		cols = append(cols, compareColumn{title,
			func(m *schema.Metrics) *float64 { return ptr(m.MIA.Get(k)) },
			func(d *schema.Delta) *float64 {
				if d.MIA == nil {
					return nil
				}
				return ptr(d.MIA.Get(k))
			}})
	}
	return cols
}

// WriteCompare writes the terminal table of a comparison: the oracle's row,
// then one row per model with each value followed by its Δ in points, the
// agreement with the oracle on the forget set and the average gap; then
// what the columns mean. It returns the first error of w.
func WriteCompare(w io.Writer, rep *schema.CompareReport) error {
	ew := &textio.ErrWriter{W: w}
	cols := compareColumns(rep.Oracle.MIA != nil)
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "model")
	for _, c := range cols {
		fmt.Fprintf(tw, "\t%s", c.title)
	}
	fmt.Fprint(tw, "\tagree forget\tavg gap\n")
	fmt.Fprintf(tw, "%s (oracle)", rep.Oracle.Model.Path)
	for _, c := range cols {
		fmt.Fprintf(tw, "\t%s", pctCell(c.get(rep.Oracle.Metrics)))
	}
	fmt.Fprint(tw, "\t\t\n")
	for _, e := range rep.Models {
		fmt.Fprint(tw, e.Model.Path)
		for _, c := range cols {
			cell := pctCell(c.get(e.Metrics))
			if d := c.delta(e.Delta); d != nil {
				cell += fmt.Sprintf(" (%s)", deltaCell(d))
			}
			fmt.Fprintf(tw, "\t%s", cell)
		}
		agree, gap := "-", "-"
		if e.Agreement != nil && e.Agreement.Forget != nil {
			agree = pctCell(e.Agreement.Forget)
		}
		if e.Delta.AvgGap != nil {
			gap = fmt.Sprintf("%.2f", 100**e.Delta.AvgGap)
		}
		fmt.Fprintf(tw, "\t%s\t%s\n", agree, gap)
	}
	tw.Flush()
	fmt.Fprintf(ew, "values in %%, (Δ = oracle − model in points); forget set %s (%d of %d training examples)\n",
		rep.Forget.Path, rep.Forget.N, rep.Oracle.Counts.Train)
	if rep.Oracle.MIA != nil {
		fmt.Fprintln(ew, "mia: share of the forget set the SVC calls non-member (SalUn); "+
			"loss_lr: attack accuracy, 50% = chance")
	}
	fmt.Fprintln(ew, "avg gap: mean |Δ| over forget, retain and test accuracy and mia correctness (SalUn's Avg. Gap)")
	return ew.Err
}

// ProxiesLine summarises the oracle-free proxies of an unlearning run in
// one line for the terminal: forget, test and held-out retain accuracy
// before → after with the unseen reference, and the proxy MIA when both
// ends have one.
func ProxiesLine(p *schema.ProxyLog) string {
	b, a := p.Before, p.After
	line := fmt.Sprintf("proxies (no oracle): forget accuracy %.2f%% → %.2f%%, unseen reference %.2f%%; "+
		"test accuracy %.2f%% → %.2f%%; held-out retain accuracy %.2f%% → %.2f%% (%d examples, not trained on)",
		100*b.ForgetAccuracy, 100*a.ForgetAccuracy, 100*a.ReferenceAccuracy, 100*b.TestAccuracy, 100*a.TestAccuracy,
		100*b.HoldoutAccuracy, 100*a.HoldoutAccuracy, p.HoldoutSize)
	if a.MIA != nil && b.MIA != nil {
		line += fmt.Sprintf("; proxy MIA (%s) on the forget set %.2f%% → %.2f%%, on the reference %.2f%%",
			a.MIA.Feature, 100*b.MIA.Forget, 100*a.MIA.Forget, 100*a.MIA.Reference)
	}
	if e := p.Estimate; e != nil {
		line += fmt.Sprintf("; oracle estimate (class-frequency shift): forget accuracy %.2f%%, test accuracy %.2f%%",
			100*e.ReferenceAccuracy, 100*e.TestAccuracy)
	}
	return line
}

// skip is an empty before-column cell when the table has one.
func skip(before bool) string {
	if before {
		return "        \t"
	}
	return ""
}

// pctCell writes a fraction as a percentage with two decimals, "-" when
// absent.
func pctCell(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f%%", 100**v)
}

// deltaCell writes a Δ in points with its sign, "" when absent.
func deltaCell(v *float64) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf("%+.2f", 100**v)
}
