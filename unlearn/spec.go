package unlearn

import (
	"math"
	"slices"
	"strings"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/localize"
)

// Spec is an unlearning run as a caller states it, one field per setting
// (the main command's flags, an experiment file's method row), with the
// settings that have defaults optional. Validate checks it before any
// work; Job resolves it into a Job, filling the defaults. Their errors
// are *setting.Error values that name the field at fault by its path in
// Spec ("Recipe.MaxEpochs"), and other fields as setting.Field refs, so
// that each caller words them in its own terms.
type Spec struct {
	// ModelPath is the input model and ForgetPath the ids file of the
	// forget set; both are required (the Suite reads the forget set).
	ModelPath, ForgetPath string
	// Method is one of Methods() (unset: Recommended.Method); Strategy and
	// Algorithm, when set, override its strategy and algorithm.
	Method              Opt[string]
	Strategy, Algorithm string
	// Budget is the fraction of all trainable parameters the strategy
	// selects (unset: Recommended.Budget); MaskPath reads a mask file
	// instead of localizing, and fixes the budget and the parameters.
	Budget   Opt[float64]
	MaskPath string
	// DepthFloor is del's depth floor (unset: ResolveDepthFloor's rule).
	DepthFloor Opt[float64]
	// Widen is the ladder of larger budgets, comma-separated (ParseWiden);
	// "" for none.
	Widen string
	// WidenFloor is the depth floor of the wider rungs (Job.WidenFloor);
	// it needs Widen.
	WidenFloor Opt[float64]
	// Recipe is how the algorithm trains (Configure).
	Recipe Recipe
	// Augment augments the training batches (data.ParseAugment's syntax;
	// "" or "none" for none).
	Augment string
	// BatchSize is the examples per step (positive); Seed seeds resets,
	// example order, random labels and augmentation; NoMIA skips the
	// membership-inference attacks of the proxies.
	BatchSize int
	Seed      uint64
	NoMIA     bool
	// RetrainEpochs, OraclePath, ReportPath, Classifier, NoBefore,
	// AllowChance and DynamicBatch are Job's.
	RetrainEpochs                       int
	OraclePath, ReportPath, Classifier  string
	NoBefore, AllowChance, DynamicBatch bool
}

// Validate checks s, before any work: required fields, values in range,
// names that exist, and settings that contradict each other (a budget with
// a mask file, the auto schedule's settings under a fixed schedule, …).
func (s Spec) Validate() error {
	_, err := s.Job()
	return err
}

