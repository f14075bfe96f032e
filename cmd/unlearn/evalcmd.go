package main

import (
	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/eval/report"
	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/schema"
)

func dataFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "data", Usage: "dataset: IDX folder (MNIST family), CIFAR binary folder, " +
			"SVHN .mat folder, image folder or .npz (default: the bundled Fashion-MNIST subset)"},
		&cli.StringFlag{Name: "mean", Usage: "per-channel mean subtracted after scaling pixels to [0,1], " +
			"comma-separated"},
		&cli.StringFlag{Name: "std", Usage: "per-channel standard deviation to divide by, comma-separated"},
		&cli.IntFlag{Name: "batch-size", Value: 256, Usage: "examples per forward pass"},
	}
}

// openData opens --data (or the bundled demo data) with --mean/--std.
func openData(c *cli.Context) (*data.Dataset, error) {
	mean, err := data.ParseValues(c.String("mean"), false)
	if err != nil {
		return nil, usagef("--mean %q: %v", c.String("mean"), err)
	}
	std, err := data.ParseValues(c.String("std"), true)
	if err != nil {
		return nil, usagef("--std %q: %v", c.String("std"), err)
	}
	path := c.String("data")
	if path == "" {
		path, err = bundledData()
		if err != nil {
			return nil, err
		}
	}
	return data.Open(path, data.Options{Mean: mean, Std: std})
}

// bundledData finds testdata/fashion in the working directory or above the executable's folder.
func bundledData() (string, error) {
	if p := data.Bundled(); p != "" {
		return p, nil
	}
	return "", usagef("--data not given and the bundled demo data (testdata/fashion) was not found; pass --data")
}

// miaFlags are the evaluation flags shared by eval and compare.
func miaFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "forget", Usage: "ids file: 0-based indices into the training split, one per " +
			"line (image folders: or their file names, as \"unlearn data\" lists them)"},
		&cli.BoolFlag{Name: "no-mia", Usage: "skip the membership-inference attacks (accuracy only)"},
		&cli.StringFlag{Name: "m-entropy", Value: "song-mittal", Usage: "modified-entropy feature: " +
			"song-mittal (Song & Mittal's Mentr) or salun-code (SalUn's m_entropy as written, see README)"},
		&cli.Uint64Flag{Name: "mia-seed", Usage: "seed of the loss attack's subsample and cross-validation splits"},
	}
}

// newSuite reads the flags that eval, compare and the main command share
// (runtime, data, forget set, attack settings) into an eval.Suite whose
// progress goes to the terminal.
func newSuite(c *cli.Context) (*eval.Suite, error) {
	ro, err := runtimeOptions(c)
	if err != nil {
		return nil, err
	}
	if c.Int("batch-size") <= 0 {
		return nil, usagef("--batch-size %d: must be positive", c.Int("batch-size"))
	}
	opts := eval.Options{Runtime: ro, BatchSize: c.Int("batch-size"), NoMIA: c.Bool("no-mia")}
	opts.MIA.Seed = c.Uint64("mia-seed")
	switch v := c.String("m-entropy"); v {
	case "song-mittal":
		opts.MIA.MEntropy = eval.MEntropySongMittal
	case "salun-code":
		opts.MIA.MEntropy = eval.MEntropySalUnCode
	default:
		return nil, usagef("--m-entropy %q: must be song-mittal or salun-code", v)
	}
	ds, err := openData(c)
	if err != nil {
		return nil, err
	}
	var ids []int
	var given string
	p := c.String("forget")
	if p != "" {
		if ids, given, err = data.ReadForget(p, ds.Train); err != nil {
			return nil, err
		}
	}
	s, err := eval.NewSuite(ds, p, ids, opts)
	if err != nil {
		return nil, err
	}
	s.Bar, s.Info = logs.Bar, logs.Info
	s.ForgetGiven = given
	return s, nil
}

func evalCommand() *cli.Command {
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
			&cli.StringFlag{Name: "model", Required: true, Usage: "ONNX classifier"},
			&cli.StringFlag{Name: "oracle", Usage: "ONNX classifier trained without the forget set, to compare with"},
			&cli.StringFlag{Name: "json", Usage: "write metrics.json (schema unlearn.metrics/v1) to " +
				"`FILE` (- for stdout)"},
			&cli.StringFlag{Name: "report", Usage: "write a self-contained HTML report with plots to `FILE`"},
		}, miaFlags()...), dataFlags()...), runtimeFlags()...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("unexpected arguments %v", c.Args().Slice())
			}
			if err := outs.CheckFlags(c, "json", "report"); err != nil {
				return err
			}
			r, err := newSuite(c)
			if err != nil {
				return err
			}
			if c.String("report") != "" && r.Forget == nil {
				return usagef("--report needs --forget: the report compares the forget set with the rest")
			}
			rep, ms, err := r.Measure(c.String("model"), c.String("oracle"), "unlearn "+Version)
			if err != nil {
				return err
			}
			return emit(c, rep, ms)
		},
	}
}

// emit prints the table and writes metrics.json and the report: both are
// rendered first and then put in place together, so an error leaves no
// output file behind.
func emit(c *cli.Context, rep *schema.Report, ms eval.Measurements) error {
	return emitTo(c, rep, ms, c.String("json"), c.String("report"))
}

// emitTo is emit with the output paths given.
func emitTo(c *cli.Context, rep *schema.Report, ms eval.Measurements, jsonPath, reportPath string) error {
	files, err := report.Files(rep, ms, jsonPath, reportPath)
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
		_, err = c.App.Writer.Write(b)
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
		_, err := c.App.Writer.Write(b)
		return err
	}
	return outfile.WriteFile(path, b)
}
