package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/unlearn"
)

type trainOptions struct {
	rt                                     runtimeOpts
	data                                   dataOpts
	model, out, exclude, schedule, augment string
	fromScratch                            bool
	epochs                                 int
	lr, momentum, weightDecay              float64
	seed                                   uint64
}

func trainCommand() *cli.Command {
	o := &trainOptions{}
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
			&cli.StringFlag{Name: "model", Destination: &o.model,
				Required: true, Usage: "ONNX classifier (its graph and, unless " +
					"--from-scratch, its weights)"},
			&cli.StringFlag{Name: "out", Destination: &o.out, Required: true, Usage: "where to write the trained model"},
			&cli.StringFlag{Name: "exclude", Destination: &o.exclude,
				Usage: "ids file: training examples to leave out (e.g. the " +
					"forget set, to train the oracle)"},
			&cli.BoolFlag{Name: "from-scratch", Destination: &o.fromScratch,
				Usage: "re-initialise every parameter (PyTorch defaults) " +
					"and reset BN statistics before training"},
			&cli.IntFlag{Name: "epochs", Destination: &o.epochs,
				Value: unlearn.TrainEpochs, Usage: "passes over the training examples"},
			&cli.Float64Flag{Name: "lr", Destination: &o.lr, Value: unlearn.TrainLR, Usage: "peak learning rate"},
			&cli.StringFlag{Name: "schedule", Destination: &o.schedule,
				Value: "cosine", Usage: "learning-rate schedule per step: " +
					"cosine (to 0) or constant"},
			&cli.Float64Flag{Name: "momentum", Destination: &o.momentum, Value: 0.9, Usage: "SGD momentum"},
			&cli.Float64Flag{Name: "weight-decay", Destination: &o.weightDecay,
				Value: unlearn.TrainWeightDecay, Usage: "SGD weight decay (L2)"},
			&cli.Uint64Flag{Name: "seed", Destination: &o.seed, Value: 0, Usage: "seed for initialisation, example order, " +
				"dropout and augmentation"},
			augmentFlag(&o.augment, "every training batch"),
		}, o.data.flags(128, "examples per training step")...), o.rt.flags()...),
		Action: action(o),
	}
}

func (o *trainOptions) complete(c *cli.Context) error { return noArgs(c) }

func (o *trainOptions) job() unlearn.RetrainJob {
	return unlearn.RetrainJob{ModelPath: o.model, Out: o.out, FromScratch: o.fromScratch,
		Epochs: o.epochs, LR: o.lr, BatchSize: o.data.batchSize, Schedule: o.schedule,
		Momentum: o.momentum, WeightDecay: o.weightDecay, Seed: o.seed,
		Info: logs.Info, Progress: logs.Bar("train")}
}

func (o *trainOptions) validate() error {
	job := o.job()
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
	return nil
}

func (o *trainOptions) run(c *cli.Context) error {
	job, out := o.job(), o.out
	var err error
	if job.Augment, err = parseAugment(o.augment, ""); err != nil {
		return err
	}
	outputs := append(flagOutputs(c, "out"), modelData("out", out))
	if err := checkOutputs(outputs, outs.inputs(c)); err != nil {
		return err
	}
	if job.Runtime, err = o.rt.options(true); err != nil {
		return err
	}
	if job.Data, err = o.data.open(); err != nil {
		return err
	}
	if p := o.exclude; p != "" {
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
