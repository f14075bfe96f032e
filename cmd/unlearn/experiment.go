package main

import (
	"cmp"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/experiment"
	"github.com/unlearn-tool/unlearn/experiment/runner"
	"github.com/unlearn-tool/unlearn/train"
)

// experimentOptions are experiment's flags; of the runtime's, --ort-lib
// and --device (the file sets the threads).
type experimentOptions struct {
	rt                 runtimeOpts
	config             string
	reportOnly, dryRun bool
	shards, shard      int
	cmdTable
}

func experimentCommand() *cli.Command {
	o := &experimentOptions{}
	rt := o.rt.flags()
	o.rows = append([]row{
		required(field("config", "", &o.config, "", "experiment file (YAML)")),
		field("report-only", "", &o.reportOnly, false, "only rebuild RESULTS.md and the plots from results.jsonl"),
		field("dry-run", "", &o.dryRun, false, "list the steps and whether they are cached, run nothing"),
		field("shards", "", &o.shards, 0, "number of shards, at most the seeds (0: the whole grid); each runs whole seeds"),
		field("shard", "", &o.shard, 0, "run only the seeds at positions ≡ shard mod --shards; unset, with "+
			"--shards: $JOB_COMPLETION_INDEX (Kubernetes) or $SLURM_ARRAY_TASK_ID (Slurm), one of which must be set"),
	}, shared(nil, rt[0], rt[2])...)
	return &cli.Command{
		Name: "experiment",
		Usage: "the paper's comparison on your model and data: methods × budgets × seeds against " +
			"retrained oracles",
		ArgsUsage: " ",
		Description: "Reads an experiment file (YAML, see README \"Experiments\"), then per seed trains " +
			"the original\n(or takes it), draws the forget sets, retrains an oracle without each, and runs " +
			"every method at\n" +
			"every budget in this process through the library, as the tool's own commands would, each " +
			"measured\nagainst its oracle. Every step is cached " +
			"under the file's out folder by its settings: an interrupted experiment resumes where it stopped.\n" +
			"Results are appended to <out>/results.jsonl, which is also the cache of record: a step with " +
			"a\nrecord there never runs again, even without <out>/runs/ (delete the line to rerun it). Times are\n" +
			"compared with the oracle's training time on the same machine. The table (mean ± 95 % CI " +
			"over\nseeds) goes to stdout and <out>/RESULTS.md, with plots beside it. --report-only rebuilds the\n" +
			"table from results.jsonl. --shards N runs only the seeds at positions ≡ --shard (or " +
			"$JOB_COMPLETION_INDEX\nor $SLURM_ARRAY_TASK_ID) mod N, appending to " +
			"<out>/results.shard-I.jsonl, and writes no table; --report-only then reads every shard's results.",
		Flags:  flagsOf(o.rows),
		Action: action(o),
	}
}

func (o *experimentOptions) complete(c *cli.Context) (err error) {
	o.shard, err = shardOf(c, o.shards, o.shard, false)
	return cmp.Or(err, noArgs(c))
}

func (o *experimentOptions) run(c *cli.Context) error {
	cfg, err := experiment.Load(o.config)
	if err != nil {
		return err
	}
	cudaErr := train.CheckCUDATraining(o.rt.dev())
	if cudaErr != nil && !o.reportOnly && !o.dryRun {
		return usageError{cudaErr}
	}
	job := runner.Job{Config: cfg, ConfigPath: o.config, LibPath: o.rt.lib, Device: o.rt.dev(),
		Tool: "unlearn " + Version, DryRun: o.dryRun, ReportOnly: o.reportOnly, Shard: o.shard,
		Shards: o.shards, Info: logs.Info, Terms: terms,
		Step: func(what, state, key string) {
			logs.Info("experiment", fmt.Sprintf("%-48s %s", what, state), "step", what, "state", state)
		}}
	if cfg.Data == "" {
		if job.DataPath, err = data.BundledPath(); err != nil {
			return usageError{err}
		}
	}
	ctx := interrupts.Context() // cancelled by SIGINT or SIGTERM
	out, err := runner.Run(ctx, job)
	if err != nil || job.DryRun || job.Shards > 0 && !job.ReportOnly {
		return err
	}
	fmt.Fprint(c.App.Writer, out.Table)
	fmt.Fprintf(c.App.Writer, "\nwrote %s and %d plots\n", out.ResultsMD, len(out.Plots))
	return nil
}
