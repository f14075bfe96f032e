package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// trainOptions are train's flags, which set the fields of job, the
// library's job (table); validate is its Validate.
type trainOptions struct {
	rt               runtimeOpts
	data             dataOpts
	job              unlearn.RetrainJob
	exclude, augment string
	cmdTable
}

// table is train's table: each flag and the field of unlearn.RetrainJob it
// sets (none for --exclude, a file of ids the job takes read).
func (o *trainOptions) table() []row {
	j := &o.job
	return append([]row{
		withPath("ModelPath", &cli.StringFlag{Name: "model", Destination: &j.ModelPath, Required: true,
			Usage: "ONNX classifier (its graph and, unless --from-scratch, its weights)"}),
		withPath("Out", &cli.StringFlag{Name: "out", Destination: &j.Out, Required: true,
			Usage: "where to write the trained model"}),
		field("exclude", "", &o.exclude, "", "ids file: training examples to leave out (e.g. the forget set, "+
			"to train the oracle)"),
		field("from-scratch", "FromScratch", &j.FromScratch, false, "re-initialise every parameter (PyTorch "+
			"defaults) and reset BN statistics before training"),
		field("epochs", "Epochs", &j.Epochs, unlearn.TrainEpochs, "passes over the training examples"),
		field("lr", "LR", &j.LR, unlearn.TrainLR, "peak learning rate"),
		field("schedule", "Schedule", &j.Schedule, "cosine", "learning-rate schedule per step: cosine (to 0) "+
			"or constant"),
		field("momentum", "Momentum", &j.Momentum, 0.9, "SGD momentum"),
		field("weight-decay", "WeightDecay", &j.WeightDecay, unlearn.TrainWeightDecay, "SGD weight decay (L2)"),
		field("seed", "Seed", &j.Seed, 0, "seed for initialisation, example order, dropout and augmentation"),
		withPath("Augment", augmentFlag(&o.augment, "every training batch")),
	}, shared(map[string]string{"batch-size": "BatchSize"},
		append(o.data.flags(128, "examples per training step"), o.rt.flags()...)...)...)
}

func trainCommand() *cli.Command {
	o := &trainOptions{}
	o.rows = o.table()
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
		Flags:  flagsOf(o.rows),
		Action: action(o),
	}
}

func (o *trainOptions) complete(c *cli.Context) error {
	o.job.BatchSize, o.job.Info, o.job.Progress = o.data.batchSize, logs.Info, logs.Bar("train")
	return noArgs(c)
}

func (o *trainOptions) validate() error { return asUsage(o.job.Validate()) }

func (o *trainOptions) run(c *cli.Context) error {
	job, out := o.job, o.job.Out
	var err error
	if job.Augment, err = parseAugment(o.augment, ""); err != nil {
		return err
	}
	outputs := []outfile.Output{{Setting: "out", Path: out}, modelData("out", out)}
	if err := checked(outfile.Check(outputs, inputs(c))); err != nil {
		return err
	}
	if job.Runtime, err = o.rt.options(true); err != nil {
		return err
	}
	if job.Data, err = o.data.open(c); err != nil {
		return err
	}
	if p := o.exclude; p != "" {
		if job.Exclude, _, err = data.ReadForget(p, job.Data.Train); err != nil {
			return err
		}
	}
	ctx := interrupts.Context() // cancelled by SIGINT or SIGTERM
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
