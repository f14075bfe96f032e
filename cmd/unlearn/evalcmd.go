package main

import (
	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/eval/report"
	"github.com/unlearn-tool/unlearn/internal/outfile"
)

type evalOptions struct {
	suiteOpts
	model, oracle, json, report string
	cmdTable
}

func evalCommand() *cli.Command {
	o := &evalOptions{}
	o.rows = append([]row{
		required(field("model", "", &o.model, "", "ONNX classifier")),
		field("oracle", "", &o.oracle, "", "ONNX classifier trained without the forget set, to compare with"),
		field("json", "", &o.json, "", "write metrics.json (schema unlearn.metrics/v1) to `FILE` (- for stdout)"),
		field("report", "", &o.report, "", "write a self-contained HTML report with plots to `FILE`"),
	}, shared(nil, append(append(o.miaFlags(), o.data.flags(256, "examples per forward pass")...),
		o.rt.flags()...)...)...)
	return &cli.Command{
		Name: "eval",
		Usage: "accuracy, membership inference and the gap to an oracle, as a table, metrics.json " +
			"and an HTML report",
		Description: "Measures --model on the training and test splits of --data: accuracy overall and per " +
			"class and, with\n" +
			"--forget, on the forget and retain sets and SalUn's SVC membership-inference scores of the forget set\n" +
			"with the unlearning challenge's loss attack. With --oracle (a model trained without the forget set)\n" +
			"both are measured on the same examples and Δ = oracle − model is reported for every metric.",
		ArgsUsage: " ",
		Flags:     flagsOf(o.rows),
		Action:    action(o),
	}
}

func (o *evalOptions) run(c *cli.Context) error {
	if err := checkFlags(c, "json", "report"); err != nil {
		return err
	}
	r, err := o.suite(c, false)
	if err != nil {
		return err
	}
	if o.report != "" && r.Forget == nil {
		return usagef("--report needs --forget: the report compares the forget set with the rest")
	}
	rep, ms, err := r.Measure(o.model, o.oracle, "unlearn "+Version)
	if err != nil {
		return err
	}
	tableTo := c.App.Writer
	if o.json == "-" {
		tableTo = tableBesideJSON(c) // keep stdout pure JSON
	}
	return report.Emit(rep, ms, o.json, o.report, tableTo, stdoutOf(c), logs.Info)
}

func writeJSON(c *cli.Context, path string, v any) error {
	b, err := report.JSON(v)
	if err != nil {
		return err
	}
	if path == "-" {
		_, err := stdoutOf(c).Write(b)
		return err
	}
	return outfile.WriteFile(path, b)
}
