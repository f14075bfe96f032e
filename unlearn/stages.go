package unlearn

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/eval/report"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/infer"
	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/internal/textio"
	"github.com/unlearn-tool/unlearn/localize"
	"github.com/unlearn-tool/unlearn/localize/floor"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/schema"
	"github.com/unlearn-tool/unlearn/unlearn/autorule"
)

// unlearning is one run of Unlearn, carried from stage to stage (prepare,
// localize, run, measure, commit); each stage fills the fields below its
// name.
type unlearning struct {
	job  Job
	s    *eval.Suite
	info func(event, text string, fields ...any)
	// said holds the notes info has written during the run, which the
	// log about the result (tell) does not repeat.
	said map[string]bool

	// prepare: the input model as read (m, written back into by the run),
	// a copy of it for the wider rungs (pristine; nil when the run cannot
	// widen), its working copy (p), the oracle (om), the mask file
	// (fileMask), the strategy and budget the run localizes with (the mask
	// file's when given), the algorithm's settings (cfg), and the input's
	// and the oracle's metrics (before, omet; nil when not evaluated).
	m, pristine, om *graph.Model
	p               *Prepared
	fileMask        *localize.Mask
	strategy        string
	budget          float64
	cfg             Config
	tm              schema.UnlearningTimings
	start           time.Time
	before, omet    *eval.Metrics

	// localize: the mask, the localization's scores and options (kept for
	// the wider rungs; nil scores for a mask file).
	mk       *localize.Mask
	scores   map[string][]float64
	lo       localize.Options
	maskInfo *schema.MaskSummary

	// run: the model staged under a hidden name beside Out (stage), its
	// external data file (dataPath, and whether one was there before the
	// run), the algorithm's outcome and the rungs of a widened mask.
	stage, dataPath    string
	hadData, committed bool
	out                *Outcome
	widened            []schema.WidenStep

	// measure: the result's metrics, the retraining timing (or why there
	// is none), the report and its notes.
	after *eval.Metrics
	rt    *RetrainTiming
	rtErr error
	rep   *schema.Report
	notes runNotes
}

// prepare checks the job, reads and checks every input before any work
// (the model, the oracle, the mask file, the data's preprocessing), and
// evaluates the input model and the oracle.
func prepare(ctx context.Context, job Job) (*unlearning, error) {
	if err := job.check(); err != nil {
		return nil, err
	}
	r := &unlearning{job: job, s: job.Suite, info: job.Info, said: map[string]bool{}}
	if r.info == nil {
		r.info = func(string, string, ...any) {}
	}
	s := r.s
	// Read and check everything before any work.
	fromMetadata, err := r.readModel()
	if err != nil {
		return nil, err
	}
	if job.OraclePath != "" {
		if r.om, err = s.Load(job.OraclePath, "oracle"); err != nil {
			return nil, err
		}
		if err := infer.CheckSameClasses(r.m, r.om, job.ModelPath, job.OraclePath); err != nil {
			return nil, err
		}
	}
	r.strategy, r.budget = job.Strategy, job.Budget
	if job.MaskPath != "" {
		if r.fileMask, err = localize.ReadMaskFor(job.MaskPath, r.p.Neurons); err != nil {
			return nil, setting.Wrap("mask", err)
		}
		r.strategy, r.budget = r.fileMask.Strategy, r.fileMask.Budget
	}
	// Data preprocessed unlike the model's training is refused before the
	// model is measured in full or trained (issue 64).
	sampleAcc, err := checkPreprocessing(s, r.m, job.ModelPath, fromMetadata, job.AllowChance, r.info)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ErrInterrupted
	}
	r.cfg = job.Config
	r.cfg.Runtime = s.Options.Runtime
	r.start = time.Now()
	if err := r.evaluateInputs(ctx, sampleAcc); err != nil {
		return nil, err
	}
	return r, nil
}

// readModel reads the input model and makes its working copy: the
// normalization and retraining epochs its metadata gives, a pristine copy
// for a run that may widen its mask, trainable BatchNormalization restored
// where the export folded it. It says whether the suite's normalization
// came from the model's metadata.
func (r *unlearning) readModel() (fromMetadata bool, err error) {
	job, s := &r.job, r.s
	if r.m, err = s.Load(job.ModelPath, "model"); err != nil {
		return false, err
	}
	m := r.m
	if fromMetadata, err = s.NormalizationFromModel(m, job.ModelPath); err != nil {
		return false, err
	}
	if job.RetrainEpochs == 0 {
		n, err := data.MetadataTrainEpochs(m.Metadata)
		if err != nil {
			return false, setting.Textf("%s: %w (%s overrides it)", job.ModelPath, err,
				setting.Use("retrain-epochs", "N"))
		}
		if n > 0 {
			job.RetrainEpochs, job.retrainEpochsFrom = n, schema.RetrainEpochsMetadata
		}
	}
	if job.canWiden(job.Config, job.Strategy) {
		// Each wider rung starts again from the input as read: the first
		// rung writes its result back into m.
		if r.pristine, err = onnxio.Clone(m); err != nil {
			return false, err
		}
	}
	if r.p, err = PrepareOn(m, job.ModelPath, s.Options.Runtime); err != nil {
		return false, err
	}
	r.p.DynamicBatch = job.DynamicBatch
	if !job.KeepFoldedBN {
		if err := r.p.RestoreFoldedBN(s); err != nil {
			return false, err
		}
	}
	// What the input's form means for the run is said before any work, so
	// that a user can stop and re-export; metrics.json repeats it.
	for _, n := range r.p.Notes {
		r.info("note", "note: "+n, "msg", n)
		r.said[n] = true
	}
	return fromMetadata, nil
}

