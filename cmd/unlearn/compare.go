package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/eval/report"
	"github.com/unlearn-tool/unlearn/graph"
)

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
			rep := &eval.CompareReport{Schema: eval.CompareSchema, Tool: "unlearn " + Version, Settings: r.Settings(omet),
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
				rep.Models = append(rep.Models, eval.CompareEntry{Section: eval.Section{Model: mi, Metrics: met}, Delta: d, Agreement: ag})
			}
			out := c.App.Writer
			if c.String("json") == "-" {
				out = tableBesideJSON(c)
			}
			_ = report.WriteCompare(out, rep)
			if p := c.String("json"); p != "" {
				return writeJSON(c, p, rep)
			}
			return nil
		},
	}
}
