package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/localize"
	"github.com/unlearn-tool/unlearn/unlearn"
)

func strategies() []string { return localize.Strategies() }

func validStrategy(s string) bool {
	_, err := localize.LookupStrategy(s)
	return err == nil
}

func localizeCommand() *cli.Command {
	return &cli.Command{
		Name:      "localize",
		Usage:     "compute a mask: the parameters an unlearning algorithm may change",
		ArgsUsage: " ",
		Description: "Strategies: del (DEL: |Σ θ·g| over forget batches, neurons by the mean of their " +
			"top-h scores,\n" +
			"whole neurons within the budget), salloc (SalUn: global top-α of |Σ g|), critmem (per forget\n" +
			"example, zero the neuron with the largest Σ|θ·g| until the prediction flips), deepest, shallowest\n" +
			"(whole layers by depth), random (another strategy's per-layer counts, random neurons), full.\n" +
			"The mask (unlearn.mask/v1) can be passed to the main command with --mask.",
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "model", Required: true, Usage: "ONNX classifier"},
			&cli.StringFlag{Name: "forget", Required: true, Usage: "ids file of the forget set"},
			&cli.StringFlag{Name: "strategy", Value: "del", Usage: "del, salloc, critmem, deepest, " +
				"shallowest, random, full"},
			&cli.Float64Flag{Name: "budget", Value: unlearn.Recommended.Budget,
				Usage: "fraction of all trainable parameters, in (0, 1]"},
			&cli.Float64Flag{Name: "depth-floor", Usage: "del: layers in the first fraction `F` of the " +
				"network's depth are not eligible, in [0, 1) (the main command's default " +
				"localization uses " + fmt.Sprint(unlearn.Recommended.DepthFloor) + ")"},
			&cli.IntFlag{Name: "topk", Usage: "del: h, the number of top element scores averaged per " +
				"neuron (0: max(1, ⌊0.1·C_out⌋))"},
			&cli.BoolFlag{Name: "element-rank", Usage: "del: rank single elements by their neuron's score " +
				"(the reference code; may split a neuron)"},
			&cli.StringFlag{Name: "random-of", Value: "del", Usage: "random: the strategy whose per-layer " +
				"counts to match"},
			&cli.Uint64Flag{Name: "seed", Usage: "seed of the random strategy"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "mask JSON to write"},
			&cli.StringFlag{Name: "scores", Usage: "also write the per-parameter scores (del, salloc) as " +
				"float32 safetensors"},
		}, withBatchSize(dataFlags(), 128, "forget examples per gradient batch")...), runtimeFlags()...),
		Action: runLocalize,
	}
}

func runLocalize(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("unexpected arguments %v", c.Args().Slice())
	}
	b := c.Float64("budget")
	if !(b > 0 && b <= 1) {
		return usagef("--budget %g: must be in (0, 1]", b)
	}
	st, err := localize.LookupStrategy(c.String("strategy"))
	if err != nil {
		return usagef("--strategy %q: unknown; choose one of %v", c.String("strategy"), strategies())
	}
	if c.String("scores") != "" && !st.Scores {
		return usagef("--scores: strategy %s computes no scores (del, salloc and critmem do)", st.Name)
	}
	if c.Int("topk") < 0 {
		return usagef("--topk %d: must be ≥ 0", c.Int("topk"))
	}
	if err := unlearn.CheckDepthFloor(c.Float64("depth-floor"), st.Name); err != nil {
		return usagef("--depth-floor: %w", err)
	}
	modelPath := c.String("model")
	if err := outs.CheckFlags(c, "out", "scores"); err != nil {
		return err
	}
	opts, err := runtimeOptions(c)
	if err != nil {
		return err
	}
	_, work, _, err := unlearn.PrepareModel(modelPath)
	if err != nil {
		return err
	}
	ds, err := openData(c)
	if err != nil {
		return err
	}
	if err := eval.CheckModelData(work, modelPath, ds); err != nil {
		return err
	}
	ids, _, err := data.ReadForget(c.String("forget"), ds.Train)
	if err != nil {
		return err
	}
	forget, _ := data.ForgetRetain(ds.Train.Len(), ids)
	ctx, stop := signalContext()
	defer stop()
	mk, scores, err := localize.Localize(ctx, work, ds.Train, forget, localize.Options{
		Strategy: c.String("strategy"), Budget: b, DepthFloor: c.Float64("depth-floor"),
		TopK: c.Int("topk"), ElementRank: c.Bool("element-rank"),
		RandomOf: c.String("random-of"), Seed: c.Uint64("seed"), BatchSize: c.Int("batch-size"), Runtime: opts,
		Progress: logs.Bar("localize"),
	})
	if ctx.Err() != nil {
		return errInterrupted
	}
	if err != nil {
		return fmt.Errorf("%s: %w", modelPath, err)
	}
	if p := c.String("scores"); p != "" {
		b, err := localize.ScoresFile(scores, work)
		if err != nil {
			return err
		}
		if err := outfile.WriteFile(p, b); err != nil {
			return err
		}
	}
	if err := writeJSON(c, c.String("out"), mk); err != nil {
		return err
	}
	_ = mk.WriteSummary(c.App.Writer, c.String("out"))
	return nil
}