// evaluateInputs evaluates the input model (unless Job.NoBefore) and the
// oracle, and refuses an input that scores near chance (unless
// Job.AllowChance; sampleAcc is the preprocessing check's accuracy).
func (r *unlearning) evaluateInputs(ctx context.Context, sampleAcc float64) error {
	job, s := &r.job, r.s
	t0 := time.Now()
	var err error
	if !job.NoBefore {
		if r.before, err = s.Evaluate(r.m, job.ModelPath, "before"); err != nil {
			return err
		}
	}
	if r.om != nil {
		if r.omet, err = s.Evaluate(r.om, job.OraclePath, "oracle"); err != nil {
			return err
		}
	}
	if !job.AllowChance {
		if err := nearChance(s, r.before, sampleAcc); err != nil {
			return err
		}
	}
	r.tm.EvaluateBeforeS = time.Since(t0).Seconds()
	if ctx.Err() != nil {
		return ErrInterrupted
	}
	return nil
}

// localize chooses the mask: the mask file's, or the job's strategy at its
// budget on the working copy.
func (r *unlearning) localize(ctx context.Context) error {
	job, s, p, cfg := &r.job, r.s, r.p, r.cfg
	t0 := time.Now()
	r.mk = r.fileMask
	var err error
	if fm := r.fileMask; fm != nil {
		r.info("mask", fmt.Sprintf("mask: %s (strategy %s, budget %g, %d of %d parameters)",
			job.MaskPath, fm.Strategy, fm.Budget, fm.Selected, fm.Total),
			"path", job.MaskPath, "strategy", fm.Strategy, "budget", fm.Budget, "selected", fm.Selected,
			"total", fm.Total)
	} else {
		depth := ""
		if job.DepthFloor > 0 {
			depth = fmt.Sprintf(", layers from depth %d of %d (depth floor %g)",
				floor.MinDepth(job.DepthFloor, p.Neurons.MaxDepth), p.Neurons.MaxDepth, job.DepthFloor)
		}
		r.info("localize", fmt.Sprintf("localizing: strategy %s, budget %g%s", r.strategy, r.budget, depth),
			"strategy", r.strategy, "budget", r.budget, "depth_floor", job.DepthFloor)
		r.lo = localize.Options{Strategy: r.strategy, Budget: r.budget, DepthFloor: job.DepthFloor, Seed: cfg.Seed,
			Runtime: cfg.Runtime, BatchSize: cfg.BatchSize, Neurons: p.Neurons, Graph: p.takeGraph()}
		if job.Bar != nil {
			r.lo.Progress = job.Bar("localize")
		}
		r.mk, r.scores, err = localize.Localize(ctx, p.Work, s.Data.Train, s.Forget, r.lo)
		r.lo.Progress, r.lo.Graph = nil, nil
	}
	if ctx.Err() != nil {
		return ErrInterrupted
	}
	if err != nil {
		return err
	}
	r.maskInfo = r.mk.Summary()
	r.tm.LocalizeS = time.Since(t0).Seconds()
	return nil
}

