package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/eval/report"
	"github.com/unlearn-tool/unlearn/localize"
	"github.com/unlearn-tool/unlearn/unlearn"
)

func methodNames() string { return strings.Join(unlearn.Methods(), ", ") }

func unlearnFlags() []cli.Flag {
	return append(append([]cli.Flag{
		&cli.StringFlag{Name: "model", Usage: "the trained ONNX classifier (never modified)"},
		&cli.StringFlag{Name: "method", Value: unlearn.Recommended.Method, Usage: "del (DEL localization + " +
			"reset-and-finetune), salun (SalLoc + random labels), retrain (exact: every parameter " +
			"re-initialised and trained from scratch on the retain set, the train command's recipe), " +
			"or a baseline: " + methodNames()},
		&cli.StringFlag{Name: "strategy", Usage: "localization strategy, " +
			"overriding --method's: " + strings.Join(localize.Strategies(), ", ")},
		&cli.StringFlag{Name: "algorithm", Usage: "unlearning algorithm, " +
			"overriding --method's: " + strings.Join(unlearn.Algorithms(), ", ")},
		&cli.Float64Flag{Name: "budget", Value: unlearn.Recommended.Budget,
			Usage: "fraction of all trainable parameters the strategy selects, in (0, 1]"},
		&cli.Float64Flag{Name: "depth-floor", Usage: fmt.Sprintf("strategy del: layers in the first "+
			"fraction `F` of the network's depth are never reset, in [0, 1) (default: %g when the "+
			"localization is left to the default, i.e. no --method, --strategy or --mask; else 0, "+
			"the paper's DEL)", unlearn.Recommended.DepthFloor)},
		&cli.IntFlag{Name: "epochs", Usage: "training epochs (0: the algorithm's default, see README; " +
			"retrain: 3, the train command's)"},
		&cli.Float64Flag{Name: "lr", Usage: "learning rate (0: the algorithm's default, see README; " +
			"retrain: 0.05, the train command's peak rate; with --schedule auto, given skips the range test)"},
		&cli.Float64Flag{Name: "momentum", Usage: "SGD momentum of the training algorithms, in [0, 1) " +
			"(default 0.9, as the train command's)"},
		&cli.Float64Flag{Name: "weight-decay", Usage: "SGD weight decay of the training algorithms " +
			"(default: the algorithm's; retrain 5e-4, the train command's)"},
		&cli.StringFlag{Name: "schedule", Usage: "fixed (--epochs at --lr) or auto (a learning-rate range " +
			"test, then epochs until the oracle-free proxies say the forget set looks unseen and utility " +
			"is back; training algorithms only); default: auto for training algorithms, fixed when " +
			"--epochs, --lr or --proxies=false gives a recipe; with --method retrain, the train " +
			"command's per-step cosine (default; fixed too) or constant"},
		&cli.IntFlag{Name: "max-epochs", Usage: "with --schedule auto, the cap on epochs (0: --epochs if " +
			"given, else twice the algorithm's default)"},
		&cli.Float64Flag{Name: "epoch-fraction", Usage: "with --schedule auto, train each round over this " +
			"fraction `F` of the retain set, in (0, 1], and check the stopping rule after each " +
			"(--max-epochs and the patience then count rounds)"},
		&cli.Float64Flag{Name: "forget-tolerance", Usage: "with --schedule auto, how far (a fraction: 0.01 " +
			"= 1 point) the forget accuracy may stay above the lower of the unseen reference's and the " +
			"oracle estimate's when stopping (default 0.01, the rule's; see README)"},
		&cli.Float64Flag{Name: "utility-tolerance", Usage: "with --schedule auto, how far (a fraction) " +
			"test accuracy may stay below the oracle estimate's when stopping (default 0.005, the " +
			"rule's; see README)"},
		&cli.BoolFlag{Name: "grad-channels", Usage: "compute a masked weight's gradient for the mask's " +
			"output channels only (cheaper steps where the mask selects few channels of large layers; the " +
			"updates equal the full gradient's up to float32 rounding, so results are not " +
			"bit-identical to a run without it)"},
		&cli.BoolFlag{Name: "proxies", Value: true, Usage: "hold out a slice of the retain set (5 %, 100 " +
			"to 2,000 examples; not trained on) and report the oracle-free proxies; --proxies=false trains " +
			"on the whole retain set (needed by --schedule auto)"},
		&cli.Uint64Flag{Name: "seed", Value: 0, Usage: "seed for resets, example order, random labels " +
			"and augmentation"},
		augmentFlag("the unlearning algorithm's " +
			"training batches (" + strings.Join(unlearn.AugmentingAlgorithms(), ", ") + ")"),
		&cli.StringFlag{Name: "oracle", Usage: "model `FILE` retrained without the forget set (e.g. by " +
			"\"unlearn train --exclude\"): adds Δ = oracle − unlearned"},
		&cli.StringFlag{Name: "mask", Usage: "mask `FILE` from \"unlearn localize\" (unlearn.mask/v1) to " +
			"use instead of localizing"},
		&cli.IntFlag{Name: "retrain-epochs", Usage: "epochs the model was trained for: estimates the cost " +
			"of retraining from scratch from a few full training steps timed on a copy of the model (0: no estimate)"},
		&cli.StringFlag{Name: "out", Usage: "unlearned model (default: <model>-unlearned.onnx beside the input)"},
		&cli.StringFlag{Name: "metrics", Usage: "metrics JSON, schema unlearn.metrics/v1 (default: <out " +
			"without .onnx>.metrics.json)"},
		&cli.StringFlag{Name: "report", Usage: "also write a self-contained HTML report with plots to `FILE`"},
		&cli.BoolFlag{Name: "no-before", Usage: "do not evaluate the input model (metrics.json then has no " +
			"before section)"},
		&cli.BoolFlag{Name: "dynamic-batch", Usage: "write the output with a symbolic batch dimension when " +
			"the input's is fixed (an export without dynamic_axes); by default the output keeps the " +
			"input's declared shapes"},
		&cli.BoolFlag{Name: "allow-chance", Usage: "unlearn even a model that scores near chance on the " +
			"training split (by default refused: its data is probably missing --mean/--std)"},
		&cli.StringFlag{Name: "classifier", Usage: "classifier layer name when the default (the layer " +
			"producing the logits) is wrong"},
	}, append(miaFlags(), withBatchSize(dataFlags(), 128, "examples per step")...)...), runtimeFlags()...)
}

