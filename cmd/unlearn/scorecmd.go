package main

import (
	"fmt"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/eval/report"
	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/unlearn/scoring"
)

// scoreOptions are score's flags: the main command's method flags
// (methodOpts, without the outputs and the oracle), and the audit's:
// its size and samples and the oracles' training recipe, which set the
// fields of audit, the library's job (scoreTable).
type scoreOptions struct {
	methodOpts
	audit        scoring.Job
	trainAugment string
	own          []row // scoreTable's
}

func (o *scoreOptions) tableRows() []row { return append(o.own, o.rows...) }

// scoreTable is score's own table: each flag and the field of scoring.Job
// it sets.
func (o *scoreOptions) scoreTable() []row {
	j, t := &o.audit, &o.audit.Oracle
	return []row{
		field("k", "K", &j.K, 16, "models per side (K ≥ 16 to rank clearly different methods, 64 for small differences)"),
		withPath("Dir", &cli.StringFlag{Name: "results", Destination: &j.Dir, Required: true,
			Usage: "results `FOLDER`: settings.json, tasks/, score.json, score.html"}),
		field("oracles", "OracleDir", &j.OracleDir, "", "oracle tasks' `FOLDER` (default: --results): audits "+
			"of other methods on the same model, data, forget set, samples and --train-* recipe reuse the oracles there"),
		field("json", "JSONPath", &j.JSONPath, "", "score `FILE` (default: <results>/score.json)"),
		field("html", "ReportPath", &j.ReportPath, "", "HTML report `FILE` (default: <results>/score.html)"),
		field("retain-sample", "RetainSample", &j.RetainSample, 2000, "retain examples every model is evaluated on (0: all)"),
		field("test-sample", "TestSample", &j.TestSample, 2000, "test examples every model is evaluated on (0: all)"),
		field("sample-seed", "SampleSeed", &j.SampleSeed, 0, "seed of the retain and test samples"),
		field("train-epochs", "Oracle.Epochs", &t.Epochs, 3, "oracles: passes over the retain set"),
		field("train-lr", "Oracle.LR", &t.LR, 0.05, "oracles: peak learning rate"),
		field("train-schedule", "Oracle.Schedule", &t.Schedule, "cosine", "oracles: cosine or constant"),
		field("train-momentum", "Oracle.Momentum", &t.Momentum, 0.9, "oracles: SGD momentum"),
		field("train-weight-decay", "Oracle.WeightDecay", &t.WeightDecay, 5e-4, "oracles: SGD weight decay"),
		field("train-batch-size", "Oracle.BatchSize", &t.BatchSize, 128, "oracles: examples per step"),
		field("train-augment", "Oracle.Augment", &o.trainAugment, "none", "oracles: augmentation, as --augment"),
		field("oracle-seed", "Oracle.Seed", &t.Seed, 0, "oracle k trains with seed oracle-seed + k"),
		field("shard", "Shard", &j.Shard, 0, "run only the tasks with index ≡ shard mod --shards; unset, "+
			"with --shards: $JOB_COMPLETION_INDEX (Kubernetes) or $SLURM_ARRAY_TASK_ID (Slurm), one of which must be set"),
		field("shards", "Shards", &j.Shards, 0, "number of shards, at most 2K (0: run every task, then score)"),
		field("gather", "Gather", &j.Gather, false, "run no task: score a folder whose tasks are all done"),
		field("keep-models", "KeepModels", &j.KeepModels, false, "keep every model under <results>/models/"),
		field("bootstrap", "Bootstrap.Resamples", &j.Bootstrap.Resamples, 200, "bootstrap resamples of the "+
			"models for the intervals"),
		field("bootstrap-seed", "Bootstrap.Seed", &j.Bootstrap.Seed, 0, "seed of the bootstrap"),
	}
}

func scoreCommand() *cli.Command {
	o := &scoreOptions{}
	o.own = o.scoreTable()
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
		Flags:  append(flags, flagsOf(o.own)...),
		Action: action(o),
	}
}

func (o *scoreOptions) complete(c *cli.Context) (err error) {
	j := &o.audit
	if err = asUsage(j.Validate()); err == nil {
		j.Shard, err = shardOf(c, j.Shards, j.Shard, j.Gather)
	}
	if err == nil {
		err = o.methodOpts.complete(c)
	}
	return err
}

func (o *scoreOptions) run(c *cli.Context) error {
	m, err := o.job()
	if err != nil {
		return err
	}
	job := o.audit
	if job.Oracle.Augment, err = parseAugment(o.trainAugment, "train-"); err != nil {
		return err
	}
	jp, hp := scoring.Paths(job.Dir, job.JSONPath, job.ReportPath)
	err = checkResults(c, "results", job.Gather, scoring.Entries,
		outfile.Output{Setting: "json", Path: jp}, outfile.Output{Setting: "html", Path: hp})
	if err == nil && job.OracleDir != "" {
		err = checkResults(c, "oracles", job.Gather, scoring.Entries)
	}
	if err != nil {
		return err
	}
	job.ModelPath, job.Method, job.Tool, job.Info, job.Bar = m.ModelPath, *m, "unlearn "+Version, logs.Info, logs.Bar
	job.Task = func(name, state string) {
		logs.Info("task", fmt.Sprintf("%-14s %s", name, state), "task", name, "state", state)
	}
	if job.Suite, err = o.suite(c, true); err != nil {
		return err
	}
	ctx := interrupts.Context() // cancelled by SIGINT or SIGTERM
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
