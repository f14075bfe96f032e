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

// methodOpts are the main command's flags: the model, the forget set and
// the attacks' settings (suiteOpts), the method and its recipe, and the
// outputs. score takes the same flags but the outputs and the oracle.
type methodOpts struct {
	suiteOpts
	model, method, strategy, algorithm, schedule, augment, oracle, mask, classifier     string
	out, metrics, report                                                                string
	budget, depthFloor, lr, momentum, weightDecay, epochFraction, forgetTol, utilityTol float64
	epochs, maxEpochs, retrainEpochs                                                    int
	gradChannels, proxies, noBefore, dynamicBatch, allowChance, strict, overwrite       bool
	seed                                                                                uint64
	widen                                                                               string
	// set says whether a flag was given (its default may differ from "not given").
	set func(name string) bool
}

func (o *methodOpts) flags() []cli.Flag {
	return append(append([]cli.Flag{
		&cli.StringFlag{Name: "model", Destination: &o.model, Usage: "the trained ONNX classifier (never modified)"},
		&cli.StringFlag{Name: "method", Destination: &o.method,
			Value: unlearn.Recommended.Method, Usage: "del (DEL localization + " +
				"reset-and-finetune), salun (SalLoc + random labels), retrain (exact: every parameter " +
				"re-initialised and trained from scratch on the retain set, the train command's recipe), " +
				"or a baseline: " + methodNames()},
		&cli.StringFlag{Name: "strategy", Destination: &o.strategy, Usage: "localization strategy, " +
			"overriding --method's: " + strings.Join(localize.Strategies(), ", ")},
		&cli.StringFlag{Name: "algorithm", Destination: &o.algorithm, Usage: "unlearning algorithm, " +
			"overriding --method's: " + strings.Join(unlearn.Algorithms(), ", ")},
		&cli.Float64Flag{Name: "budget", Destination: &o.budget, Value: unlearn.Recommended.Budget,
			Usage: "fraction of all trainable parameters the strategy selects, in (0, 1]"},
		&cli.StringFlag{Name: "widen", Destination: &o.widen, Usage: "strategy del, schedule auto: larger " +
			"budgets `B,B` to widen the mask to, in order, while the run's own oracle estimate says the forget set is " +
			"still remembered (e.g. 0.3,0.5; each widening runs again from the input model)"},
		&cli.Float64Flag{Name: "depth-floor", Destination: &o.depthFloor,
			Usage: fmt.Sprintf("strategy del: layers in the first "+
				"fraction `F` of the network's depth are never reset, in [0, 1) (default: %g when the "+
				"localization is left to the default, i.e. no --method, --strategy or --mask; else 0, "+
				"the paper's DEL)", unlearn.Recommended.DepthFloor)},
		&cli.IntFlag{Name: "epochs", Destination: &o.epochs,
			Usage: "training epochs (0: the algorithm's default, see README; " +
				"retrain: 3, the train command's)"},
		&cli.Float64Flag{Name: "lr", Destination: &o.lr, Usage: "learning rate (0: the algorithm's default, see README; " +
			"retrain: 0.05, the train command's peak rate; with --schedule auto, given skips the range test)"},
		&cli.Float64Flag{Name: "momentum", Destination: &o.momentum,
			Usage: "SGD momentum of the training algorithms, in [0, 1) " +
				"(default 0.9, as the train command's)"},
		&cli.Float64Flag{Name: "weight-decay", Destination: &o.weightDecay,
			Usage: "SGD weight decay of the training algorithms " +
				"(default: the algorithm's; retrain 5e-4, the train command's)"},
		&cli.StringFlag{Name: "schedule", Destination: &o.schedule,
			Usage: "fixed (--epochs at --lr) or auto (a learning-rate range " +
				"test, then epochs until the oracle-free proxies say the forget set looks unseen and utility " +
				"is back; training algorithms only); default: auto for training algorithms, fixed when " +
				"--epochs, --lr or --proxies=false gives a recipe; with --method retrain, the train " +
				"command's per-step cosine (default; fixed too) or constant"},
		&cli.IntFlag{Name: "max-epochs", Destination: &o.maxEpochs,
			Usage: "with --schedule auto, the cap on epochs (0: --epochs if " +
				"given, else twice the algorithm's default)"},
		&cli.Float64Flag{Name: "epoch-fraction", Destination: &o.epochFraction,
			Usage: "with --schedule auto, train each round over this " +
				"fraction `F` of the retain set, in (0, 1], and check the stopping rule after each " +
				"(--max-epochs and the patience then count rounds)"},
		&cli.Float64Flag{Name: "forget-tolerance", Destination: &o.forgetTol,
			Usage: "with --schedule auto, how far (a fraction: 0.01 " +
				"= 1 point) the forget accuracy may stay above the lower of the unseen reference's and the " +
				"oracle estimate's when stopping (default 0.01, the rule's; see README)"},
		&cli.Float64Flag{Name: "utility-tolerance", Destination: &o.utilityTol,
			Usage: "with --schedule auto, how far (a fraction) " +
				"test accuracy may stay below the oracle estimate's when stopping (default 0.005, the " +
				"rule's; see README)"},
		&cli.BoolFlag{Name: "grad-channels", Destination: &o.gradChannels,
			Usage: "compute a masked weight's gradient for the mask's " +
				"output channels only (cheaper steps where the mask selects few channels of large layers; the " +
				"updates equal the full gradient's up to float32 rounding, so results are not " +
				"bit-identical to a run without it)"},
		&cli.BoolFlag{Name: "proxies", Destination: &o.proxies,
			Value: true, Usage: "hold out a slice of the retain set (5 %, 100 " +
				"to 2,000 examples; not trained on) and report the oracle-free proxies; --proxies=false trains " +
				"on the whole retain set (needed by --schedule auto)"},
		&cli.Uint64Flag{Name: "seed", Destination: &o.seed,
			Value: 0, Usage: "seed for resets, example order, random labels " +
				"and augmentation"},
		augmentFlag(&o.augment, "the unlearning algorithm's "+
			"training batches ("+strings.Join(unlearn.AugmentingAlgorithms(), ", ")+")"),
		&cli.StringFlag{Name: "oracle", Destination: &o.oracle,
			Usage: "model `FILE` retrained without the forget set (e.g. by " +
				"\"unlearn train --exclude\"): adds Δ = oracle − unlearned"},
		&cli.StringFlag{Name: "mask", Destination: &o.mask,
			Usage: "mask `FILE` from \"unlearn localize\" (unlearn.mask/v1) to " +
				"use instead of localizing"},
		&cli.IntFlag{Name: "retrain-epochs", Destination: &o.retrainEpochs,
			Usage: "epochs the model was trained for: estimates the cost " +
				"of retraining from scratch from a few full training steps timed on a copy of the model " +
				"(0: the model's unlearn.train_epochs metadata if it has one, else no estimate)"},
		&cli.StringFlag{Name: "out", Destination: &o.out,
			Usage: "unlearned model (default: <model>-unlearned.onnx beside the input; see --overwrite)"},
		&cli.BoolFlag{Name: "overwrite", Destination: &o.overwrite, Usage: "replace the default --out of an earlier run"},
		&cli.StringFlag{Name: "metrics", Destination: &o.metrics,
			Usage: "metrics JSON, schema unlearn.metrics/v1 (default: <out " +
				"without .onnx>.metrics.json)"},
		&cli.StringFlag{Name: "report", Destination: &o.report,
			Usage: "also write a self-contained HTML report with plots to `FILE`"},
		&cli.BoolFlag{Name: "no-before", Destination: &o.noBefore,
			Usage: "do not evaluate the input model (metrics.json then has no " +
				"before section)"},
		&cli.BoolFlag{Name: "dynamic-batch", Destination: &o.dynamicBatch,
			Usage: "write the output with a symbolic batch dimension when " +
				"the input's is fixed (an export without dynamic_axes); by default the output keeps the " +
				"input's declared shapes"},
		&cli.BoolFlag{Name: "allow-chance", Destination: &o.allowChance,
			Usage: "unlearn even a model that scores near chance on the training " +
				"split, or better under another preprocessing (by default refused: see README, Data)"},
		&cli.StringFlag{Name: "classifier", Destination: &o.classifier,
			Usage: "classifier layer name when the default (the layer " +
				"producing the logits) is wrong"},
	}, append(o.miaFlags(), o.data.flags(128, "examples per step")...)...), o.rt.flags()...)
}

