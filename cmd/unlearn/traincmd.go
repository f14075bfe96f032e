package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/onnxrt"
	"github.com/unlearn-tool/unlearn/train"
	"github.com/unlearn-tool/unlearn/train/autodiff"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// errInterrupted marks a run stopped by SIGINT/SIGTERM (exit code 130).
var errInterrupted = unlearn.ErrInterrupted

// signalContext returns the run's context, cancelled by SIGINT or SIGTERM,
// and declares the command able to stop cleanly on it (see
// installSignals). The CancelFunc is a no-op kept for call sites.
func signalContext() (context.Context, context.CancelFunc) {
	cancellable.Store(true)
	return appCtx, func() {}
}

var (
	appCtx      = context.Background()
	cancellable atomic.Bool
)

// installSignals makes SIGINT and SIGTERM cancel appCtx. A command that
// called signalContext stops at its next check and removes what it wrote;
// any other command (it writes its outputs only at the end, atomically),
// or a second signal, exits at once with code 130 after removing the
// temporary files of writes in flight, so that every output is either
// complete or absent.
func installSignals() {
	ctx, cancel := context.WithCancel(context.Background())
	appCtx = ctx
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		n := 0
		for range ch {
			n++
			cancel()
			if n > 1 || !cancellable.Load() {
				outfile.RemoveTracked()
				logs.fail("interrupted; no output was written", exitInterrupted)
				os.Exit(exitInterrupted)
			}
		}
	}()
}

func trainCommand() *cli.Command {
	return &cli.Command{
		Name:      "train",
		Usage:     "train or finetune a model on the training split (e.g. an oracle: --exclude the forget ids)",
		ArgsUsage: " ",
		Description: "train runs SGD on ONNX Runtime through the generated training graph, with BatchNormalization in\n" +
			"training mode (batch statistics, PyTorch's running-statistics update), and writes the model back in\n" +
			"inference form with the same graph, names and opset. --from-scratch first re-initialises every\n" +
			"parameter as PyTorch initialises a fresh layer. --exclude trains on the training split without the\n" +
			"given ids: with the forget set this retrains the oracle.",
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "model", Required: true, Usage: "ONNX classifier (its graph and, unless --from-scratch, its weights)"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "where to write the trained model"},
			&cli.StringFlag{Name: "exclude", Usage: "ids file: training examples to leave out (e.g. the forget set, to train the oracle)"},
			&cli.BoolFlag{Name: "from-scratch", Usage: "re-initialise every parameter (PyTorch defaults) and reset BN statistics before training"},
			&cli.IntFlag{Name: "epochs", Value: 3, Usage: "passes over the training examples"},
			&cli.Float64Flag{Name: "lr", Value: 0.05, Usage: "peak learning rate"},
			&cli.StringFlag{Name: "schedule", Value: "cosine", Usage: "learning-rate schedule per step: cosine (to 0) or constant"},
			&cli.Float64Flag{Name: "momentum", Value: 0.9, Usage: "SGD momentum"},
			&cli.Float64Flag{Name: "weight-decay", Value: 5e-4, Usage: "SGD weight decay (L2)"},
			&cli.Uint64Flag{Name: "seed", Value: 0, Usage: "seed for initialisation, example order and dropout"},
		}, withBatchSize(dataFlags(), 128, "examples per training step")...), runtimeFlags()...),
		Action: runTrain,
	}
}

