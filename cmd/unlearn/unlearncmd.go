package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/eval/report"
	"github.com/unlearn-tool/unlearn/internal/textio"
	"github.com/unlearn-tool/unlearn/localize"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// methodOpts are the main command's flags: the model, the forget set and
// the attacks' settings (suiteOpts), the method and its recipe, and the
// outputs. score takes the same flags but the outputs and the oracle.
// Most set a field of spec, the library's job (methodTable); validate is
// its Validate.
type methodOpts struct {
	suiteOpts
	spec              unlearn.Spec
	out, metrics      string
	overwrite, strict bool
	cmdTable
}

// methodTable is the main command's table: each flag, the field of
// unlearn.Spec it sets (by path; none for the command's own flags), its
// default and its help.
func (o *methodOpts) methodTable() []row {
	s, r := &o.spec, &o.spec.Recipe
	return []row{
		field("model", "ModelPath", &s.ModelPath, "", "the trained ONNX classifier (never modified)"),
		optional("method", "Method", &s.Method, unlearn.Recommended.Method, "del (DEL localization + "+
			"reset-and-finetune), salun (SalLoc + random labels), retrain (exact: every parameter "+
			"re-initialised and trained from scratch on the retain set, the train command's recipe), "+
			"or a baseline: "+strings.Join(unlearn.Methods(), ", ")),
		field("strategy", "Strategy", &s.Strategy, "", "localization strategy, "+
			"overriding --method's: "+strings.Join(localize.Strategies(), ", ")),
		field("algorithm", "Algorithm", &s.Algorithm, "", "unlearning algorithm, "+
			"overriding --method's: "+strings.Join(unlearn.Algorithms(), ", ")),
		optional("budget", "Budget", &s.Budget, unlearn.Recommended.Budget,
			"fraction of all trainable parameters the strategy selects, in (0, 1]"),
		field("widen", "Widen", &s.Widen, "", "strategy del, schedule auto: larger "+
			"budgets `B,B` to widen the mask to, in order, while the run's own oracle estimate says the forget set is "+
			"still remembered (e.g. 0.3,0.5; each widening runs again from the input model)"),
		optional("widen-floor", "WidenFloor", &s.WidenFloor, 0, "the wider budgets' depth floor `F` (--depth-floor's)"),
		optional("depth-floor", "DepthFloor", &s.DepthFloor, 0, fmt.Sprintf("strategy del: layers in the first "+
			"fraction `F` of the network's depth are never reset, in [0, 1) (default: %g when the "+
			"localization is left to the default, i.e. no --method, --strategy or --mask; else 0, "+
			"the paper's DEL)", unlearn.Recommended.DepthFloor)),
		optional("epochs", "Recipe.Epochs", &r.Epochs, 0, "training epochs (0: the algorithm's default, see "+
			"README; retrain: 3, the train command's)"),
		optional("lr", "Recipe.LR", &r.LR, 0, "learning rate (0: the algorithm's default, see README; "+
			"retrain: 0.05, the train command's peak rate; with --schedule auto, given skips the range test)"),
		optional("momentum", "Recipe.Momentum", &r.Momentum, 0, "SGD momentum of the training algorithms, in "+
			"[0, 1) (default 0.9, as the train command's)"),
		optional("weight-decay", "Recipe.WeightDecay", &r.WeightDecay, 0, "SGD weight decay of the training "+
			"algorithms (default: the algorithm's; retrain 5e-4, the train command's)"),
		field("schedule", "Recipe.Schedule", &r.Schedule, "", "fixed (--epochs at --lr) or auto (a learning-rate "+
			"range test, then epochs until the oracle-free proxies say the forget set looks unseen and utility "+
			"is back; training algorithms only); default: auto for training algorithms, fixed when "+
			"--epochs, --lr or --proxies=false gives a recipe; with --method retrain, the train "+
			"command's per-step cosine (default; fixed too) or constant"),
		optional("max-epochs", "Recipe.MaxEpochs", &r.MaxEpochs, 0, "with --schedule auto, the cap on epochs "+
			"(0: --epochs if given, else twice the algorithm's default)"),
		optional("epoch-fraction", "Recipe.EpochFraction", &r.EpochFraction, 0, "with --schedule auto, train "+
			"each round over this fraction `F` of the retain set, in (0, 1], and check the stopping rule after "+
			"each (--max-epochs and the patience then count rounds)"),
		optional("forget-tolerance", "Recipe.ForgetTolerance", &r.ForgetTolerance, 0, "with --schedule auto, "+
			"how far (a fraction: 0.01 = 1 point) the forget accuracy may stay above the lower of the unseen "+
			"reference's and the oracle estimate's when stopping (default 0.01, the rule's; see README)"),
		optional("utility-tolerance", "Recipe.UtilityTolerance", &r.UtilityTolerance, 0, "with --schedule "+
			"auto, how far (a fraction) test accuracy may stay below the oracle estimate's when stopping "+
			"(default 0.005, the rule's; see README)"),
		optional("plateau-cuts", "Recipe.PlateauCuts", &r.PlateauCuts, 0, "auto: retries at 0.3× the rate on a plateau"),
		field("grad-channels", "Recipe.GradChannels", &r.GradChannels, false, "compute a masked weight's "+
			"gradient for the mask's output channels only (cheaper steps where the mask selects few channels "+
			"of large layers; the updates equal the full gradient's up to float32 rounding, so results are "+
			"not bit-identical to a run without it)"),
		negated("proxies", "Recipe.NoProxies", &r.NoProxies, "hold out a slice of the retain set (5 %, 100 "+
			"to 2,000 examples; not trained on) and report the oracle-free proxies; --proxies=false trains "+
			"on the whole retain set (needed by --schedule auto)"),
		field("seed", "Seed", &s.Seed, 0, "seed for resets, example order, random labels and augmentation"),
		withPath("Augment", augmentFlag(&s.Augment, "the unlearning algorithm's "+
			"training batches ("+strings.Join(unlearn.AugmentingAlgorithms(), ", ")+")")),
		field("oracle", "OraclePath", &s.OraclePath, "", "model `FILE` retrained without the forget set (e.g. "+
			"by \"unlearn train --exclude\"): adds Δ = oracle − unlearned"),
		field("mask", "MaskPath", &s.MaskPath, "", "mask `FILE` from \"unlearn localize\" (unlearn.mask/v1) "+
			"to use instead of localizing"),
		field("retrain-epochs", "RetrainEpochs", &s.RetrainEpochs, 0, "epochs the model was trained for: "+
			"estimates the cost of retraining from scratch from a few full training steps timed on a copy of "+
			"the model (0: the model's unlearn.train_epochs metadata if it has one, else no estimate)"),
		field("out", "", &o.out, "", "unlearned model (default: <model>-unlearned.onnx beside the input; see --overwrite)"),
		field("overwrite", "", &o.overwrite, false, "replace the default --out of an earlier run"),
		field("metrics", "", &o.metrics, "", "metrics JSON, schema unlearn.metrics/v1 (default: <out "+
			"without .onnx>.metrics.json)"),
		field("report", "ReportPath", &s.ReportPath, "", "also write a self-contained HTML report with plots to `FILE`"),
		field("no-before", "NoBefore", &s.NoBefore, false, "do not evaluate the input model (metrics.json then "+
			"has no before section)"),
		field("dynamic-batch", "DynamicBatch", &s.DynamicBatch, false, "write the output with a symbolic batch "+
			"dimension when the input's is fixed (an export without dynamic_axes); by default the output keeps "+
			"the input's declared shapes"),
		field("allow-chance", "AllowChance", &s.AllowChance, false, "unlearn even a model that scores near "+
			"chance on the training split, or better under another preprocessing (by default refused: see README, Data)"),
		field("classifier", "Classifier", &s.Classifier, "", "classifier layer name when the default (the "+
			"layer producing the logits) is wrong"),
	}
}

