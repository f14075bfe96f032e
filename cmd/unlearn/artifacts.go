package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/train"
	"github.com/unlearn-tool/unlearn/train/autodiff"
)

func artifactsCommand() *cli.Command {
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
			&cli.StringFlag{Name: "model", Required: true, Usage: "ONNX classifier"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "folder to write training.onnx, " +
				"inference.onnx and artifacts.json into (created if missing; its parent must exist)"},
			&cli.StringFlag{Name: "bn", Value: "training", Usage: "BatchNormalization in the training " +
				"graph: training (batch statistics) or inference (running statistics)"},
			&cli.StringFlag{Name: "loss", Value: "ce", Usage: "ce (weighted mean cross-entropy) or kl (KL " +
				"divergence to teacher logits)"},
			&cli.Float64Flag{Name: "temperature", Value: 1, Usage: "temperature of the kl loss"},
			&cli.StringFlag{Name: "params", Usage: "comma-separated initializer names to differentiate " +
				"(default: every trainable parameter)"},
			&cli.BoolFlag{Name: "dropout", Usage: "Dropout in training mode (seeded mask) instead of the identity"},
		},
		Action: runArtifacts,
	}
}

func runArtifacts(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("unexpected arguments %v", c.Args().Slice())
	}
	spec := autodiff.Spec{Dropout: c.Bool("dropout")}
	switch c.String("bn") {
	case "training":
		spec.BN = autodiff.BNTraining
	case "inference":
		spec.BN = autodiff.BNInference
	default:
		return usagef("--bn %q: must be training or inference", c.String("bn"))
	}
	switch c.String("loss") {
	case "ce":
		spec.Loss.Kind = autodiff.LossCE
	case "kl":
		spec.Loss.Kind = autodiff.LossKL
		if c.Float64("temperature") <= 0 {
			return usagef("--temperature %g: must be positive", c.Float64("temperature"))
		}
		spec.Loss.Temperature = float32(c.Float64("temperature"))
	default:
		return usagef("--loss %q: must be ce or kl", c.String("loss"))
	}
	if p := c.String("params"); p != "" {
		for _, s := range strings.Split(p, ",") {
			spec.Params = append(spec.Params, strings.TrimSpace(s))
		}
	}
	modelPath, dir := c.String("model"), c.String("out")
	if err := outs.CheckDir(c, "out"); err != nil {
		return err
	}
	set, err := train.BuildArtifacts(modelPath, spec)
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