func (o *methodOpts) complete(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("unexpected arguments %v (flags start with --; see `unlearn help`)", c.Args().Slice())
	}
	o.set = c.IsSet
	return nil
}

func (o *methodOpts) validate() error { return nil } // job checks the flags as it maps them

// outputs maps the output flags onto s, with their defaults beside the
// input model.
func (o *methodOpts) outputs(s *unlearn.Job) {
	s.Out, s.DefaultOut, s.Overwrite, s.BundledData = o.out, o.out == "", o.overwrite, o.data.path == ""
	if s.Out == "" {
		s.Out = strings.TrimSuffix(s.ModelPath, filepath.Ext(s.ModelPath)) + "-unlearned.onnx"
	}
	s.MetricsPath = o.metrics
	if s.MetricsPath == "" {
		s.MetricsPath = strings.TrimSuffix(s.Out, filepath.Ext(s.Out)) + ".metrics.json"
	}
}

// job validates the model, forget and method flags, before any work, and
// maps them onto a Job without outputs (shared by the main command and
// score).
func (o *methodOpts) job() (*unlearn.Job, error) {
	s := &unlearn.Job{ModelPath: o.model, OraclePath: o.oracle, Method: o.method,
		Budget: o.budget, MaskPath: o.mask, ReportPath: o.report,
		RetrainEpochs: o.retrainEpochs, Classifier: o.classifier, Terms: terms,
		NoBefore: o.noBefore, AllowChance: o.allowChance, DynamicBatch: o.dynamicBatch,
		Tool: "unlearn " + Version, Info: logs.Info, Bar: logs.Bar, Stage: logs.Stage}
	if s.ModelPath == "" {
		return nil, usagef("--model is required (the ONNX classifier to unlearn); see `unlearn help`")
	}
	if o.forget == "" {
		return nil, usagef("--forget is required (the ids of the training examples to forget)")
	}
	m, ok := unlearn.LookupMethod(s.Method)
	if !ok {
		return nil, usagef("--method %q: unknown; choose one of %s", s.Method, methodNames())
	}
	s.Strategy, s.Algorithm = m.Strategy, m.Algorithm
	if v := o.strategy; v != "" {
		if s.MaskPath != "" {
			return nil, usagef("--strategy %s and --mask %s: the mask file already fixes the parameters; "+
				"pass one of them", v, s.MaskPath)
		}
		s.Strategy = v
	}
	if o.set("budget") && (s.MaskPath != "" || m.Algorithm == "retrain") {
		return nil, usagef("--budget and %s", map[bool]string{true: "--mask: the mask file records its own " +
			"budget; pass one of them", false: "--method retrain: it re-initialises every parameter, there " +
			"is no mask to size; drop --budget"}[s.MaskPath != ""])
	}
	chosen := o.set("method") || o.set("strategy")
	floor, err := unlearn.ResolveDepthFloor(o.opt("depth-floor", o.depthFloor), chosen, s.MaskPath, s.Strategy)
	if err != nil {
		return nil, usagef("--depth-floor: %w", err)
	}
	s.DepthFloor = floor
	if o.widen != "" {
		if s.Widen, err = unlearn.ParseWiden(o.widen, s.Budget); err != nil {
			return nil, usageError{err}
		}
	}
	if s.RetrainEpochs < 0 {
		return nil, usagef("--retrain-epochs %d: must be ≥ 0", s.RetrainEpochs)
	}
	if v := o.algorithm; v != "" {
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
	augment, err := parseAugment(o.augment, "")
	if err != nil {
		return nil, err
	}
	if err := checkAugmentAlgorithm(augment, algo); err != nil {
		return nil, err
	}
	if !(s.Budget > 0 && s.Budget <= 1) {
		return nil, usagef("--budget %g: must be in (0, 1] (a fraction of all trainable parameters)", s.Budget)
	}
	if o.epochs < 0 {
		return nil, usagef("--epochs %d: must be ≥ 0", o.epochs)
	}
	if o.lr < 0 {
		return nil, usagef("--lr %g: must be ≥ 0 (0 takes the algorithm's default)", o.lr)
	}
	if o.data.batchSize <= 0 {
		return nil, usagef("--batch-size %d: must be positive", o.data.batchSize)
	}
	sched := o.schedule
	if sched == "" {
		// The recommended default (auto) unless the flags already make
		// a fixed recipe, or the algorithm does not train in epochs.
		sched = unlearn.DefaultSchedule(s.Algorithm, o.set("epochs") || o.set("lr") || !o.proxies)
	}
	switch sched {
	case unlearn.ScheduleFixed:
	case unlearn.ScheduleAuto:
		if !slices.Contains(unlearn.AutoAlgorithms(), s.Algorithm) {
			return nil, usagef("--schedule auto: %s does not train in epochs; "+
				"auto applies to %s", s.Algorithm, strings.Join(unlearn.AutoAlgorithms(), ", "))
		}
		if !o.proxies {
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
	if o.maxEpochs < 0 {
		return nil, usagef("--max-epochs %d: must be ≥ 0", o.maxEpochs)
	}
	if o.set("max-epochs") && sched != unlearn.ScheduleAuto {
		return nil, usagef("--max-epochs applies to --schedule auto; with a fixed schedule use --epochs")
	}
	for _, t := range []struct {
		f string
		v float64
	}{{"forget-tolerance", o.forgetTol}, {"utility-tolerance", o.utilityTol}} {
		f, v := t.f, t.v
		if !o.set(f) {
			continue
		}
		if !(v >= 0 && v < 1) {
			return nil, usagef("--%s %g: must be a fraction in [0, 1) (0.01 = 1 point of accuracy)", f, v)
		}
		if sched != unlearn.ScheduleAuto {
			return nil, usagef("--%s applies to --schedule auto (the stopping rule's tolerance)", f)
		}
	}
	if s.Config, err = unlearn.Configure(s.Algorithm, unlearn.Recipe{Epochs: o.epochs,
		LR: o.lr, Schedule: sched, MaxEpochs: o.maxEpochs, EpochFraction: o.epochFraction,
		ForgetTolerance:  unlearn.Tolerance(o.opt("forget-tolerance", o.forgetTol)),
		UtilityTolerance: unlearn.Tolerance(o.opt("utility-tolerance", o.utilityTol)),
		NoProxies:        !o.proxies, Momentum: o.opt("momentum", o.momentum),
		WeightDecay: o.opt("weight-decay", o.weightDecay), GradChannels: o.gradChannels}); err != nil {
		return nil, usageError{err}
	}
	s.Config.Proxies.NoMIA = o.noMIA
	s.Config.BatchSize = o.data.batchSize
	s.Config.Seed = o.seed
	s.Config.Augment = augment
	return s, nil
}

func (o *methodOpts) run(c *cli.Context) error {
	s, err := o.job()
	if err != nil {
		return err
	}
	o.outputs(s)
	if err := outs.checkRun(c, s.Out, s.MetricsPath, s.ReportPath, o.out == "", o.metrics == ""); err != nil {
		return err
	}
	suite, err := o.suite(true)
	if err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	s.Suite = suite
	res, err := unlearn.Unlearn(ctx, *s)
	if err != nil {
		return err
	}
	// --metrics -: stdout carries metrics.json and nothing else.
	tableTo := c.App.Writer
	if s.MetricsPath == "-" {
		tableTo = tableBesideJSON(c)
	}
	_ = report.WriteTable(tableTo, res.Report)
	logs.Result("result", report.RunResult(res.Report, s.MetricsPath, s.ReportPath)...)
	_ = report.WriteRunSummary(tableTo, res.Report, s.MetricsPath, s.ReportPath)
	if s.MetricsPath == "-" {
		if err := writeJSON(c, "-", res.Report); err != nil {
			return err
		}
	}
	if why := report.NotVouchedReason(res.Report.Unlearning); o.strict && why != "" {
		return notVouched{why}
	}
	return nil
}

// opt is a flag's value v when it was given, else nil (the library's
// default).
func (o *methodOpts) opt(name string, v float64) *float64 {
	if !o.set(name) {
		return nil
	}
	return &v
}