// table is the method table followed by the shared flags: the forget set,
// the attacks', the data's and the runtime's; the forget set, no-mia and
// batch-size set Spec fields too (complete copies them).
func (o *methodOpts) table() []row {
	paths := map[string]string{"forget": "ForgetPath", "no-mia": "NoMIA", "batch-size": "BatchSize"}
	rows := append(o.methodTable(), shared(paths,
		append(append(o.miaFlags(), o.data.flags(128, "examples per step")...), o.rt.flags()...)...)...)
	for _, s := range unlearn.AlgorithmSettings() { // each algorithm's own (Recipe.Settings)
		rows = append(rows, withPath("Recipe.Settings."+s.Name, &cli.GenericFlag{Name: s.Name,
			Value: o.spec.Recipe.Settings.Var(s), Usage: s.Help}))
	}
	return rows
}

func (o *methodOpts) flags() []cli.Flag {
	o.rows = o.table()
	return flagsOf(o.rows)
}

func (o *methodOpts) complete(c *cli.Context) error {
	if c.NArg() > 0 {
		hint := "flags start with --; see `unlearn help`"
		var names []string
		for _, cm := range c.App.VisibleCommands() {
			names = append(names, cm.Name)
		}
		if name, ok := textio.Closest(c.Args().First(), names); ok {
			hint = "did you mean `unlearn " + name + "`?"
		}
		return usagef("unexpected arguments %v (%s)", c.Args().Slice(), hint)
	}
	given(c, o.rows)
	o.spec.ForgetPath, o.spec.NoMIA, o.spec.BatchSize = o.forget, o.noMIA, o.data.batchSize
	return nil
}

func (o *methodOpts) validate() error { return asUsage(o.spec.Validate()) }

// job is the library's job for spec, without outputs (shared by the main
// command and score), reporting to the terminal.
func (o *methodOpts) job() (*unlearn.Job, error) {
	s, err := o.spec.Job()
	if err != nil {
		return nil, usageError{err}
	}
	s.Terms, s.Tool, s.Info, s.Bar, s.Stage = terms, "unlearn "+Version, logs.Info, logs.Bar, logs.Stage
	return &s, nil
}

func (o *methodOpts) run(c *cli.Context) error {
	s, err := o.job()
	if err != nil {
		return err
	}
	s.Out, s.MetricsPath, s.Overwrite, s.BundledData = o.out, o.metrics, o.overwrite, o.data.path == ""
	s.DefaultPaths() // beside the input model
	if err := checkRun(c, s.Out, s.MetricsPath, s.ReportPath, o.out == "", o.metrics == ""); err != nil {
		return err
	}
	suite, err := o.suite(c, true)
	if err != nil {
		return err
	}
	ctx := interrupts.Context() // cancelled by SIGINT or SIGTERM
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
