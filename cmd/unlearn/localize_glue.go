package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/localize"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// localizeOptions are localize's flags, which set the fields of job, the
// library's job (table); validate is its Validate.
type localizeOptions struct {
	rt   runtimeOpts
	data dataOpts
	job  unlearn.LocalizeJob
	out  string
	cmdTable
}

// table is localize's table: each flag and the field of
// unlearn.LocalizeJob it sets.
func (o *localizeOptions) table() []row {
	j, l := &o.job, &o.job.Options
	return append([]row{
		required(field("model", "ModelPath", &j.ModelPath, "", "ONNX classifier")),
		required(field("forget", "ForgetPath", &j.ForgetPath, "", "ids file of the forget set")),
		field("strategy", "Options.Strategy", &l.Strategy, "del", "del, salloc, critmem, deepest, shallowest, random, full"),
		field("budget", "Options.Budget", &l.Budget, unlearn.Recommended.Budget,
			"fraction of all trainable parameters, in (0, 1]"),
		field("depth-floor", "Options.DepthFloor", &l.DepthFloor, 0, "del: layers in the first fraction `F` of "+
			"the network's depth are not eligible, in [0, 1) (the main command's default localization uses "+
			fmt.Sprint(unlearn.Recommended.DepthFloor)+")"),
		field("topk", "Options.TopK", &l.TopK, 0, "del: h, the number of top element scores averaged per "+
			"neuron (0: max(1, ⌊0.1·C_out⌋))"),
		field("element-rank", "Options.ElementRank", &l.ElementRank, false, "del: rank single elements by "+
			"their neuron's score (the reference code; may split a neuron)"),
		field("random-of", "Options.RandomOf", &l.RandomOf, "del", "random: the strategy whose per-layer counts to match"),
		field("seed", "Options.Seed", &l.Seed, 0, "seed of the random strategy"),
		required(field("out", "", &o.out, "", "mask JSON to write")),
		field("scores", "ScoresPath", &j.ScoresPath, "", "also write the per-parameter scores (del, salloc) "+
			"as float32 safetensors"),
	}, shared(map[string]string{"batch-size": "Options.BatchSize"},
		append(o.data.flags(128, "forget examples per gradient batch"), o.rt.flags()...)...)...)
}

func localizeCommand() *cli.Command {
	o := &localizeOptions{}
	o.rows = o.table()
	return &cli.Command{
		Name:      "localize",
		Usage:     "compute a mask: the parameters an unlearning algorithm may change",
		ArgsUsage: " ",
		Description: "Strategies:\n" + localize.StrategyHelp() +
			"The mask (unlearn.mask/v1) can be passed to the main command with --mask.",
		Flags:  flagsOf(o.rows),
		Action: action(o),
	}
}

func (o *localizeOptions) complete(c *cli.Context) error {
	o.job.Options.BatchSize = o.data.batchSize
	return noArgs(c)
}

func (o *localizeOptions) validate() error { return asUsage(o.job.Validate()) }

func (o *localizeOptions) run(c *cli.Context) error {
	if err := checkFlags(c, "out", "scores"); err != nil {
		return err
	}
	var err error
	if o.job.Options.Runtime, err = o.rt.options(true); err != nil {
		return err
	}
	if o.job.Data, err = o.data.open(c); err != nil {
		return err
	}
	ctx := interrupts.Context() // cancelled by SIGINT or SIGTERM
	o.job.Options.Progress = logs.Bar("localize")
	mk, err := unlearn.Localize(ctx, o.job)
	if err != nil {
		return err
	}
	if err := writeJSON(c, o.out, mk); err != nil {
		return err
	}
	_ = mk.WriteSummary(c.App.Writer, o.out)
	return nil
}
