package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/internal/clilog"
	"github.com/unlearn-tool/unlearn/unlearn"
)

func trainCommand() *cli.Command {
	return &cli.Command{
		Name:      "train",
		Usage:     "train or finetune a model on the training split (e.g. an oracle: --exclude the forget ids)",
		ArgsUsage: " ",
		Description: "train runs SGD on ONNX Runtime through the generated training graph, with " +
			"BatchNormalization in\n" +
			"training mode (batch statistics, PyTorch's running-statistics update), and writes the model back in\n" +
			"inference form with the same graph, names and opset. --from-scratch first re-initialises every\n" +
			"parameter as PyTorch initialises a fresh layer. --exclude trains on the training split without the\n" +
			"given ids: with the forget set this retrains the oracle.",
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "model", Required: true, Usage: "ONNX classifier (its graph and, unless " +
				"--from-scratch, its weights)"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "where to write the trained model"},
			&cli.StringFlag{Name: "exclude", Usage: "ids file: training examples to leave out (e.g. the " +
				"forget set, to train the oracle)"},
			&cli.BoolFlag{Name: "from-scratch", Usage: "re-initialise every parameter (PyTorch defaults) " +
				"and reset BN statistics before training"},
			&cli.IntFlag{Name: "epochs", Value: unlearn.TrainEpochs, Usage: "passes over the training examples"},
			&cli.Float64Flag{Name: "lr", Value: unlearn.TrainLR, Usage: "peak learning rate"},
			&cli.StringFlag{Name: "schedule", Value: "cosine", Usage: "learning-rate schedule per step: " +
				"cosine (to 0) or constant"},
			&cli.Float64Flag{Name: "momentum", Value: 0.9, Usage: "SGD momentum"},
			&cli.Float64Flag{Name: "weight-decay", Value: unlearn.TrainWeightDecay, Usage: "SGD weight decay (L2)"},
			&cli.Uint64Flag{Name: "seed", Value: 0, Usage: "seed for initialisation, example order, " +
				"dropout and augmentation"},
			augmentFlag("every training batch"),
		}, withBatchSize(dataFlags(), 128, "examples per training step")...), runtimeFlags()...),
		Action: runTrain,
	}
}

func runTrain(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("unexpected arguments %v", c.Args().Slice())
	}
	out := c.String("out")
	job := unlearn.RetrainJob{ModelPath: c.String("model"), Out: out, FromScratch: c.Bool("from-scratch"),
		Epochs: c.Int("epochs"), LR: c.Float64("lr"), BatchSize: c.Int("batch-size"), Schedule: c.String("schedule"),
		Momentum: c.Float64("momentum"), WeightDecay: c.Float64("weight-decay"), Seed: c.Uint64("seed"),
		Info: logs.Info, Progress: logs.Bar("train")}
	switch {
	case job.Epochs <= 0:
		return usagef("--epochs %d: must be positive", job.Epochs)
	case !(job.LR > 0):
		return usagef("--lr %g: must be positive", job.LR)
	case job.BatchSize <= 0:
		return usagef("--batch-size %d: must be positive", job.BatchSize)
	case job.Momentum < 0 || job.Momentum >= 1:
		return usagef("--momentum %g: must be in [0, 1)", job.Momentum)
	case job.WeightDecay < 0:
		return usagef("--weight-decay %g: must be ≥ 0", job.WeightDecay)
	case job.Schedule != unlearn.TrainCosine && job.Schedule != unlearn.TrainConstant:
		return usagef("--schedule %q: must be cosine or constant", job.Schedule)
	}
	var err error
	if job.Augment, err = parseAugmentFlag(c); err != nil {
		return err
	}
	outputs := append(clilog.FlagOutputs(c, "out"), clilog.ModelData("out", out))
	if err := clilog.Check(outputs, outs.Inputs(c)); err != nil {
		return err
	}
	if job.Runtime, err = runtimeOptions(c); err != nil {
		return err
	}
	if job.Data, err = openData(c); err != nil {
		return err
	}
	if p := c.String("exclude"); p != "" {
		if job.Exclude, _, err = data.ReadForget(p, job.Data.Train); err != nil {
			return err
		}
	}
	ctx, stop := signalContext()
	defer stop()
	res, err := unlearn.Retrain(ctx, job)
	if err != nil {
		return err
	}
	logs.Result("result", "out", out, "train_accuracy", res.TrainAccuracy,
		"test_accuracy", res.TestAccuracy, "train_s", res.TrainS)
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "model\ttrain acc\ttest acc\ttrain time\t\n")
	fmt.Fprintf(tw, "%s\t%.2f%%\t%.2f%%\t%.1fs\t\n", out, 100*res.TrainAccuracy, 100*res.TestAccuracy, res.TrainS)
	tw.Flush()
	return nil
}

// withBatchSize replaces the --batch-size flag's default and usage.
func withBatchSize(flags []cli.Flag, def int, usage string) []cli.Flag {
	for i, f := range flags {
		if f.Names()[0] == "batch-size" {
			flags[i] = &cli.IntFlag{Name: "batch-size", Value: def, Usage: usage}
		}
	}
	return flags
}