// Job validates s and resolves it into a Job without a Suite, outputs or
// callbacks (the caller's): the method's strategy and algorithm, the
// defaults of the settings left unset, and the algorithm's Config.
func (s Spec) Job() (Job, error) {
	j := Job{ModelPath: s.ModelPath, OraclePath: s.OraclePath, MaskPath: s.MaskPath, ReportPath: s.ReportPath,
		RetrainEpochs: s.RetrainEpochs, Classifier: s.Classifier, NoBefore: s.NoBefore,
		AllowChance: s.AllowChance, DynamicBatch: s.DynamicBatch,
		Method: s.Method.Or(Recommended.Method), Budget: s.Budget.Or(Recommended.Budget)}
	if err := s.finite(); err != nil {
		return j, err
	}
	if s.ModelPath == "" {
		return j, setting.FieldErrorf("ModelPath", " is required (the ONNX classifier to unlearn)")
	}
	if s.ForgetPath == "" {
		return j, setting.FieldErrorf("ForgetPath", " is required (the ids of the training examples to forget)")
	}
	m, ok := LookupMethod(j.Method)
	if !ok {
		return j, setting.FieldErrorf("Method", " %q: unknown; choose one of %s", j.Method, strings.Join(Methods(), ", "))
	}
	j.Strategy, j.Algorithm = m.Strategy, m.Algorithm
	if s.Strategy != "" {
		if s.MaskPath != "" {
			return j, setting.Textf("%s and %s: the mask file already fixes the parameters; pass one of them",
				setting.FieldUse("Strategy", s.Strategy), setting.FieldUse("MaskPath", s.MaskPath))
		}
		j.Strategy = s.Strategy
	}
	if s.Budget.Set && s.MaskPath != "" {
		return j, setting.Textf("%s and %s: the mask file records its own budget; pass one of them",
			setting.Field("Budget"), setting.Field("MaskPath"))
	}
	if a, _ := LookupAlgorithm(m.Algorithm); s.Budget.Set && a != nil && a.FromScratch {
		return j, setting.Textf("%s and %s: it re-initialises every parameter, there is no mask to size; drop %s",
			setting.Field("Budget"), setting.FieldUse("Method", j.Method), setting.Field("Budget"))
	}
	chosen := s.Method.Set || s.Strategy != ""
	floor, err := ResolveDepthFloor(s.DepthFloor.Ptr(), chosen, s.MaskPath, j.Strategy)
	if err != nil {
		return j, setting.FieldWrap("DepthFloor", err)
	}
	j.DepthFloor = floor
	if s.Widen != "" {
		if j.Widen, err = ParseWiden(s.Widen, j.Budget); err != nil {
			return j, err
		}
	}
	if s.WidenFloor.Set {
		if s.Widen == "" {
			return j, setting.Textf("%s applies to the wider rungs of %s: give %s too",
				setting.Field("WidenFloor"), setting.Field("Widen"), setting.Field("Widen"))
		}
		if err := CheckDepthFloor(s.WidenFloor.V, j.Strategy); err != nil {
			return j, setting.FieldWrap("WidenFloor", err)
		}
		j.WidenFloor = s.WidenFloor
	}
	if s.RetrainEpochs < 0 {
		return j, setting.FieldErrorf("RetrainEpochs", " %d: must be ≥ 0", s.RetrainEpochs)
	}
	if s.Algorithm != "" {
		j.Algorithm = s.Algorithm
	}
	if _, err := localize.LookupStrategy(j.Strategy); err != nil {
		return j, setting.FieldErrorf("Strategy", " %q: unknown; choose one of %s", j.Strategy,
			strings.Join(localize.Strategies(), ", "))
	}
	algo, err := LookupAlgorithm(j.Algorithm)
	if err != nil {
		return j, setting.FieldErrorf("Algorithm", " %q: unknown; choose one of %s", j.Algorithm,
			strings.Join(Algorithms(), ", "))
	}
	augment, err := data.ParseAugment(s.Augment)
	if err != nil {
		return j, setting.AsField(err, "Augment")
	}
	if augment.On() && !algo.Augments {
		return j, setting.FieldErrorf("Augment", " %s: %s does not augment its batches%s; augmentation applies to %s",
			augment, algo.Name, algo.WhyNoAugment(), strings.Join(AugmentingAlgorithms(), ", "))
	}
	if err := s.checkRanges(j.Budget); err != nil {
		return j, err
	}
	r := s.Recipe
	if r.Schedule == "" {
		// The recommended default (auto) unless the recipe is given, or
		// the algorithm does not train in epochs.
		r.Schedule = DefaultSchedule(j.Algorithm, r.Epochs.Set || r.LR.Set || r.NoProxies)
	}
	if err := checkSchedule(r, algo); err != nil {
		return j, err
	}
	if j.Config, err = Configure(j.Algorithm, r); err != nil {
		return j, err
	}
	j.Config.Proxies.NoMIA, j.Config.BatchSize, j.Config.Seed, j.Config.Augment = s.NoMIA, s.BatchSize, s.Seed, augment
	return j, nil
}