// run runs the algorithm on the working copy under the mask (and on the
// wider rungs of a widening run), writing the result to the staged model.
func (r *unlearning) run(ctx context.Context) error {
	job, s, cfg := &r.job, r.s, &r.cfg
	if cfg.Proxies.Track && (s.Data.Test == nil || s.Data.Test.Len() == 0) {
		if cfg.Schedule == ScheduleAuto {
			return setting.Errorf("schedule", " auto: %s has no test split, and the proxies need test examples "+
				"to show what unseen looks like", setting.Use("data", s.Data.Path))
		}
		cfg.Proxies.Track = false
		msg := setting.Msgf("no proxies: %s has no test split", setting.Use("data", s.Data.Path))
		r.info("proxies", msg.Render(job.terms()), "reason", "no test split")
	}
	sched := fmt.Sprintf("%s, lr %g", textio.Count(cfg.Epochs, "epoch"), cfg.LR)
	if cfg.Schedule == ScheduleAuto {
		sched = "auto schedule"
	}
	r.info("unlearn", fmt.Sprintf("unlearning: algorithm %s, %s, batch %d, seed %d; forget %d, retain %d examples",
		job.Algorithm, sched, cfg.BatchSize, cfg.Seed, len(s.Forget), len(s.Retain)),
		"algorithm", job.Algorithm, "schedule", cfg.Schedule, "epochs", cfg.Epochs, "lr", cfg.LR,
		"batch_size", cfg.BatchSize, "seed", cfg.Seed, "forget", len(s.Forget), "retain", len(s.Retain))
	cfg.Progress, cfg.Epoch = job.progress(cfg.Schedule)
	r.stageOutput()
	t0 := time.Now()
	location := filepath.Base(job.Out) + ".data"
	var err error
	r.out, err = r.p.execute(ctx, job.Algorithm, s, r.mk.Elements, job.Classifier, *cfg, r.stage, location)
	if ctx.Err() != nil {
		return ErrInterrupted
	}
	if err != nil {
		return err
	}
	if r.pristine != nil && r.scores != nil {
		w := &widening{job: job, suite: s, pristine: r.pristine, scores: r.scores, lo: r.lo, cfg: *cfg,
			stage: r.stage, location: location, info: r.info}
		r.p, r.mk, r.out, r.widened, err = w.run(ctx, r.p, r.mk, r.out, time.Since(t0).Seconds())
		if ctx.Err() != nil {
			return ErrInterrupted
		} else if err != nil {
			return err
		}
		r.budget = r.mk.Budget
		r.maskInfo = r.mk.Summary()
	}
	r.tm.UnlearnS = time.Since(t0).Seconds()
	return nil
}

// stageOutput names the hidden file beside Out that the model is staged
// under. (An external data file, for models over 2 GB, gets its final
// name at once; the model that refers to it comes last.)
func (r *unlearning) stageOutput() {
	r.stage = outfile.Stage(r.job.Out)
	r.dataPath = r.job.Out + ".data"
	_, statErr := os.Stat(r.dataPath)
	r.hadData = statErr == nil
	outfile.Track(r.stage)
}

// unstage removes the staged model, and the external data of a model that
// was not kept.
func (r *unlearning) unstage() {
	if r.stage == "" {
		return
	}
	os.Remove(r.stage)
	outfile.Untrack(r.stage)
	if !r.committed && !r.hadData {
		os.Remove(r.dataPath) // external data of a model that was not kept
	}
}

// noModel marks an error after the run: the staged model is removed, and
// a model without its metrics would be a partial output.
func (r *unlearning) noModel(err error) error {
	return fmt.Errorf("%w (no model written to %s)", err, r.job.Out)
}

// measure evaluates the staged result, times retraining where the report
// needs an estimate of it, and builds the report with its notes.
func (r *unlearning) measure(ctx context.Context) error {
	job, s := &r.job, r.s
	t0 := time.Now()
	um, err := s.Load(r.stage, "unlearned")
	if err != nil {
		return err
	}
	if r.after, err = s.Evaluate(um, job.Out, "after"); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ErrInterrupted
	}
	r.tm.EvaluateAfterS = time.Since(t0).Seconds()
	if job.needsRetrainTiming(r.out.Result) {
		if job.Stage != nil {
			job.Stage("stage", fmt.Sprintf("retraining estimate: timing at most %d full training steps",
				RetrainTimingSteps), "stage", "retrain-timing", "steps", RetrainTimingSteps)
		}
		cfg := r.cfg
		rj := RetrainJob{ModelPath: job.ModelPath, Model: r.m, Data: s.Data, BatchSize: cfg.BatchSize, Momentum: 0.9,
			WeightDecay: TrainWeightDecay, Seed: cfg.Seed, Augment: cfg.Augment, Runtime: cfg.Runtime}
		r.rt, r.rtErr = TimeRetrain(ctx, rj, s.Retain, RetrainTimingSteps, RetrainTimingSeconds)
		if ctx.Err() != nil {
			return ErrInterrupted
		}
	}
	r.tm.TotalS = time.Since(r.start).Seconds()
	r.tm.PeakRSSMiB = peakRSSMiB()
	if err := r.report(); err != nil {
		return err
	}
	r.judge()
	return nil
}

