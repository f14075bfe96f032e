package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/train"
)

// artifactsOptions are artifacts' flags, which set the fields of job, the
// library's job (table).
type artifactsOptions struct {
	job train.ArtifactsJob
	cmdTable
}

func artifactsCommand() *cli.Command {
	o := &artifactsOptions{}
	j := &o.job
	o.rows = []row{
		required(field("model", "ModelPath", &j.ModelPath, "", "ONNX classifier")),
		required(field("out", "Dir", &j.Dir, "", "folder to write training.onnx, inference.onnx and "+
			"artifacts.json into (created if missing; its parent must exist)")),
		field("bn", "BN", &j.BN, "training", "BatchNormalization in the training graph: training (batch "+
			"statistics) or inference (running statistics)"),
		field("loss", "Loss", &j.Loss, "ce", "ce (weighted mean cross-entropy) or kl (KL divergence to teacher logits)"),
		field("temperature", "Temperature", &j.Temperature, 1, "temperature of the kl loss"),
		field("params", "Params", &j.Params, "", "comma-separated initializer names to differentiate (default: "+
			"every trainable parameter)"),
		field("dropout", "Dropout", &j.Dropout, false, "Dropout in training mode (seeded mask) instead of the identity"),
	}
	return &cli.Command{
		Name:      "artifacts",
		Usage:     "write the training graph and the inference graph as ONNX files, with a JSON description",
		ArgsUsage: " ",
		Description: "The training graph takes the images, labels, per-example loss weights (and " +
			"teacher logits for\n" +
			"--loss kl) and every parameter as inputs, and outputs the loss, the logits, the gradient of every\n" +
			"parameter (grad/<name>) and, with --bn training, each BatchNormalization's batch mean and variance\n" +
			"(bn_mean/<scale>, bn_var/<scale>) for the running-statistics update. Any ONNX runtime can run it.\n" +
			"The inference graph is the model with BatchNormalization and Dropout in inference form.",
		Flags:  flagsOf(o.rows),
		Action: action(o),
	}
}

func (o *artifactsOptions) validate() error {
	_, err := o.job.Spec()
	return asUsage(err)
}

func (o *artifactsOptions) run(c *cli.Context) error {
	if err := checked(outfile.CheckDir(outfile.Output{Setting: "out", Path: o.job.Dir}, inputs(c))); err != nil {
		return err
	}
	set, err := train.WriteArtifacts(o.job)
	if err != nil {
		return err
	}
	art := set.Training
	fmt.Fprintf(c.App.Writer, "wrote %s: training.onnx (%d inputs, %d outputs, %d parameters), "+
		"inference.onnx, artifacts.json\n", o.job.Dir, len(art.Inputs), len(art.Outputs), len(art.Params))
	return nil
}
