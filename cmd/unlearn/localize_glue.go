package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/infer"
	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/localize"
	"github.com/unlearn-tool/unlearn/unlearn"
)

type localizeOptions struct {
	rt                                             runtimeOpts
	data                                           dataOpts
	model, forget, strategy, randomOf, out, scores string
	budget, depthFloor                             float64
	topK                                           int
	elementRank                                    bool
	seed                                           uint64
}

func localizeCommand() *cli.Command {
	o := &localizeOptions{}
	return &cli.Command{
		Name:      "localize",
		Usage:     "compute a mask: the parameters an unlearning algorithm may change",
		ArgsUsage: " ",
		Description: "Strategies:\n" + localize.StrategyHelp() +
			"The mask (unlearn.mask/v1) can be passed to the main command with --mask.",
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "model", Destination: &o.model, Required: true, Usage: "ONNX classifier"},
			&cli.StringFlag{Name: "forget", Destination: &o.forget, Required: true, Usage: "ids file of the forget set"},
			&cli.StringFlag{Name: "strategy", Destination: &o.strategy, Value: "del", Usage: "del, salloc, critmem, deepest, " +
				"shallowest, random, full"},
			&cli.Float64Flag{Name: "budget", Destination: &o.budget, Value: unlearn.Recommended.Budget,
				Usage: "fraction of all trainable parameters, in (0, 1]"},
			&cli.Float64Flag{Name: "depth-floor", Destination: &o.depthFloor,
				Usage: "del: layers in the first fraction `F` of the " +
					"network's depth are not eligible, in [0, 1) (the main command's default " +
					"localization uses " + fmt.Sprint(unlearn.Recommended.DepthFloor) + ")"},
			&cli.IntFlag{Name: "topk", Destination: &o.topK, Usage: "del: h, the number of top element scores averaged per " +
				"neuron (0: max(1, ⌊0.1·C_out⌋))"},
			&cli.BoolFlag{Name: "element-rank", Destination: &o.elementRank,
				Usage: "del: rank single elements by their neuron's score " +
					"(the reference code; may split a neuron)"},
			&cli.StringFlag{Name: "random-of", Destination: &o.randomOf,
				Value: "del", Usage: "random: the strategy whose per-layer " +
					"counts to match"},
			&cli.Uint64Flag{Name: "seed", Destination: &o.seed, Usage: "seed of the random strategy"},
			&cli.StringFlag{Name: "out", Destination: &o.out, Required: true, Usage: "mask JSON to write"},
			&cli.StringFlag{Name: "scores", Destination: &o.scores,
				Usage: "also write the per-parameter scores (del, salloc) as " +
					"float32 safetensors"},
		}, o.data.flags(128, "forget examples per gradient batch")...), o.rt.flags()...),
		Action: action(o),
	}
}

func (o *localizeOptions) complete(c *cli.Context) error { return noArgs(c) }

func (o *localizeOptions) validate() error {
	if !(o.budget > 0 && o.budget <= 1) {
		return usagef("--budget %g: must be in (0, 1]", o.budget)
	}
	st, err := localize.LookupStrategy(o.strategy)
	if err != nil {
		return usagef("--strategy %q: unknown; choose one of %v", o.strategy, localize.Strategies())
	}
	if o.scores != "" && !st.Scores {
		return usagef("--scores: strategy %s computes no scores (del, salloc and critmem do)", st.Name)
	}
	if o.topK < 0 {
		return usagef("--topk %d: must be ≥ 0", o.topK)
	}
	if err := unlearn.CheckDepthFloor(o.depthFloor, st.Name); err != nil {
		return usagef("--depth-floor: %w", err)
	}
	return nil
}

func (o *localizeOptions) run(c *cli.Context) error {
	modelPath := o.model
	if err := outs.checkFlags(c, "out", "scores"); err != nil {
		return err
	}
	opts, err := o.rt.options(true)
	if err != nil {
		return err
	}
	_, work, _, err := unlearn.PrepareModel(modelPath)
	if err != nil {
		return err
	}
	ds, err := o.data.open()
	if err != nil {
		return err
	}
	if err := infer.CheckModelData(work, modelPath, ds); err != nil {
		return err
	}
	ids, _, err := data.ReadForget(o.forget, ds.Train)
	if err != nil {
		return err
	}
	forget, _ := data.ForgetRetain(ds.Train.Len(), ids)
	ctx, stop := signalContext()
	defer stop()
	mk, scores, err := localize.Localize(ctx, work, ds.Train, forget, localize.Options{
		Strategy: o.strategy, Budget: o.budget, DepthFloor: o.depthFloor, TopK: o.topK, ElementRank: o.elementRank,
		RandomOf: o.randomOf, Seed: o.seed, BatchSize: o.data.batchSize, Runtime: opts,
		Progress: logs.Bar("localize"),
	})
	if ctx.Err() != nil {
		return errInterrupted
	}
	if err != nil {
		return fmt.Errorf("%s: %w", modelPath, err)
	}
	if p := o.scores; p != "" {
		b, err := localize.ScoresFile(scores, work)
		if err != nil {
			return err
		}
		if err := outfile.WriteFile(p, b); err != nil {
			return err
		}
	}
	if err := writeJSON(c, o.out, mk); err != nil {
		return err
	}
	_ = mk.WriteSummary(c.App.Writer, o.out)
	return nil
}