// finite refuses a float field that is NaN or infinite: NaN compares false
// with every bound, so it would slip past the range checks.
func (s Spec) finite() error {
	for _, f := range []struct {
		path string
		v    Opt[float64]
	}{{"Budget", s.Budget}, {"DepthFloor", s.DepthFloor}, {"Recipe.LR", s.Recipe.LR},
		{"Recipe.EpochFraction", s.Recipe.EpochFraction}, {"Recipe.ForgetTolerance", s.Recipe.ForgetTolerance},
		{"Recipe.UtilityTolerance", s.Recipe.UtilityTolerance}, {"Recipe.Momentum", s.Recipe.Momentum},
		{"Recipe.WeightDecay", s.Recipe.WeightDecay}} {
		if math.IsNaN(f.v.V) || math.IsInf(f.v.V, 0) {
			return setting.FieldErrorf(f.path, " %v: must be a finite number", f.v.V)
		}
	}
	return nil
}

// checkRanges checks the numbers that have a range of their own.
func (s Spec) checkRanges(budget float64) error {
	switch r := s.Recipe; {
	case !(budget > 0 && budget <= 1):
		return setting.FieldErrorf("Budget", " %g: must be in (0, 1] (a fraction of all trainable parameters)", budget)
	case r.Epochs.V < 0:
		return setting.FieldErrorf("Recipe.Epochs", " %d: must be ≥ 0", r.Epochs.V)
	case r.LR.V < 0:
		return setting.FieldErrorf("Recipe.LR", " %g: must be ≥ 0 (0 takes the algorithm's default)", r.LR.V)
	case s.BatchSize <= 0:
		return setting.FieldErrorf("BatchSize", " %d: must be positive", s.BatchSize)
	}
	return nil
}

// checkSchedule checks r's schedule (set) against the algorithm and the
// auto schedule's own settings against the schedule.
func checkSchedule(r Recipe, algo *Algorithm) error {
	auto := setting.FieldUse("Recipe.Schedule", ScheduleAuto)
	switch r.Schedule {
	case ScheduleFixed:
	case ScheduleAuto:
		if !slices.Contains(AutoAlgorithms(), algo.Name) {
			return setting.Textf("%s: %s does not train in epochs; auto applies to %s", auto, algo.Name,
				strings.Join(AutoAlgorithms(), ", "))
		}
		if r.NoProxies {
			return setting.Textf("%s %s: the auto schedule stops on the proxies; drop %s", auto,
				setting.FieldUse("Recipe.NoProxies", true), setting.FieldUse("Recipe.NoProxies", true))
		}
	case TrainCosine, TrainConstant:
		if !algo.FromScratch {
			return setting.FieldErrorf("Recipe.Schedule", " %s: the train command's schedules apply to %s; "+
				"choose fixed or auto", r.Schedule, setting.FieldUse("Method", "retrain"))
		}
	default:
		return setting.FieldErrorf("Recipe.Schedule", " %q: unknown; choose fixed or auto", r.Schedule)
	}
	if r.MaxEpochs.V < 0 {
		return setting.FieldErrorf("Recipe.MaxEpochs", " %d: must be ≥ 0", r.MaxEpochs.V)
	}
	if r.MaxEpochs.Set && r.Schedule != ScheduleAuto {
		return setting.Textf("%s applies to %s; with a fixed schedule use %s", setting.Field("Recipe.MaxEpochs"),
			auto, setting.Field("Recipe.Epochs"))
	}
	for _, t := range []struct {
		path string
		v    Opt[float64]
	}{{"Recipe.ForgetTolerance", r.ForgetTolerance}, {"Recipe.UtilityTolerance", r.UtilityTolerance}} {
		switch {
		case !t.v.Set:
		case !(t.v.V >= 0 && t.v.V < 1):
			return setting.FieldErrorf(t.path, " %g: must be a fraction in [0, 1) (0.01 = 1 point of accuracy)", t.v.V)
		case r.Schedule != ScheduleAuto:
			return setting.Textf("%s applies to %s (the stopping rule's tolerance)", setting.Field(t.path), auto)
		}
	}
	return nil
}
