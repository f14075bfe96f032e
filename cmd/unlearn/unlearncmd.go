package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/localize"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// methods maps --method to a localization strategy and an algorithm.
var methods = map[string][2]string{
	"del":            {"del", "rft"},
	"salun":          {"salloc", "random-label"},
	"shallowest-rft": {"shallowest", "rft"},
	"critmem-rl":     {"critmem", "random-label"},
	"retrain-free":   {"full", "rft"},
	"finetune":       {"full", "finetune"},
	"neggrad":        {"full", "neggrad"},
	"neggrad+":       {"full", "neggrad+"},
	"random-label":   {"full", "random-label"},
	"l1-sparse":      {"full", "l1-sparse"},
	"scrub":          {"full", "scrub"},
	"ssd":            {"full", "ssd"},
	"iu":             {"full", "iu"},
}

// recommended is what `unlearn --model M --forget ids.txt` runs when no
// method, budget or schedule is given (issue 8; README "Which method").
// The experiment grid's default rows are keyed by its String, so changing
// it reruns them.
var recommended = struct {
	Method   string
	Budget   float64
	Schedule string
}{Method: "del", Budget: 0.1, Schedule: unlearn.ScheduleAuto}

func recommendedString() string {
	s := fmt.Sprintf("--method %s --budget %g --schedule %s", recommended.Method, recommended.Budget, recommended.Schedule)
	if recommended.Schedule == unlearn.ScheduleAuto {
		s += fmt.Sprintf(" (auto rule %d)", unlearn.AutoVersion)
	}
	return s
}

