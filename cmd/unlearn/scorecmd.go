package main

import (
	"fmt"
	"math"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/eval/report"
	"github.com/unlearn-tool/unlearn/eval/score"
	"github.com/unlearn-tool/unlearn/internal/clilog"
	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/unlearn"
	"github.com/unlearn-tool/unlearn/unlearn/scoring"
)

func scoreCommand() *cli.Command {
	var flags []cli.Flag
	for _, f := range unlearnFlags() { // the method's flags, without the main command's outputs
		if !slices.Contains([]string{"oracle", "mask", "retrain-epochs", "out", "metrics", "report",
			"no-before"}, f.Names()[0]) {
			flags = append(flags, f)
		}
	}
	return &cli.Command{
		Name: "score",
		Usage: "per-example forgetting score of a method: K unlearned against K retrained models " +
			"(docs/SCORE.md)",
		ArgsUsage: " ",
		Description: "Trains K oracles from scratch without the forget set (the --train-* recipe, seeds " +
			"--oracle-seed + k)\nand runs the method K times on --model (seeds --seed + k), evaluates " +
			"every model on the forget set\n" +
			"and seeded samples of the retain and test sets, and writes the NeurIPS 2023 competition's forget\n" +
			"quality F and final score, KLoM and U-LiRA per example and bootstrap intervals to score.json " +
			"and score.html.\n" +
			"Each of the 2K tasks writes its result to --results (resumable); --shards N runs only the tasks\n" +
			"with index ≡ --shard (or $JOB_COMPLETION_INDEX, or $SLURM_ARRAY_TASK_ID) mod N, and --gather " +
			"scores the folder (README, \"Scoring\").",
		Flags: append(flags,
			&cli.IntFlag{Name: "k", Value: 16, Usage: "models per side (K ≥ 16 to rank clearly different " +
				"methods, 64 for small differences)",
				Action: clilog.InRange("k", 2, scoring.MaxK, " (models per side; the audit trains 2K models)")},
			&cli.StringFlag{Name: "results", Required: true, Usage: "results `FOLDER`: settings.json, " +
				"tasks/, score.json, score.html"},
			&cli.StringFlag{Name: "oracles", Usage: "oracle tasks' `FOLDER` (default: --results): audits " +
				"of other methods on the same model, data, forget set, samples and --train-* recipe reuse " +
				"the oracles there"},
			&cli.StringFlag{Name: "json", Usage: "score `FILE` (default: <results>/score.json)"},
			&cli.StringFlag{Name: "html", Usage: "HTML report `FILE` (default: <results>/score.html)"},
			&cli.IntFlag{Name: "retain-sample", Value: 2000, Usage: "retain examples every model is " +
				"evaluated on (0: all)"},
			&cli.IntFlag{Name: "test-sample", Value: 2000, Usage: "test examples every model is " +
				"evaluated on (0: all)"},
			&cli.Uint64Flag{Name: "sample-seed", Usage: "seed of the retain and test samples"},
			&cli.IntFlag{Name: "train-epochs", Value: 3, Usage: "oracles: passes over the retain set"},
			&cli.Float64Flag{Name: "train-lr", Value: 0.05, Usage: "oracles: peak learning rate"},
			&cli.StringFlag{Name: "train-schedule", Value: "cosine", Usage: "oracles: cosine or constant"},
			&cli.Float64Flag{Name: "train-momentum", Value: 0.9, Usage: "oracles: SGD momentum"},
			&cli.Float64Flag{Name: "train-weight-decay", Value: 5e-4, Usage: "oracles: SGD weight decay"},
			&cli.IntFlag{Name: "train-batch-size", Value: 128, Usage: "oracles: examples per step",
				Action: clilog.InRange("train-batch-size", 1, clilog.MaxBatchSize, "")},
			&cli.StringFlag{Name: "train-augment", Value: "none", Usage: "oracles: augmentation, as --augment"},
			&cli.Uint64Flag{Name: "oracle-seed", Usage: "oracle k trains with seed oracle-seed + k"},
			&cli.IntFlag{Name: "shard", Usage: "run only the tasks with index ≡ shard mod --shards; unset, " +
				"with --shards: $JOB_COMPLETION_INDEX (Kubernetes) or $SLURM_ARRAY_TASK_ID (Slurm), one of " +
				"which must be set"},
			&cli.IntFlag{Name: "shards", Usage: "number of shards, at most 2K (0: run every " +
				"task, then score)", Action: clilog.ShardsAtMost("k", 2, "the audit's tasks")},
			&cli.BoolFlag{Name: "gather", Usage: "run no task: score a folder whose tasks are all done"},
			&cli.BoolFlag{Name: "keep-models", Usage: "keep every model under <results>/models/"},
			&cli.IntFlag{Name: "bootstrap", Value: 200, Usage: "bootstrap resamples of the models " +
				"for the intervals",
				Action: clilog.InRange("bootstrap", math.MinInt, scoring.MaxResamples, " resamples")},
			&cli.Uint64Flag{Name: "bootstrap-seed", Usage: "seed of the bootstrap"},
		),
		Action: runScore,
	}
}

func runScore(c *cli.Context) error {
	m, err := parseMethodFlags(c)
	if err != nil {
		return err
	}
	aug, err := data.ParseAugment(c.String("train-augment"))
	if err != nil {
		return usagef("--train-%v", err)
	}
	jp, hp := scoring.Paths(c.String("results"), c.String("json"), c.String("html"))
	err = outs.CheckResults(c, "results", scoring.Entries,
		outfile.Output{Flag: "json", Path: jp}, outfile.Output{Flag: "html", Path: hp})
	if err == nil && c.String("oracles") != "" {
		err = outs.CheckResults(c, "oracles", scoring.Entries)
	}
	if err != nil {
		return err
	}
	job := scoring.Job{OracleDir: c.String("oracles"), ModelPath: m.ModelPath, Method: *m,
		K: c.Int("k"), Dir: c.String("results"),
		Oracle: unlearn.RetrainJob{Epochs: c.Int("train-epochs"), LR: c.Float64("train-lr"),
			Schedule: c.String("train-schedule"),
			Momentum: c.Float64("train-momentum"), WeightDecay: c.Float64("train-weight-decay"),
			BatchSize: c.Int("train-batch-size"),
			Augment:   aug, Seed: c.Uint64("oracle-seed")},
		RetainSample: c.Int("retain-sample"), TestSample: c.Int("test-sample"), SampleSeed: c.Uint64("sample-seed"),
		Shard: c.Int("shard"), Shards: c.Int("shards"), Gather: c.Bool("gather"), KeepModels: c.Bool("keep-models"),
		Bootstrap: score.BootstrapOptions{Resamples: c.Int("bootstrap"), Seed: c.Uint64("bootstrap-seed")},
		JSONPath:  c.String("json"), ReportPath: c.String("html"), Tool: "unlearn " + Version,
		Info: logs.Info, Bar: logs.Bar,
		Task: func(name, state string) {
			logs.Info("task", fmt.Sprintf("%-14s %s", name, state), "task", name, "state", state)
		}}
	if job.Suite, err = newSuite(c); err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	o, err := scoring.Run(ctx, job)
	if err != nil || o.Report == nil {
		return err
	}
	r := o.Report
	logs.Result("result", "json", o.JSONPath, "html", o.ReportPath, "forget_quality", r.ForgetQuality,
		"final_score", r.FinalScore, "klom", r.KLoM, "ulira", r.ULiRA)
	fmt.Fprintf(c.App.Writer, "%s\nwrote %s and %s\n", report.ScoreLine(r), o.JSONPath, o.ReportPath)
	return nil
}
