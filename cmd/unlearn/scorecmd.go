package main

import (
	"fmt"
	"math"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/eval/report"
	"github.com/unlearn-tool/unlearn/eval/score"
	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/unlearn"
	"github.com/unlearn-tool/unlearn/unlearn/scoring"
)

// scoreOptions are score's flags: the main command's method flags
// (methodOpts, without the outputs and the oracle), the audit's size and
// samples, and the oracles' training recipe.
type scoreOptions struct {
	methodOpts
	results, oracles, json, html, trainSchedule, trainAugment                          string
	k, retainSample, testSample, trainEpochs, trainBatchSize, shard, shards, bootstrap int
	trainLR, trainMomentum, trainWeightDecay                                           float64
	sampleSeed, oracleSeed, bootstrapSeed                                              uint64
	gather, keepModels                                                                 bool
}

func scoreCommand() *cli.Command {
	o := &scoreOptions{}
	var flags []cli.Flag
	for _, f := range o.methodOpts.flags() { // the method's flags, without the main command's outputs
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
			&cli.IntFlag{Name: "k", Destination: &o.k, Value: 16, Usage: "models per side (K ≥ 16 to rank clearly different " +
				"methods, 64 for small differences)",
				Action: inRange("k", 2, scoring.MaxK, " (models per side; the audit trains 2K models)")},
			&cli.StringFlag{Name: "results", Destination: &o.results,
				Required: true, Usage: "results `FOLDER`: settings.json, " +
					"tasks/, score.json, score.html"},
			&cli.StringFlag{Name: "oracles", Destination: &o.oracles,
				Usage: "oracle tasks' `FOLDER` (default: --results): audits " +
					"of other methods on the same model, data, forget set, samples and --train-* recipe reuse " +
					"the oracles there"},
			&cli.StringFlag{Name: "json", Destination: &o.json, Usage: "score `FILE` (default: <results>/score.json)"},
			&cli.StringFlag{Name: "html", Destination: &o.html, Usage: "HTML report `FILE` (default: <results>/score.html)"},
			&cli.IntFlag{Name: "retain-sample", Destination: &o.retainSample,
				Value: 2000, Usage: "retain examples every model is " +
					"evaluated on (0: all)"},
			&cli.IntFlag{Name: "test-sample", Destination: &o.testSample, Value: 2000, Usage: "test examples every model is " +
				"evaluated on (0: all)"},
			&cli.Uint64Flag{Name: "sample-seed", Destination: &o.sampleSeed, Usage: "seed of the retain and test samples"},
			&cli.IntFlag{Name: "train-epochs", Destination: &o.trainEpochs,
				Value: 3, Usage: "oracles: passes over the retain set"},
			&cli.Float64Flag{Name: "train-lr", Destination: &o.trainLR, Value: 0.05, Usage: "oracles: peak learning rate"},
			&cli.StringFlag{Name: "train-schedule", Destination: &o.trainSchedule,
				Value: "cosine", Usage: "oracles: cosine or constant"},
			&cli.Float64Flag{Name: "train-momentum", Destination: &o.trainMomentum, Value: 0.9, Usage: "oracles: SGD momentum"},
			&cli.Float64Flag{Name: "train-weight-decay", Destination: &o.trainWeightDecay,
				Value: 5e-4, Usage: "oracles: SGD weight decay"},
			&cli.IntFlag{Name: "train-batch-size", Destination: &o.trainBatchSize,
				Value: 128, Usage: "oracles: examples per step",
				Action: inRange("train-batch-size", 1, maxBatchSize, "")},
			&cli.StringFlag{Name: "train-augment", Destination: &o.trainAugment,
				Value: "none", Usage: "oracles: augmentation, as --augment"},
			&cli.Uint64Flag{Name: "oracle-seed", Destination: &o.oracleSeed, Usage: "oracle k trains with seed oracle-seed + k"},
			&cli.IntFlag{Name: "shard", Destination: &o.shard,
				Usage: "run only the tasks with index ≡ shard mod --shards; unset, " +
					"with --shards: $JOB_COMPLETION_INDEX (Kubernetes) or $SLURM_ARRAY_TASK_ID (Slurm), one of " +
					"which must be set"},
			&cli.IntFlag{Name: "shards", Destination: &o.shards, Usage: "number of shards, at most 2K (0: run every " +
				"task, then score)", Action: shardsAtMost("k", 2, "the audit's tasks")},
			&cli.BoolFlag{Name: "gather", Destination: &o.gather, Usage: "run no task: score a folder whose tasks are all done"},
			&cli.BoolFlag{Name: "keep-models", Destination: &o.keepModels, Usage: "keep every model under <results>/models/"},
			&cli.IntFlag{Name: "bootstrap", Destination: &o.bootstrap, Value: 200, Usage: "bootstrap resamples of the models " +
				"for the intervals",
				Action: inRange("bootstrap", math.MinInt, scoring.MaxResamples, " resamples")},
			&cli.Uint64Flag{Name: "bootstrap-seed", Destination: &o.bootstrapSeed, Usage: "seed of the bootstrap"},
		),
		Action: action(o),
	}
}

func (o *scoreOptions) complete(c *cli.Context) (err error) {
	if o.shard, err = shardOf(c, o.shards, o.shard, o.gather); err == nil {
		err = o.methodOpts.complete(c)
	}
	return err
}

func (o *scoreOptions) run(c *cli.Context) error {
	m, err := o.job()
	if err != nil {
		return err
	}
	aug, err := parseAugment(o.trainAugment, "train-")
	if err != nil {
		return err
	}
	jp, hp := scoring.Paths(o.results, o.json, o.html)
	err = outs.checkResults(c, "results", o.gather, scoring.Entries,
		outfile.Output{Setting: "json", Path: jp}, outfile.Output{Setting: "html", Path: hp})
	if err == nil && o.oracles != "" {
		err = outs.checkResults(c, "oracles", o.gather, scoring.Entries)
	}
	if err != nil {
		return err
	}
	job := scoring.Job{OracleDir: o.oracles, ModelPath: m.ModelPath, Method: *m, K: o.k, Dir: o.results,
		Oracle: unlearn.RetrainJob{Epochs: o.trainEpochs, LR: o.trainLR, Schedule: o.trainSchedule,
			Momentum: o.trainMomentum, WeightDecay: o.trainWeightDecay, BatchSize: o.trainBatchSize,
			Augment: aug, Seed: o.oracleSeed},
		RetainSample: o.retainSample, TestSample: o.testSample, SampleSeed: o.sampleSeed,
		Shard: o.shard, Shards: o.shards, Gather: o.gather, KeepModels: o.keepModels,
		Bootstrap: score.BootstrapOptions{Resamples: o.bootstrap, Seed: o.bootstrapSeed},
		JSONPath:  o.json, ReportPath: o.html, Tool: "unlearn " + Version,
		Info: logs.Info, Bar: logs.Bar,
		Task: func(name, state string) {
			logs.Info("task", fmt.Sprintf("%-14s %s", name, state), "task", name, "state", state)
		}}
	if job.Suite, err = o.suite(true); err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	res, err := scoring.Run(ctx, job)
	if err != nil || res.Report == nil {
		return err
	}
	r := res.Report
	logs.Result("result", "json", res.JSONPath, "html", res.ReportPath, "forget_quality", r.ForgetQuality,
		"final_score", r.FinalScore, "klom", r.KLoM, "ulira", r.ULiRA)
	fmt.Fprintf(c.App.Writer, "%s\nwrote %s and %s\n", report.ScoreLine(r), res.JSONPath, res.ReportPath)
	return nil
}