func methodNames() string {
	var out []string
	for k := range methods {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func unlearnFlags() []cli.Flag {
	return append(append([]cli.Flag{
		&cli.StringFlag{Name: "model", Usage: "the trained ONNX classifier (never modified)"},
		&cli.StringFlag{Name: "method", Value: recommended.Method, Usage: "del (DEL localization + reset-and-finetune), salun (SalLoc + random labels), or a baseline: " + methodNames()},
		&cli.StringFlag{Name: "strategy", Usage: "localization strategy, overriding --method's: del, salloc, critmem, deepest, shallowest, random, full"},
		&cli.StringFlag{Name: "algorithm", Usage: "unlearning algorithm, overriding --method's: " + strings.Join(unlearn.Algorithms(), ", ")},
		&cli.Float64Flag{Name: "budget", Value: recommended.Budget, Usage: "fraction of all trainable parameters the strategy selects, in (0, 1]"},
		&cli.IntFlag{Name: "epochs", Usage: "training epochs (0: the algorithm's default, see README)"},
		&cli.Float64Flag{Name: "lr", Usage: "learning rate (0: the algorithm's default, see README; with --schedule auto, given skips the range test)"},
		&cli.StringFlag{Name: "schedule", Usage: "fixed (--epochs at --lr) or auto (a learning-rate range test, then epochs until the oracle-free proxies say the forget set looks unseen and utility is back; training algorithms only); default: auto for training algorithms, fixed when --epochs, --lr or --proxies=false gives a recipe"},
		&cli.IntFlag{Name: "max-epochs", Usage: "with --schedule auto, the cap on epochs (0: --epochs if given, else twice the algorithm's default)"},
		&cli.Float64Flag{Name: "forget-tolerance", Usage: "with --schedule auto, how far (a fraction: 0.01 = 1 point) the forget accuracy may stay above the reference's when stopping (default 0.01, the rule's; see README)"},
		&cli.Float64Flag{Name: "utility-tolerance", Usage: "with --schedule auto, how far (a fraction) held-out accuracy may stay below the input model's when stopping (default 0.01, the rule's)"},
		&cli.BoolFlag{Name: "proxies", Value: true, Usage: "hold out a slice of the retain set (5 %, 100 to 2,000 examples; not trained on) and report the oracle-free proxies; --proxies=false trains on the whole retain set (needed by --schedule auto)"},
		&cli.Uint64Flag{Name: "seed", Value: 0, Usage: "seed for resets, example order and random labels"},
		&cli.StringFlag{Name: "oracle", Usage: "a model retrained without the forget set (e.g. `unlearn train --exclude`): adds Δ = oracle − unlearned"},
		&cli.StringFlag{Name: "mask", Usage: "a mask file from `unlearn localize` (unlearn.mask/v1) to use instead of localizing"},
		&cli.IntFlag{Name: "retrain-epochs", Usage: "epochs the model was trained for: estimates the cost of retraining from scratch from this run's speed (0: no estimate)"},
		&cli.StringFlag{Name: "out", Usage: "unlearned model (default: <model>-unlearned.onnx beside the input)"},
		&cli.StringFlag{Name: "metrics", Usage: "metrics JSON, schema unlearn.metrics/v1 (default: <out without .onnx>.metrics.json)"},
		&cli.StringFlag{Name: "report", Usage: "also write a self-contained HTML report with plots to `FILE`"},
		&cli.BoolFlag{Name: "no-before", Usage: "do not evaluate the input model (metrics.json then has no before section)"},
		&cli.StringFlag{Name: "classifier", Usage: "classifier layer name when the default (the layer producing the logits) is wrong"},
	}, append(miaFlags(), withBatchSize(dataFlags(), 128, "examples per step")...)...), runtimeFlags()...)
}

// runSettings are the validated flags of one unlearning run.
type runSettings struct {
	model, forget, oracle, out, metrics string
	mask, report                        string
	retrainEpochs                       int
	method, strategy, algorithm         string
	budget                              float64
	cfg                                 unlearn.Config
	batch                               int
}

func parseUnlearnFlags(c *cli.Context) (*runSettings, error) {
	if c.NArg() > 0 {
		return nil, usagef("unexpected arguments %v (flags start with --; see `unlearn help`)", c.Args().Slice())
	}
	s := &runSettings{model: c.String("model"), forget: c.String("forget"), oracle: c.String("oracle"),
		method: c.String("method"), budget: c.Float64("budget"), batch: c.Int("batch-size"),
		mask: c.String("mask"), report: c.String("report"), retrainEpochs: c.Int("retrain-epochs")}
	if s.model == "" {
		return nil, usagef("--model is required (the ONNX classifier to unlearn); see `unlearn help`")
	}
	if s.forget == "" {
		return nil, usagef("--forget is required (the ids of the training examples to forget)")
	}
	m, ok := methods[s.method]
	if !ok {
		return nil, usagef("--method %q: unknown; choose one of %s", s.method, methodNames())
	}
	s.strategy, s.algorithm = m[0], m[1]
	if v := c.String("strategy"); v != "" {
		if s.mask != "" {
			return nil, usagef("--strategy %s and --mask %s: the mask file already fixes the parameters; pass one of them", v, s.mask)
		}
		s.strategy = v
	}
	if c.IsSet("budget") && s.mask != "" {
		return nil, usagef("--budget and --mask: the mask file records its own budget; pass one of them")
	}
	if s.retrainEpochs < 0 {
		return nil, usagef("--retrain-epochs %d: must be ≥ 0", s.retrainEpochs)
	}
	if v := c.String("algorithm"); v != "" {
		s.algorithm = v
	}
	if !validStrategy(s.strategy) {
		return nil, usagef("--strategy %q: unknown; choose one of %s", s.strategy, strings.Join(strategies(), ", "))
	}
	known := false
	for _, a := range unlearn.Algorithms() {
		known = known || a == s.algorithm
	}
	if !known {
		return nil, usagef("--algorithm %q: unknown; choose one of %s", s.algorithm, strings.Join(unlearn.Algorithms(), ", "))
	}
	if !(s.budget > 0 && s.budget <= 1) {
		return nil, usagef("--budget %g: must be in (0, 1] (a fraction of all trainable parameters)", s.budget)
	}
	if c.Int("epochs") < 0 {
		return nil, usagef("--epochs %d: must be ≥ 0", c.Int("epochs"))
	}
	if c.Float64("lr") < 0 {
		return nil, usagef("--lr %g: must be ≥ 0 (0 takes the algorithm's default)", c.Float64("lr"))
	}
	if s.batch <= 0 {
		return nil, usagef("--batch-size %d: must be positive", s.batch)
	}
	s.cfg = unlearn.Defaults(s.algorithm)
	if e := c.Int("epochs"); e > 0 {
		s.cfg.Epochs = e
	}
	if lr := c.Float64("lr"); lr > 0 {
		s.cfg.LR = lr
	}
	sched := c.String("schedule")
	if sched == "" {
		// The recommended default (auto) unless the flags already make
		// a fixed recipe, or the algorithm does not train in epochs.
		sched = recommended.Schedule
		if c.IsSet("epochs") || c.IsSet("lr") || !c.Bool("proxies") || s.algorithm == "ssd" || s.algorithm == "iu" {
			sched = unlearn.ScheduleFixed
		}
	}
	switch sched {
	case unlearn.ScheduleFixed:
	case unlearn.ScheduleAuto:
		if s.algorithm == "ssd" || s.algorithm == "iu" {
			return nil, usagef("--schedule auto: %s does not train in epochs; auto applies to rft, finetune, neggrad, neggrad+, random-label, l1-sparse and scrub", s.algorithm)
		}
		if !c.Bool("proxies") {
			return nil, usagef("--schedule auto --proxies=false: the auto schedule stops on the proxies; drop --proxies=false")
		}
		// Zero epochs and rate: Run picks the cap and runs the range test.
		s.cfg.Schedule, s.cfg.Epochs, s.cfg.LR = sched, c.Int("epochs"), c.Float64("lr")
		s.cfg.Auto.MaxEpochs = c.Int("max-epochs")
	default:
		return nil, usagef("--schedule %q: unknown; choose fixed or auto", sched)
	}
	if c.Int("max-epochs") < 0 {
		return nil, usagef("--max-epochs %d: must be ≥ 0", c.Int("max-epochs"))
	}
	if c.IsSet("max-epochs") && s.cfg.Schedule != unlearn.ScheduleAuto {
		return nil, usagef("--max-epochs applies to --schedule auto; with a fixed schedule use --epochs")
	}
	for _, f := range []string{"forget-tolerance", "utility-tolerance"} {
		if !c.IsSet(f) {
			continue
		}
		if v := c.Float64(f); !(v >= 0 && v < 1) {
			return nil, usagef("--%s %g: must be a fraction in [0, 1) (0.01 = 1 point of accuracy)", f, v)
		}
		if s.cfg.Schedule != unlearn.ScheduleAuto {
			return nil, usagef("--%s applies to --schedule auto (the stopping rule's tolerance)", f)
		}
	}
	tol := func(f string) float64 {
		if v := c.Float64(f); v > 0 || !c.IsSet(f) {
			return v // 0 when unset: the rule's default
		}
		return -1 // an explicit 0: no tolerance (unlearn.AutoConfig reads negative as zero)
	}
	s.cfg.Auto.ForgetTolerance, s.cfg.Auto.UtilityTolerance = tol("forget-tolerance"), tol("utility-tolerance")
	s.cfg.Proxies.Track = c.Bool("proxies")
	s.cfg.Proxies.NoMIA = c.Bool("no-mia")
	s.cfg.BatchSize = s.batch
	s.cfg.Seed = c.Uint64("seed")
	s.out = c.String("out")
	if s.out == "" {
		s.out = strings.TrimSuffix(s.model, filepath.Ext(s.model)) + "-unlearned.onnx"
	}
	s.metrics = c.String("metrics")
	if s.metrics == "" {
		s.metrics = strings.TrimSuffix(s.out, filepath.Ext(s.out)) + ".metrics.json"
	}
	if err := checkRunOutputs(c, s.out, s.metrics, s.report); err != nil {
		return nil, err
	}
	return s, nil
}

func runUnlearn(c *cli.Context) error {
	s, err := parseUnlearnFlags(c)
	if err != nil {
		return err
	}
	// Read and check everything before any work.
	r, err := newEvalRun(c)
	if err != nil {
		return err
	}
	if len(r.retain) == 0 {
		return fmt.Errorf("%s: the ids cover the whole training split (%d examples); nothing would be left to keep, retrain from scratch instead", s.forget, r.ds.Train.Len())
	}
	opts := r.opts.Runtime
	s.cfg.Runtime = opts
	m, err := r.load(s.model, "model")
	if err != nil {
		return err
	}
	_, work, _, err := unlearn.PrepareModel(s.model)
	if err != nil {
		return err
	}
	var om *graph.Model
	if s.oracle != "" {
		if om, err = r.load(s.oracle, "oracle"); err != nil {
			return err
		}
		if a, b := staticClasses(m), staticClasses(om); a > 0 && b > 0 && a != b {
			return fmt.Errorf("oracle %s outputs %d classes, model %s outputs %d", s.oracle, b, s.model, a)
		}
	}
	var fileMask *localize.Mask
	if s.mask != "" {
		if fileMask, err = localize.ReadMask(s.mask, work); err != nil {
			return fmt.Errorf("--mask: %w", err)
		}
		s.strategy, s.budget = fileMask.Strategy, fileMask.Budget
	}
	ctx, stop := signalContext()
	defer stop()
	var tm eval.UnlearningTimings
	start := time.Now()

	t0 := time.Now()
	var before *eval.Metrics
	if !c.Bool("no-before") {
		if before, err = r.evaluate(m, s.model, "before"); err != nil {
			return err
		}
	}
	var omet *eval.Metrics
	if om != nil {
		if omet, err = r.evaluate(om, s.oracle, "oracle"); err != nil {
			return err
		}
	}
	tm.EvaluateBeforeS = time.Since(t0).Seconds()
	if ctx.Err() != nil {
		return errInterrupted
	}

	t0 = time.Now()
	var mask map[string][]bool
	var maskInfo map[string]any
	if fileMask != nil {
		logs.info("mask", fmt.Sprintf("mask: %s (strategy %s, budget %g, %d of %d parameters)", s.mask, fileMask.Strategy, fileMask.Budget, fileMask.Selected, fileMask.Total),
			"path", s.mask, "strategy", fileMask.Strategy, "budget", fileMask.Budget, "selected", fileMask.Selected, "total", fileMask.Total)
		mask, maskInfo, err = maskSummary(fileMask)
	} else {
		logs.info("localize", fmt.Sprintf("localizing: strategy %s, budget %g", s.strategy, s.budget), "strategy", s.strategy, "budget", s.budget)
		mask, maskInfo, err = localizeMask(ctx, work, r.ds, r.forget, s, opts)
	}
	if ctx.Err() != nil {
		return errInterrupted
	}
	if err != nil {
		return err
	}
	tm.LocalizeS = time.Since(t0).Seconds()

	if s.cfg.Proxies.Track && (r.ds.Test == nil || r.ds.Test.Len() == 0) {
		if s.cfg.Schedule == unlearn.ScheduleAuto {
			return fmt.Errorf("--schedule auto: --data %s has no test split, and the proxies need test examples to show what unseen looks like", r.ds.Path)
		}
		s.cfg.Proxies.Track = false
		logs.info("proxies", fmt.Sprintf("no proxies: --data %s has no test split", r.ds.Path), "reason", "no test split")
	}
	sched := fmt.Sprintf("%d epochs, lr %g", s.cfg.Epochs, s.cfg.LR)
	if s.cfg.Schedule == unlearn.ScheduleAuto {
		sched = "auto schedule"
	}
	logs.info("unlearn", fmt.Sprintf("unlearning: algorithm %s, %s, batch %d, seed %d; forget %d, retain %d examples",
		s.algorithm, sched, s.cfg.BatchSize, s.cfg.Seed, len(r.forget), len(r.retain)),
		"algorithm", s.algorithm, "schedule", s.cfg.Schedule, "epochs", s.cfg.Epochs, "lr", s.cfg.LR, "batch_size", s.cfg.BatchSize, "seed", s.cfg.Seed,
		"forget", len(r.forget), "retain", len(r.retain))
	bar := newProgress(s.algorithm)
	s.cfg.Progress = func(p unlearn.Progress) {
		if p.Steps > 0 {
			bar.update(max(p.Epoch-1, 0)*p.Steps+p.Step, max(p.Epochs, 1)*p.Steps)
		}
	}
	// The model is staged under a hidden name and renamed into place only
	// after its metrics are written: even a SIGKILL, which cannot be
	// handled, never leaves a model without its metrics under --out. (An
	// external data file, for models over 2 GB, gets its final name at once;
	// the model that refers to it comes last.)
	stage := outfile.Stage(s.out)
	dataPath := s.out + ".data"
	_, statErr := os.Stat(dataPath)
	hadData, committed := statErr == nil, false
	outfile.Track(stage)
	defer func() {
		os.Remove(stage)
		outfile.Untrack(stage)
		if !committed && !hadData {
			os.Remove(dataPath) // external data of a model that was not kept
		}
	}()
	t0 = time.Now()
	outcome, err := unlearn.Execute(ctx, unlearn.Job{
		ModelPath: s.model, Data: r.ds, Forget: r.forget, Algorithm: s.algorithm, Config: s.cfg,
		Mask: mask, Classifier: c.String("classifier"), Out: stage, Location: filepath.Base(s.out) + ".data",
	})
	if ctx.Err() != nil {
		return errInterrupted
	}
	if err != nil {
		return err
	}
	tm.UnlearnS = time.Since(t0).Seconds()
	for _, ep := range outcome.Result.Epochs {
		logs.info("epoch", fmt.Sprintf("epoch %d  loss %.4f  acc %.2f%%  %.1fs", ep.Epoch, ep.Loss, 100*ep.Accuracy, ep.Seconds),
			"epoch", ep.Epoch, "loss", ep.Loss, "accuracy", ep.Accuracy, "seconds", ep.Seconds)
	}

	// From here on a failure leaves no model (the deferred removal of the
	// staged file): a model without its metrics is a partial output.
	fail := func(err error) error {
		return fmt.Errorf("%w (no model written to %s)", err, s.out)
	}
	t0 = time.Now()
	um, err := r.load(stage, "unlearned")
	if err != nil {
		return fail(err)
	}
	after, err := r.evaluate(um, s.out, "after")
	if err != nil {
		return fail(err)
	}
	if ctx.Err() != nil {
		return fail(errInterrupted)
	}
	tm.EvaluateAfterS = time.Since(t0).Seconds()
	tm.TotalS = time.Since(start).Seconds()

	rep := &eval.Report{Schema: eval.Schema, Tool: "unlearn " + Version, Metrics: after, Settings: r.settings(after)}
	if rep.Model, err = modelInfo(stage); err != nil {
		return fail(err)
	}
	rep.Model.Path = s.out
	if rep.Data, rep.Forget, err = r.provenance(); err != nil {
		return fail(err)
	}
	if before != nil {
		bi, err := modelInfo(s.model)
		if err != nil {
			return fail(err)
		}
		rep.Before = &eval.Section{Model: bi, Metrics: before}
	}
	if omet != nil {
		oi, err := modelInfo(s.oracle)
		if err != nil {
			return fail(err)
		}
		rep.Oracle = &eval.Section{Model: oi, Metrics: omet}
		rep.Delta = eval.NewDelta(omet, after)
		if rep.Agreement, err = eval.NewAgreement(omet, after); err != nil {
			return fail(err)
		}
	}
	rep.Unlearning = unlearningSection(s, outcome, maskInfo, tm, len(r.forget), len(r.retain))
	if ctx.Err() != nil {
		return fail(errInterrupted)
	}
	if err := emitTo(c, rep, s.metrics, s.report); err != nil {
		return fail(err)
	}
	unwrite := func() {
		os.Remove(s.metrics)
		if s.report != "" {
			os.Remove(s.report)
		}
	}
	if ctx.Err() != nil { // the signal came while the files were written
		unwrite()
		return fail(errInterrupted)
	}
	if err := os.Rename(stage, s.out); err != nil {
		unwrite()
		return fail(err)
	}
	committed = true
	u := rep.Unlearning
	res := []any{"out", s.out, "metrics", s.metrics, "accuracy", after.Accuracy,
		"changed_params", outcome.Audit.ChangedParams, "total_params", outcome.Audit.TotalParams,
		"outside_mask_bit_identical", outcome.Audit.BitIdentical, "timings", tm}
	if s.report != "" {
		res = append(res, "report", s.report)
	}
	if before != nil {
		res = append(res, "before_accuracy", before.Accuracy)
	}
	if omet != nil {
		res = append(res, "oracle_accuracy", omet.Accuracy, "avg_gap", rep.Delta.AvgGap)
	}
	if after.MIA != nil {
		res = append(res, "mia", after.MIA)
	}
	if u.RetrainEstimateS > 0 {
		res = append(res, "retrain_estimate_s", u.RetrainEstimateS, "speedup", u.Speedup)
	}
	if u.Proxies != nil {
		res = append(res, "proxies", u.Proxies.After)
	}
	if u.Auto != nil {
		res = append(res, "auto", map[string]any{"lr": u.Auto.LR, "stop_epoch": u.Auto.StopEpoch, "epoch": u.Auto.Epoch, "max_epochs": u.Auto.MaxEpochs, "reason": u.Auto.Reason})
	}
	logs.result("result", res...)
	fmt.Fprintf(c.App.Writer, "\nwrote %s: %d of %d parameters changed (%.1f%%) in %d tensors; every other parameter bit-identical\n",
		s.out, outcome.Audit.ChangedParams, outcome.Audit.TotalParams, 100*float64(outcome.Audit.ChangedParams)/float64(outcome.Audit.TotalParams), len(outcome.Audit.Changed))
	fmt.Fprintf(c.App.Writer, "time: localize %.1f s, unlearn %.1f s", tm.LocalizeS, tm.UnlearnS)
	if u.RetrainEstimateS > 0 {
		fmt.Fprintf(c.App.Writer, "; retraining from scratch (%d epochs) would take about %.0f s, ", u.RetrainEpochs, u.RetrainEstimateS)
		if u.Speedup >= 1 {
			fmt.Fprintf(c.App.Writer, "%.1f× this run", u.Speedup)
		} else {
			// Say it plainly: on a small model, retraining can be cheaper.
			fmt.Fprintf(c.App.Writer, "so this run cost %.1f× retraining", 1/u.Speedup)
		}
	}
	fmt.Fprintln(c.App.Writer)
	if a := u.Auto; a != nil {
		how := "as given"
		if len(a.RangeTest) > 0 {
			how = fmt.Sprintf("from a range test over %d rates", len(a.RangeTest))
		}
		result := ""
		if a.Epoch != a.StopEpoch {
			result = fmt.Sprintf("; the result is epoch %d, the closest to the rule", a.Epoch)
		}
		fmt.Fprintf(c.App.Writer, "auto schedule: lr %g (%s), stopped after epoch %d of at most %d (%s)%s\n", a.LR, how, a.StopEpoch, a.MaxEpochs, a.Reason, result)
	}
	if p := u.Proxies; p != nil {
		fmt.Fprintln(c.App.Writer, proxiesLine(p))
	}
	for _, n := range u.Notes {
		fmt.Fprintf(c.App.Writer, "note: %s\n", n)
	}
	fmt.Fprintf(c.App.Writer, "wrote %s", s.metrics)
	if s.report != "" {
		fmt.Fprintf(c.App.Writer, " and %s", s.report)
	}
	fmt.Fprintln(c.App.Writer)
	return nil
}

// proxiesLine summarises the oracle-free proxies for the terminal.
func proxiesLine(p *eval.ProxyLog) string {
	b, a := p.Before, p.After
	line := fmt.Sprintf("proxies (no oracle): forget accuracy %.2f%% → %.2f%%, unseen reference %.2f%%; test accuracy %.2f%% → %.2f%%; held-out retain accuracy %.2f%% → %.2f%% (%d examples, not trained on)",
		100*b.ForgetAccuracy, 100*a.ForgetAccuracy, 100*a.ReferenceAccuracy, 100*b.TestAccuracy, 100*a.TestAccuracy, 100*b.HoldoutAccuracy, 100*a.HoldoutAccuracy, p.HoldoutSize)
	if a.MIA != nil && b.MIA != nil {
		line += fmt.Sprintf("; proxy MIA (%s) on the forget set %.2f%% → %.2f%%, on the reference %.2f%%", a.MIA.Feature, 100*b.MIA.Forget, 100*a.MIA.Forget, 100*a.MIA.Reference)
	}
	return line
}

// maskSummary returns a mask's elements and its summary for metrics.json
// (the file without the per-tensor runs, which the mask file holds).
func maskSummary(mk *localize.Mask) (map[string][]bool, map[string]any, error) {
	b, err := json.Marshal(mk)
	if err != nil {
		return nil, nil, err
	}
	var summary map[string]any
	if err := json.Unmarshal(b, &summary); err != nil {
		return nil, nil, err
	}
	delete(summary, "tensors")
	return mk.Elements, summary, nil
}

// unlearningSection describes the run for metrics.json. The retraining
// estimate scales the measured seconds per trained example to
// retrain-epochs passes over the retain set; it needs an algorithm that
// trains in epochs over known examples.
func unlearningSection(s *runSettings, o *unlearn.Outcome, maskInfo map[string]any, tm eval.UnlearningTimings, nForget, nRetain int) *eval.Unlearning {
	u := &eval.Unlearning{Method: s.method, Strategy: s.strategy, Algorithm: s.algorithm, Budget: s.budget,
		Epochs: s.cfg.Epochs, LR: s.cfg.LR, Schedule: unlearn.ScheduleFixed, Proxies: o.Result.Proxies,
		BatchSize: s.cfg.BatchSize, Momentum: s.cfg.Momentum,
		WeightDecay: s.cfg.WeightDecay, Seed: s.cfg.Seed, Mask: maskInfo, Audit: o.Audit, Timings: tm,
		Log: map[string]any{"epochs": o.Result.Epochs, "reset": o.Result.Reset, "notes": o.Result.Notes}}
	if o.Note != "" {
		u.Notes = append(u.Notes, o.Note)
	}
	// An algorithm's warnings (an empty mask, a reset that empties early
	// layers) are printed and kept beside the run's other notes, not only
	// in its log.
	for _, n := range o.Result.Notes {
		if strings.HasPrefix(n, "warning: ") {
			u.Notes = append(u.Notes, n)
		}
	}
	if a := o.Result.Auto; a != nil {
		u.Schedule, u.Auto, u.Epochs, u.LR = unlearn.ScheduleAuto, a, a.StopEpoch, a.LR
	}
	trained := nRetain // the retain examples the run trained on
	if o.Result.Proxies != nil {
		trained -= o.Result.Proxies.HoldoutSize
	}
	perEpoch := 0 // examples one epoch of the algorithm trains on
	switch s.algorithm {
	case "rft", "finetune", "l1-sparse":
		perEpoch = trained
	case "random-label":
		perEpoch = trained + nForget
	}
	if s.retrainEpochs > 0 {
		var sec float64
		for _, ep := range o.Result.Epochs {
			sec += ep.Seconds
		}
		if perEpoch > 0 && len(o.Result.Epochs) > 0 && sec > 0 {
			perExample := sec / float64(len(o.Result.Epochs)*perEpoch)
			u.RetrainEpochs = s.retrainEpochs
			u.RetrainEstimateS = perExample * float64(nRetain*s.retrainEpochs)
			u.Speedup = u.RetrainEstimateS / (tm.LocalizeS + tm.UnlearnS)
		} else {
			u.Notes = append(u.Notes, fmt.Sprintf("no retraining estimate: %s does not train in epochs over the retain set", s.algorithm))
		}
	}
	return u
}