// parseUnlearnFlags validates the main command's flags, before any work,
// and maps them onto a Job (without its Suite, which newSuite reads).
func parseUnlearnFlags(c *cli.Context) (*unlearn.Job, error) {
	s, err := parseMethodFlags(c)
	if err != nil {
		return nil, err
	}
	s.Out = c.String("out")
	if s.Out == "" {
		s.Out = strings.TrimSuffix(s.ModelPath, filepath.Ext(s.ModelPath)) + "-unlearned.onnx"
	}
	s.MetricsPath = c.String("metrics")
	if s.MetricsPath == "" {
		s.MetricsPath = strings.TrimSuffix(s.Out, filepath.Ext(s.Out)) + ".metrics.json"
	}
	if err := outs.CheckRun(c, s.Out, s.MetricsPath, s.ReportPath); err != nil {
		return nil, err
	}
	return s, nil
}

// parseMethodFlags maps the model, forget and method flags (shared by the
// main command and score) onto a Job without outputs.
func parseMethodFlags(c *cli.Context) (*unlearn.Job, error) {
	if c.NArg() > 0 {
		return nil, usagef("unexpected arguments %v (flags start with --; see `unlearn help`)", c.Args().Slice())
	}
	s := &unlearn.Job{ModelPath: c.String("model"), OraclePath: c.String("oracle"), Method: c.String("method"),
		Budget: c.Float64("budget"), MaskPath: c.String("mask"), ReportPath: c.String("report"),
		RetrainEpochs: c.Int("retrain-epochs"), Classifier: c.String("classifier"),
		NoBefore: c.Bool("no-before"), AllowChance: c.Bool("allow-chance"), DynamicBatch: c.Bool("dynamic-batch"),
		Tool: "unlearn " + Version, Info: logs.Info, Bar: logs.Bar, Stage: logs.Stage}
	if s.ModelPath == "" {
		return nil, usagef("--model is required (the ONNX classifier to unlearn); see `unlearn help`")
	}
	if c.String("forget") == "" {
		return nil, usagef("--forget is required (the ids of the training examples to forget)")
	}
	m, ok := unlearn.LookupMethod(s.Method)
	if !ok {
		return nil, usagef("--method %q: unknown; choose one of %s", s.Method, methodNames())
	}
	s.Strategy, s.Algorithm = m.Strategy, m.Algorithm
	if v := c.String("strategy"); v != "" {
		if s.MaskPath != "" {
			return nil, usagef("--strategy %s and --mask %s: the mask file already fixes the parameters; "+
				"pass one of them", v, s.MaskPath)
		}
		s.Strategy = v
	}
	if c.IsSet("budget") && (s.MaskPath != "" || m.Algorithm == "retrain") {
		return nil, usagef("--budget and %s", map[bool]string{true: "--mask: the mask file records its own " +
			"budget; pass one of them", false: "--method retrain: it re-initialises every parameter, there " +
			"is no mask to size; drop --budget"}[s.MaskPath != ""])
	}
	chosen := c.IsSet("method") || c.IsSet("strategy")
	floor, err := unlearn.ResolveDepthFloor(optFloat(c, "depth-floor"), chosen, s.MaskPath, s.Strategy)
	if err != nil {
		return nil, usagef("--depth-floor: %w", err)
	}
	s.DepthFloor = floor
	if s.RetrainEpochs < 0 {
		return nil, usagef("--retrain-epochs %d: must be ≥ 0", s.RetrainEpochs)
	}
	if v := c.String("algorithm"); v != "" {
		s.Algorithm = v
	}
	if !validStrategy(s.Strategy) {
		return nil, usagef("--strategy %q: unknown; choose one of %s", s.Strategy, strings.Join(strategies(), ", "))
	}
	algo, err := unlearn.LookupAlgorithm(s.Algorithm)
	if err != nil {
		return nil, usagef("--algorithm %q: unknown; "+
			"choose one of %s", s.Algorithm, strings.Join(unlearn.Algorithms(), ", "))
	}
	augment, err := parseAugmentFlag(c)
	if err != nil {
		return nil, err
	}
	if err := checkAugmentAlgorithm(augment, algo); err != nil {
		return nil, err
	}
	if !(s.Budget > 0 && s.Budget <= 1) {
		return nil, usagef("--budget %g: must be in (0, 1] (a fraction of all trainable parameters)", s.Budget)
	}
	if c.Int("epochs") < 0 {
		return nil, usagef("--epochs %d: must be ≥ 0", c.Int("epochs"))
	}
	if c.Float64("lr") < 0 {
		return nil, usagef("--lr %g: must be ≥ 0 (0 takes the algorithm's default)", c.Float64("lr"))
	}
	if c.Int("batch-size") <= 0 {
		return nil, usagef("--batch-size %d: must be positive", c.Int("batch-size"))
	}
	sched := c.String("schedule")
	if sched == "" {
		// The recommended default (auto) unless the flags already make
		// a fixed recipe, or the algorithm does not train in epochs.
		sched = unlearn.DefaultSchedule(s.Algorithm, c.IsSet("epochs") || c.IsSet("lr") || !c.Bool("proxies"))
	}
	switch sched {
	case unlearn.ScheduleFixed:
	case unlearn.ScheduleAuto:
		if !slices.Contains(unlearn.AutoAlgorithms(), s.Algorithm) {
			return nil, usagef("--schedule auto: %s does not train in epochs; "+
				"auto applies to %s", s.Algorithm, strings.Join(unlearn.AutoAlgorithms(), ", "))
		}
		if !c.Bool("proxies") {
			return nil, usagef("--schedule auto --proxies=false: the auto schedule stops on the proxies; " +
				"drop --proxies=false")
		}
	case unlearn.TrainCosine, unlearn.TrainConstant:
		if !algo.FromScratch {
			return nil, usagef("--schedule %s: the train command's schedules apply to --method retrain; "+
				"choose fixed or auto", sched)
		}
	default:
		return nil, usagef("--schedule %q: unknown; choose fixed or auto", sched)
	}
	if c.Int("max-epochs") < 0 {
		return nil, usagef("--max-epochs %d: must be ≥ 0", c.Int("max-epochs"))
	}
	if c.IsSet("max-epochs") && sched != unlearn.ScheduleAuto {
		return nil, usagef("--max-epochs applies to --schedule auto; with a fixed schedule use --epochs")
	}
	for _, f := range []string{"forget-tolerance", "utility-tolerance"} {
		if !c.IsSet(f) {
			continue
		}
		if v := c.Float64(f); !(v >= 0 && v < 1) {
			return nil, usagef("--%s %g: must be a fraction in [0, 1) (0.01 = 1 point of accuracy)", f, v)
		}
		if sched != unlearn.ScheduleAuto {
			return nil, usagef("--%s applies to --schedule auto (the stopping rule's tolerance)", f)
		}
	}
	if s.Config, err = unlearn.Configure(s.Algorithm, unlearn.Recipe{Epochs: c.Int("epochs"),
		LR: c.Float64("lr"), Schedule: sched,
		MaxEpochs: c.Int("max-epochs"), EpochFraction: c.Float64("epoch-fraction"),
		ForgetTolerance:  unlearn.Tolerance(optFloat(c, "forget-tolerance")),
		UtilityTolerance: unlearn.Tolerance(optFloat(c, "utility-tolerance")),
		NoProxies:        !c.Bool("proxies"), Momentum: optFloat(c, "momentum"),
		WeightDecay: optFloat(c, "weight-decay"), GradChannels: c.Bool("grad-channels")}); err != nil {
		return nil, usageError{err}
	}
	s.Config.Proxies.NoMIA = c.Bool("no-mia")
	s.Config.BatchSize = c.Int("batch-size")
	s.Config.Seed = c.Uint64("seed")
	s.Config.Augment = augment
	return s, nil
}

func runUnlearn(c *cli.Context) error {
	s, err := parseUnlearnFlags(c)
	if err != nil {
		return err
	}
	suite, err := newSuite(c)
	if err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	s.Suite = suite
	o, err := unlearn.Unlearn(ctx, *s)
	if err != nil {
		return err
	}
	_ = report.WriteTable(c.App.Writer, o.Report)
	logs.Result("result", report.RunResult(o.Report, s.MetricsPath, s.ReportPath)...)
	_ = report.WriteRunSummary(c.App.Writer, o.Report, s.MetricsPath, s.ReportPath)
	return nil
}

// optFloat is the flag's value when given, else nil.
func optFloat(c *cli.Context, name string) *float64 {
	if !c.IsSet(name) {
		return nil
	}
	v := c.Float64(name)
	return &v
}