func runTrain(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("unexpected arguments %v", c.Args().Slice())
	}
	modelPath, out := c.String("model"), c.String("out")
	epochs, lr, bs := c.Int("epochs"), c.Float64("lr"), c.Int("batch-size")
	switch {
	case epochs <= 0:
		return usagef("--epochs %d: must be positive", epochs)
	case !(lr > 0):
		return usagef("--lr %g: must be positive", lr)
	case bs <= 0:
		return usagef("--batch-size %d: must be positive", bs)
	case c.Float64("momentum") < 0 || c.Float64("momentum") >= 1:
		return usagef("--momentum %g: must be in [0, 1)", c.Float64("momentum"))
	case c.Float64("weight-decay") < 0:
		return usagef("--weight-decay %g: must be ≥ 0", c.Float64("weight-decay"))
	}
	var sched train.Schedule
	switch c.String("schedule") {
	case "cosine":
		sched = train.Cosine{Base: lr}
	case "constant":
		sched = train.Constant{Base: lr}
	default:
		return usagef("--schedule %q: must be cosine or constant", c.String("schedule"))
	}
	if err := checkOuts(append(flagOutputs(c, "out"), modelData("out", out)), cmdInputs(c)); err != nil {
		return err
	}
	opts, err := runtimeOptions(c)
	if err != nil {
		return err
	}
	m, err := onnxio.Load(modelPath)
	if err != nil {
		return err
	}
	ds, err := openData(c)
	if err != nil {
		return err
	}
	if err := eval.CheckModelData(m, modelPath, ds); err != nil {
		return err
	}
	idx := data.Range(ds.Train.Len())
	if p := c.String("exclude"); p != "" {
		ids, err := data.ReadIDs(p, ds.Train.Len())
		if err != nil {
			return err
		}
		_, idx = data.ForgetRetain(ds.Train.Len(), ids)
		if len(idx) == 0 {
			return fmt.Errorf("--exclude %s: covers the whole training split; nothing left to train on", p)
		}
	}
	// Train on an untied copy; write back into the original graph when
	// untying changed nothing, else into the untied one.
	work, err := onnxio.Load(modelPath)
	if err != nil {
		return err
	}
	untied, err := graph.UntieIdentityInitializers(work.Graph)
	if err != nil {
		return fmt.Errorf("%s: %w", modelPath, err)
	}
	if err := autodiff.CheckSupported(work); err != nil {
		return fmt.Errorf("%s: %w", modelPath, err)
	}
	seed := c.Uint64("seed")
	if c.Bool("from-scratch") {
		if err := reinitAll(work, seed); err != nil {
			return fmt.Errorf("%s: %w", modelPath, err)
		}
	}
	e, err := train.NewEngine(work, train.EngineOptions{Runtime: opts, Spec: autodiff.Spec{
		BN: autodiff.BNTraining, Dropout: true, DropoutSeed: int64(seed),
	}})
	if err != nil {
		return fmt.Errorf("%s: %w", modelPath, err)
	}
	defer e.Close()
	ctx, stop := signalContext()
	defer stop()
	logs.info("train", fmt.Sprintf("training %s on %d examples of %s: %d epochs, batch %d, lr %g (%s), momentum %g, weight decay %g, seed %d",
		modelPath, len(idx), ds.Path, epochs, bs, lr, c.String("schedule"), c.Float64("momentum"), c.Float64("weight-decay"), seed),
		"model", modelPath, "examples", len(idx), "epochs", epochs, "batch_size", bs, "lr", lr, "seed", seed)
	bar := newProgress("train")
	start := time.Now()
	stats, err := train.Fit(ctx, e, ds.Train, idx, train.FitOptions{
		Epochs: epochs, BatchSize: bs, Seed: seed, Schedule: sched,
		Optimizer: &train.SGD{Momentum: c.Float64("momentum"), WeightDecay: c.Float64("weight-decay")},
		Progress: func(p train.FitProgress) {
			bar.update((p.Epoch-1)*p.Steps+p.Step, p.Epochs*p.Steps)
		},
		EpochEnd: func(s train.EpochStats) error {
			logs.info("epoch", fmt.Sprintf("epoch %d/%d  loss %.4f  train acc %.2f%%  %.1fs", s.Epoch, epochs, s.Loss, 100*s.Accuracy, s.Seconds),
				"epoch", s.Epoch, "epochs", epochs, "loss", s.Loss, "accuracy", s.Accuracy, "seconds", s.Seconds)
			return nil
		},
	})
	if ctx.Err() != nil {
		return errInterrupted
	}
	if err != nil {
		return err
	}
	_ = stats
	trainTime := time.Since(start)
	dst := m
	if untied > 0 {
		dst = work
	}
	if _, err := e.WriteBack(dst.Graph); err != nil {
		return err
	}
	if _, err := graph.InferenceForm(dst.Graph); err != nil {
		return err
	}
	if err := onnxio.Save(dst, out, &onnxio.SaveOptions{Protect: []string{modelPath}}); err != nil {
		return err
	}
	// Evaluate what was written, as users will load it.
	res, err := evalAccuracy(out, ds, opts, bs)
	if err != nil {
		return fmt.Errorf("evaluating %s: %w", out, err)
	}
	logs.result("result", "out", out, "train_accuracy", res["train"], "test_accuracy", res["test"], "train_s", trainTime.Seconds())
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "model\ttrain acc\ttest acc\ttrain time\t\n")
	fmt.Fprintf(tw, "%s\t%.2f%%\t%.2f%%\t%.1fs\t\n", out, 100*res["train"], 100*res["test"], trainTime.Seconds())
	tw.Flush()
	return nil
}

// reinitAll re-initialises every parameter PyTorch-style and resets BN
// running statistics (mean 0, variance 1), in the model's initializers.
func reinitAll(m *graph.Model, seed uint64) error {
	nm, err := graph.Neurons(m.Graph)
	if err != nil {
		return err
	}
	params := map[string][]float32{}
	mask := map[string][]bool{}
	for _, p := range nm.Params {
		v, err := p.Value.Init.Float32s()
		if err != nil {
			return err
		}
		params[p.Value.Name] = v
		mask[p.Value.Name] = make([]bool, len(v))
		for i := range mask[p.Value.Name] {
			mask[p.Value.Name][i] = true
		}
	}
	if _, err := train.ResetNeurons(nm, params, mask, rand.New(rand.NewPCG(seed, 0x1417))); err != nil {
		return err
	}
	for name, v := range params {
		if err := m.Graph.LocalValue(name).Init.SetFloat32s(v); err != nil {
			return err
		}
	}
	for _, n := range m.Graph.Nodes() {
		if n.OpType != "BatchNormalization" {
			continue
		}
		for i, fill := range map[int]float32{3: 0, 4: 1} {
			v := n.Input(i)
			if v == nil || v.Init == nil {
				continue
			}
			vals := make([]float32, v.Init.Len())
			for k := range vals {
				vals[k] = fill
			}
			if err := v.Init.SetFloat32s(vals); err != nil {
				return err
			}
		}
	}
	return nil
}

// evalAccuracy returns the train and test accuracy of the model at path.
func evalAccuracy(path string, ds *data.Dataset, opts onnxrt.Options, batch int) (map[string]float64, error) {
	m, err := onnxio.Load(path)
	if err != nil {
		return nil, err
	}
	cl, err := eval.NewClassifier(m, opts, batch)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	out := map[string]float64{}
	for name, s := range map[string]*data.Split{"train": ds.Train, "test": ds.Test} {
		idx := data.Range(s.Len())
		logits, err := cl.Logits(s, idx, nil)
		if err != nil {
			return nil, err
		}
		out[name] = eval.Accuracy(eval.Argmax(logits, cl.Classes()), s.Labels(idx))
	}
	return out, nil
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
