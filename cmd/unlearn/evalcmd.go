package main

import (
	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/eval/report"
	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/schema"
)

type evalOptions struct {
	suiteOpts
	model, oracle, json, report string
}

func evalCommand() *cli.Command {
	o := &evalOptions{}
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
		Flags: append(append(append([]cli.Flag{
			&cli.StringFlag{Name: "model", Destination: &o.model, Required: true, Usage: "ONNX classifier"},
			&cli.StringFlag{Name: "oracle", Destination: &o.oracle,
				Usage: "ONNX classifier trained without the forget set, to compare with"},
			&cli.StringFlag{Name: "json", Destination: &o.json, Usage: "write metrics.json (schema unlearn.metrics/v1) to " +
				"`FILE` (- for stdout)"},
			&cli.StringFlag{Name: "report", Destination: &o.report,
				Usage: "write a self-contained HTML report with plots to `FILE`"},
		}, o.miaFlags()...), o.data.flags(256, "examples per forward pass")...), o.rt.flags()...),
		Action: action(o),
	}
}

func (o *evalOptions) complete(c *cli.Context) error { return noArgs(c) }
func (o *evalOptions) validate() error               { return nil }

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
	return emitTo(c, rep, ms, o.json, o.report)
}

// emitTo prints the table and writes metrics.json and the report: both
// are rendered first and then put in place together, so an error leaves
// no output file behind.
func emitTo(c *cli.Context, rep *schema.Report, ms eval.Measurements, jsonPath, reportPath string) error {
	files, err := report.Files(rep, nil, ms, jsonPath, reportPath)
	if err != nil {
		return err
	}
	tableTo := c.App.Writer
	if jsonPath == "-" {
		tableTo = tableBesideJSON(c) // keep stdout pure JSON
	}
	_ = report.WriteTable(tableTo, rep) // a failed terminal write fails nothing, as before
	if err := outfile.WriteFiles(files); err != nil {
		return err
	}
	if jsonPath == "-" {
		b, err := report.JSON(rep)
		if err != nil {
			return err
		}
		_, err = stdoutOf(c).Write(b)
		return err
	}
	return nil
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
