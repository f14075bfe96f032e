package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/train"
	"github.com/unlearn-tool/unlearn/train/autodiff"
)

type artifactsOptions struct {
	model, out, bn, loss, params string
	temperature                  float64
	dropout                      bool
	spec                         autodiff.Spec
}

func artifactsCommand() *cli.Command {
	o := &artifactsOptions{}
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
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Destination: &o.model, Required: true, Usage: "ONNX classifier"},
			&cli.StringFlag{Name: "out", Destination: &o.out, Required: true, Usage: "folder to write training.onnx, " +
				"inference.onnx and artifacts.json into (created if missing; its parent must exist)"},
			&cli.StringFlag{Name: "bn", Destination: &o.bn, Value: "training", Usage: "BatchNormalization in the training " +
				"graph: training (batch statistics) or inference (running statistics)"},
			&cli.StringFlag{Name: "loss", Destination: &o.loss,
				Value: "ce", Usage: "ce (weighted mean cross-entropy) or kl (KL " +
					"divergence to teacher logits)"},
			&cli.Float64Flag{Name: "temperature", Destination: &o.temperature, Value: 1, Usage: "temperature of the kl loss"},
			&cli.StringFlag{Name: "params", Destination: &o.params,
				Usage: "comma-separated initializer names to differentiate " +
					"(default: every trainable parameter)"},
			&cli.BoolFlag{Name: "dropout", Destination: &o.dropout,
				Usage: "Dropout in training mode (seeded mask) instead of the identity"},
		},
		Action: action(o),
	}
}

func (o *artifactsOptions) complete(c *cli.Context) error { return noArgs(c) }

// validate checks the flags and maps them onto the autodiff.Spec.
func (o *artifactsOptions) validate() error {
	spec := &o.spec
	spec.Dropout = o.dropout
	switch o.bn {
	case "training":
		spec.BN = autodiff.BNTraining
	case "inference":
		spec.BN = autodiff.BNInference
	default:
		return usagef("--bn %q: must be training or inference", o.bn)
	}
	switch o.loss {
	case "ce":
		spec.Loss.Kind = autodiff.LossCE
	case "kl":
		spec.Loss.Kind = autodiff.LossKL
		if o.temperature <= 0 {
			return usagef("--temperature %g: must be positive", o.temperature)
		}
		spec.Loss.Temperature = float32(o.temperature)
	default:
		return usagef("--loss %q: must be ce or kl", o.loss)
	}
	if p := o.params; p != "" {
		for _, s := range strings.Split(p, ",") {
			spec.Params = append(spec.Params, strings.TrimSpace(s))
		}
	}
	return nil
}

func (o *artifactsOptions) run(c *cli.Context) error {
	modelPath, dir := o.model, o.out
	if err := outs.checkDir(c, "out"); err != nil {
		return err
	}
	set, err := train.BuildArtifacts(modelPath, o.spec)
	if err != nil {
		return err
	}
	if err := set.WriteDir(dir); err != nil {
		if errors.Is(err, train.ErrDirNotEmpty) {
			return fmt.Errorf("--out %w", err)
		}
		return err
	}
	art := set.Training
	fmt.Fprintf(c.App.Writer, "wrote %s: training.onnx (%d inputs, %d outputs, %d parameters), "+
		"inference.onnx, artifacts.json\n",
		dir, len(art.Inputs), len(art.Outputs), len(art.Params))
	return nil
}
