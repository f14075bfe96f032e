package main

import (
	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/eval/report"
)

type compareOptions struct {
	suiteOpts
	oracle, json string
	models       []string
	cmdTable
}

func compareCommand() *cli.Command {
	o := &compareOptions{}
	o.rows = append([]row{
		required(field("oracle", "", &o.oracle, "", "ONNX classifier trained without the forget set")),
		field("json", "", &o.json, "", "write the comparison (schema unlearn.compare/v1) to `FILE` (- for stdout)"),
	}, shared(nil, append(append(o.miaFlags(), o.data.flags(256, "examples per forward pass")...),
		o.rt.flags()...)...)...)
	return &cli.Command{
		Name:      "compare",
		Usage:     "one table of several models against the oracle",
		ArgsUsage: "MODEL.onnx [MODEL.onnx ...]",
		Description: "Evaluates the oracle (trained without the forget set) and every model on the same " +
			"examples and prints\n" +
			"one row per model: forget, retain and test accuracy, MIA scores, agreement with the oracle and the\n" +
			"average gap, each value followed by Δ = oracle − model in points.",
		Flags:  flagsOf(o.rows),
		Action: action(o),
	}
}

func (o *compareOptions) complete(c *cli.Context) error {
	o.models = c.Args().Slice()
	return nil
}

func (o *compareOptions) validate() error {
	if len(o.models) == 0 {
		return usagef("no models to compare: give one or more ONNX files after the flags")
	}
	if o.forget == "" {
		return usagef("--forget is required: the comparison is about the forget set")
	}
	return nil
}

func (o *compareOptions) run(c *cli.Context) error {
	if err := checkFlags(c, "json"); err != nil {
		return err
	}
	// compare only evaluates: cuda runs it, as it runs eval.
	r, err := o.suite(c, false)
	if err != nil {
		return err
	}
	rep, err := r.Compare(o.oracle, o.models, "unlearn "+Version)
	if err != nil {
		return err
	}
	out := c.App.Writer
	if o.json == "-" {
		out = tableBesideJSON(c)
	}
	_ = report.WriteCompare(out, rep)
	if o.json != "" {
		return writeJSON(c, o.json, rep)
	}
	return nil
}