// report builds metrics.json's report: the result's metrics and model, the
// data, and the input's and the oracle's sections.
func (r *unlearning) report() error {
	job, s := &r.job, r.s
	rep := &schema.Report{Schema: schema.MetricsSchema, Tool: job.Tool, Metrics: &r.after.Metrics,
		Settings: s.Settings(r.after)}
	r.rep = rep
	var err error
	if rep.Model, err = eval.NewModelInfo(r.stage); err != nil {
		return err
	}
	rep.Model.Path = job.Out
	if rep.Data, rep.Forget, err = s.Provenance(); err != nil {
		return err
	}
	if r.before != nil {
		bi, err := eval.NewModelInfo(job.ModelPath)
		if err != nil {
			return err
		}
		rep.Before = &schema.Section{Model: bi, Metrics: &r.before.Metrics}
	}
	if r.omet != nil {
		oi, err := eval.NewModelInfo(job.OraclePath)
		if err != nil {
			return err
		}
		if err := eval.SetOracle(rep, r.after, oi, r.omet); err != nil {
			return err
		}
	}
	return nil
}

// judge describes the run in the report (Job.section) with its notes, the
// warnings its own signals call for, and whether it vouches for the
// result.
func (r *unlearning) judge() {
	job, s, cfg, rep, out := &r.job, r.s, r.cfg, r.rep, r.out
	notes := &r.notes
	rep.Unlearning, notes.notes = job.section(r.strategy, r.budget, cfg, out, r.maskInfo, r.tm, r.rt)
	notes.log = out.Result.Notes
	if len(r.widened) > 1 {
		rep.Unlearning.Widen = r.widened
		notes.add(setting.KindNote, "%s", widenNote(r.widened))
	}
	if r.rtErr != nil {
		notes.add(setting.KindNote, "no retraining estimate: timing full training steps failed: %v", r.rtErr)
	}
	if t := cfg.Auto.ForgetTolerance; cfg.Schedule == ScheduleAuto && t > 0 && t <= ToleranceFloor &&
		s.Data.Test != nil {
		// The rule aimed within the given tolerance of its estimate, not
		// within two standard errors: the verdict states its own.
		setTolerances(rep.Unlearning, len(s.Forget), s.Data.Test.Len())
	}
	notes.flags = verdictWarnings(rep.Unlearning, r.omet != nil, len(s.Forget))
	if len(r.widened) > 0 {
		if f, ok := stillRemembersFlag(rep.Unlearning, out.Result); ok {
			notes.flags = append(notes.flags, f)
		}
	}
	advice := testDropAdvice
	switch a, _ := LookupAlgorithm(job.Algorithm); {
	case a != nil && a.FromScratch:
		advice = setting.Msgf("a recipe this short does not train the model back to the input's utility; "+
			"give the recipe the model was trained with (%s)", recipeSettings)
	case cfg.Schedule == ScheduleAuto:
		// The auto schedule chose its own rate and length: advice to use
		// it would be no advice.
		advice = autoDropAdvice
	}
	if n := testDropNote(r.before, r.after, rep.Unlearning.Proxies, advice); n != nil {
		notes.flags = append(notes.flags, flagNote{schema.FlagTestDrop, *n})
	}
	for _, f := range notes.flags {
		notes.notes = append(notes.notes, f.note)
	}
	notes.fill(rep.Unlearning, job.terms())
	u := rep.Unlearning
	rep.Unlearning.Vouched = len(notes.flags) == 0 && u.Auto != nil && u.Auto.Reason == autorule.StopUnseen
	rep.Summary = report.Summarize(rep)
}

// tell writes the log about the run's result through Job.Info once its
// outputs are in place: the notes not written yet, each warning and the
// verdict (report.Messages).
func (r *unlearning) tell() {
	for _, m := range report.Messages(r.rep, func(n string) bool { return r.said[n] }) {
		r.info(m.Event, m.Text, m.Fields...)
	}
}

// commit writes metrics.json and the report, then renames the staged
// model into place; on an error or a signal it removes what it wrote.
func (r *unlearning) commit(ctx context.Context) error {
	job := &r.job
	if ctx.Err() != nil {
		return ErrInterrupted
	}
	files, err := report.Files(r.rep, r.notes.page(r.rep), eval.Measurements{Model: r.after, Oracle: r.omet},
		job.MetricsPath, job.ReportPath)
	if err != nil {
		return err
	}
	// Two runs writing the same Out take turns from here to the model's
	// rename, so the model under Out always goes with the metrics beside
	// it (each names the model's sha256).
	unlock, err := outfile.LockDir(filepath.Dir(job.Out))
	if err != nil {
		return err
	}
	defer unlock()
	outfile.BeginCommit()
	defer outfile.EndCommit()
	if err := outfile.WriteFiles(files); err != nil {
		return err
	}
	unwrite := func() {
		for p := range files {
			os.Remove(p)
		}
	}
	if ctx.Err() != nil { // the signal came while the files were written
		unwrite()
		return ErrInterrupted
	}
	if err := os.Rename(r.stage, job.Out); err != nil {
		unwrite()
		return err
	}
	r.committed = true
	r.out.Report = r.rep
	return nil
}
