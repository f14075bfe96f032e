package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/train/autodiff"
)

// artifactsDoc is artifacts.json (schema unlearn.artifacts/v1).
type artifactsDoc struct {
	Schema    string           `json:"schema"`
	Model     map[string]any   `json:"model"`
	Training  artifactGraph    `json:"training"`
	Inference artifactGraph    `json:"inference"`
	Params    []string         `json:"params"`
	BN        []map[string]any `json:"batchnorm,omitempty"`
	Usage     []string         `json:"usage"`
}

type artifactGraph struct {
	File    string        `json:"file"`
	Inputs  []artifactsIO `json:"inputs"`
	Outputs []artifactsIO `json:"outputs"`
}

type artifactsIO struct {
	Name  string  `json:"name"`
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape"` // -1: dynamic (the batch)
	Role  string  `json:"role"`
	Of    string  `json:"of,omitempty"`
}

func artifactsCommand() *cli.Command {
	return &cli.Command{
		Name:      "artifacts",
		Usage:     "write the training graph and the inference graph as ONNX files, with a JSON description",
		ArgsUsage: " ",
		Description: "The training graph takes the images, labels, per-example loss weights (and teacher logits for\n" +
			"--loss kl) and every parameter as inputs, and outputs the loss, the logits, the gradient of every\n" +
			"parameter (grad/<name>) and, with --bn training, each BatchNormalization's batch mean and variance\n" +
			"(bn_mean/<scale>, bn_var/<scale>) for the running-statistics update. Any ONNX runtime can run it.\n" +
			"The inference graph is the model with BatchNormalization and Dropout in inference form.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Required: true, Usage: "ONNX classifier"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "folder to write training.onnx, inference.onnx and artifacts.json into (created if missing; its parent must exist)"},
			&cli.StringFlag{Name: "bn", Value: "training", Usage: "BatchNormalization in the training graph: training (batch statistics) or inference (running statistics)"},
			&cli.StringFlag{Name: "loss", Value: "ce", Usage: "ce (weighted mean cross-entropy) or kl (KL divergence to teacher logits)"},
			&cli.Float64Flag{Name: "temperature", Value: 1, Usage: "temperature of the kl loss"},
			&cli.StringFlag{Name: "params", Usage: "comma-separated initializer names to differentiate (default: every trainable parameter)"},
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
	if err := checkOutDir(c, "out"); err != nil {
		return err
	}
	m, err := onnxio.Load(modelPath)
	if err != nil {
		return err
	}
	if _, err := graph.UntieIdentityInitializers(m.Graph); err != nil {
		return fmt.Errorf("%s: %w", modelPath, err)
	}
	art, err := autodiff.Build(m, spec)
	if err != nil {
		return fmt.Errorf("%s: %w", modelPath, err)
	}
	inf, err := onnxio.Load(modelPath)
	if err != nil {
		return err
	}
	if _, err := graph.InferenceForm(inf.Graph); err != nil {
		return fmt.Errorf("%s: %w", modelPath, err)
	}
	sum, err := eval.HashPath(modelPath)
	if err != nil {
		return err
	}
	doc := artifactsDoc{
		Schema: "unlearn.artifacts/v1",
		Model:  map[string]any{"path": modelPath, "sha256": sum, "bn": spec.BN.String(), "loss": spec.Loss.Kind, "dropout": spec.Dropout},
		Training: artifactGraph{File: "training.onnx",
			Inputs: ioList(art.Inputs), Outputs: ioList(art.Outputs)},
		Inference: artifactGraph{File: "inference.onnx"},
		Params:    art.Params,
		Usage: []string{
			"feed images [N,C,H,W] float32, labels [N] int64, weights [N] float32 (1 for the mean cross-entropy; negative for ascent), and every param/state input with the current values of the initializer of the same name",
			"the loss is sum_i weights_i * loss_i / N; grad/<param> is its gradient",
			"with bn=training, update running statistics after each step: rm = (1-momentum)*rm + momentum*bn_mean, rv = (1-momentum)*rv + momentum*bn_var*M/(M-1), M = N * per_example",
		},
	}
	for _, v := range inf.Graph.Inputs {
		if !v.IsInitializer() {
			doc.Inference.Inputs = append(doc.Inference.Inputs, valueIO(v, "images"))
		}
	}
	for _, v := range inf.Graph.Outputs {
		doc.Inference.Outputs = append(doc.Inference.Outputs, valueIO(v, "logits"))
	}
	for _, st := range art.BN {
		doc.BN = append(doc.BN, map[string]any{
			"node": st.Node, "scale": st.Scale, "running_mean": st.RunningMean, "running_var": st.RunningVar,
			"mean_output": st.MeanOut, "var_output": st.VarOut, "per_example": st.PerExample, "momentum": st.Momentum,
		})
	}
	// Write into a temporary folder beside the target and rename it into
	// place, so a reader never sees half a set.
	if isDir(dir) {
		entries, _ := os.ReadDir(dir)
		if len(entries) > 0 {
			return fmt.Errorf("--out %s: folder exists and is not empty", dir)
		}
	}
	tmp, err := outfile.TempDir(filepath.Clean(dir))
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
		outfile.Untrack(tmp)
	}()
	if err := onnxio.Save(art.Model, filepath.Join(tmp, "training.onnx"), nil); err != nil {
		return err
	}
	if err := onnxio.Save(inf, filepath.Join(tmp, "inference.onnx"), &onnxio.SaveOptions{Protect: []string{modelPath}}); err != nil {
		return err
	}
	if err := writeJSONFile(filepath.Join(tmp, "artifacts.json"), doc); err != nil {
		return err
	}
	if isDir(dir) {
		if err := os.Remove(dir); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		return err
	}
	ok = true
	fmt.Fprintf(c.App.Writer, "wrote %s: training.onnx (%d inputs, %d outputs, %d parameters), inference.onnx, artifacts.json\n",
		dir, len(art.Inputs), len(art.Outputs), len(art.Params))
	return nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func ioList(ios []autodiff.IO) []artifactsIO {
	out := make([]artifactsIO, len(ios))
	for i, io := range ios {
		out[i] = artifactsIO{Name: io.Name, DType: strings.ToLower(io.DType.String()), Shape: io.Shape, Role: io.Role, Of: io.Of}
	}
	return out
}

func valueIO(v *graph.Value, role string) artifactsIO {
	io := artifactsIO{Name: v.Name, Role: role, DType: "unknown"}
	if v.Type != nil {
		io.DType = strings.ToLower(v.Type.DType.String())
		for _, d := range v.Type.Shape {
			if d.Known() {
				io.Shape = append(io.Shape, d.Size)
			} else {
				io.Shape = append(io.Shape, -1)
			}
		}
	}
	return io
}

func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return outfile.WriteFile(path, append(b, '\n'))
}
