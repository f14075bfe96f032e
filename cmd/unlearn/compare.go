package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/graph"
)

// compareReport is the JSON of `unlearn compare` (schema unlearn.compare/v1).
type compareReport struct {
	Schema   string           `json:"schema"`
	Tool     string           `json:"tool"`
	Data     *eval.DataInfo   `json:"data"`
	Forget   *eval.ForgetInfo `json:"forget"`
	Settings eval.Settings    `json:"settings"`
	Oracle   *eval.Section    `json:"oracle"`
	Models   []compareEntry   `json:"models"`
}

// compareEntry is one model's section with its Δ to the oracle.
type compareEntry struct {
	eval.Section
	Delta     *eval.Delta     `json:"delta"`
	Agreement *eval.Agreement `json:"agreement"`
}

const compareSchema = "unlearn.compare/v1"

func compareCommand() *cli.Command {
	return &cli.Command{
		Name:      "compare",
		Usage:     "one table of several models against the oracle",
		ArgsUsage: "MODEL.onnx [MODEL.onnx ...]",
		Description: "Evaluates the oracle (trained without the forget set) and every model on the same examples and prints\n" +
			"one row per model: forget, retain and test accuracy, MIA scores, agreement with the oracle and the\n" +
			"average gap, each value followed by Δ = oracle − model in points.",
		Flags: append(append(append([]cli.Flag{
			&cli.StringFlag{Name: "oracle", Required: true, Usage: "ONNX classifier trained without the forget set"},
			&cli.StringFlag{Name: "json", Usage: "write the comparison (schema unlearn.compare/v1) to `FILE` (- for stdout)"},
		}, miaFlags()...), dataFlags()...), runtimeFlags()...),
		Action: func(c *cli.Context) error {
			paths := c.Args().Slice()
			if len(paths) == 0 {
				return usagef("no models to compare: give one or more ONNX files after the flags")
			}
			if c.String("forget") == "" {
				return usagef("--forget is required: the comparison is about the forget set")
			}
			if err := checkOutputs(c, "json"); err != nil {
				return err
			}
			r, err := newSuite(c)
			if err != nil {
				return err
			}
			oraclePath := c.String("oracle")
			om, err := r.Load(oraclePath, "oracle")
			if err != nil {
				return err
			}
			// Load everything before the first forward pass, so a bad file
			// fails at once.
			models := make([]*graph.Model, len(paths))
			for i, p := range paths {
				if models[i], err = r.Load(p, "model"); err != nil {
					return err
				}
				if err := eval.CheckSameClasses(models[i], om, p, oraclePath); err != nil {
					return err
				}
			}
			omet, err := r.Evaluate(om, oraclePath, "oracle")
			if err != nil {
				return err
			}
			oi, err := eval.NewModelInfo(oraclePath)
			if err != nil {
				return err
			}
			rep := &compareReport{Schema: compareSchema, Tool: "unlearn " + Version, Settings: r.Settings(omet),
				Oracle: &eval.Section{Model: oi, Metrics: omet}}
			if rep.Data, rep.Forget, err = r.Provenance(); err != nil {
				return err
			}
			for i, m := range models {
				met, err := r.Evaluate(m, paths[i], fmt.Sprintf("model %d", i+1))
				if err != nil {
					return err
				}
				d, ag, err := eval.CompareToOracle(omet, met, oraclePath, paths[i])
				if err != nil {
					return err
				}
				mi, err := eval.NewModelInfo(paths[i])
				if err != nil {
					return err
				}
				rep.Models = append(rep.Models, compareEntry{Section: eval.Section{Model: mi, Metrics: met}, Delta: d, Agreement: ag})
			}
			out := c.App.Writer
			if c.String("json") == "-" {
				out = tableBesideJSON(c)
			}
			printCompare(out, rep)
			if p := c.String("json"); p != "" {
				return writeJSON(c, p, rep)
			}
			return nil
		},
	}
}

// compareColumn is one column of the comparison table.
type compareColumn struct {
	title string
	get   func(m *eval.Metrics) *float64
	delta func(d *eval.Delta) *float64
}

func miaColumn(key string) func(m *eval.Metrics) *float64 {
	return func(m *eval.Metrics) *float64 { return ptrOK(m.MIA.Get(key)) }
}

func ptrOK(v float64, ok bool) *float64 {
	if !ok {
		return nil
	}
	return &v
}

func printCompare(w io.Writer, rep *compareReport) {
	cols := []compareColumn{
		{"forget", func(m *eval.Metrics) *float64 { return m.Accuracy.Forget }, func(d *eval.Delta) *float64 { return d.Accuracy.Forget }},
		{"retain", func(m *eval.Metrics) *float64 { return m.Accuracy.Retain }, func(d *eval.Delta) *float64 { return d.Accuracy.Retain }},
		{"test", func(m *eval.Metrics) *float64 { return &m.Accuracy.Test }, func(d *eval.Delta) *float64 { return &d.Accuracy.Test }},
	}
	if rep.Oracle.MIA != nil {
		for _, k := range []string{"correctness", "confidence", "loss_lr"} {
			title := "mia " + k
			if k == "loss_lr" {
				title = "loss_lr"
			}
			cols = append(cols, compareColumn{title, miaColumn(k), func(d *eval.Delta) *float64 {
				if d.MIA == nil {
					return nil
				}
				return ptrOK(d.MIA.Get(k))
			}})
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
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
	fmt.Fprintf(w, "values in %%, (Δ = oracle − model in points); forget set %s (%d of %d training examples)\n",
		rep.Forget.Path, rep.Forget.N, rep.Oracle.Counts.Train)
	if rep.Oracle.MIA != nil {
		fmt.Fprintln(w, "mia: share of the forget set the SVC calls non-member (SalUn); loss_lr: attack accuracy, 50% = chance")
	}
	fmt.Fprintln(w, "avg gap: mean |Δ| over forget, retain and test accuracy and mia correctness (SalUn's Avg. Gap)")
}
