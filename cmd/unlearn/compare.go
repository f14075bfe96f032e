package main

import (
	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/eval/report"
)

func compareCommand() *cli.Command {
	return &cli.Command{
		Name:      "compare",
		Usage:     "one table of several models against the oracle",
		ArgsUsage: "MODEL.onnx [MODEL.onnx ...]",
		Description: "Evaluates the oracle (trained without the forget set) and every model on the same " +
			"examples and prints\n" +
			"one row per model: forget, retain and test accuracy, MIA scores, agreement with the oracle and the\n" +
			"average gap, each value followed by Δ = oracle − model in points.",
		Flags: append(append(append([]cli.Flag{
			&cli.StringFlag{Name: "oracle", Required: true, Usage: "ONNX classifier trained without the forget set"},
			&cli.StringFlag{Name: "json", Usage: "write the comparison (schema unlearn.compare/v1) to " +
				"`FILE` (- for stdout)"},
		}, miaFlags()...), dataFlags()...), runtimeFlags()...),
		Action: func(c *cli.Context) error {
			paths := c.Args().Slice()
			if len(paths) == 0 {
				return usagef("no models to compare: give one or more ONNX files after the flags")
			}
			if c.String("forget") == "" {
				return usagef("--forget is required: the comparison is about the forget set")
			}
			if err := outs.CheckFlags(c, "json"); err != nil {
				return err
			}
			r, err := newSuite(c)
			if err != nil {
				return err
			}
			rep, err := r.Compare(c.String("oracle"), paths, "unlearn "+Version)
			if err != nil {
				return err
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
