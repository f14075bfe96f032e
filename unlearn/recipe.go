package unlearn

import (
	"fmt"
	"strings"
)

// Recipe is how a run trains, as a caller states it: the main command's
// --epochs, --lr, --schedule, --max-epochs, tolerances and --proxies, and
// the experiment runner's method rows. Unset fields take the algorithm's
// defaults. Configure turns it into a Config, so that the command line and
// the experiment runner apply one rule.
type Recipe struct {
	// Epochs and LR override the algorithm's defaults when set and
	// positive (0 keeps the default); under the auto schedule they are the
	// cap and a fixed rate (no range test). Either given makes the default
	// schedule fixed (DefaultSchedule).
	Epochs Opt[int]
	LR     Opt[float64]
	// Schedule is ScheduleFixed, ScheduleAuto, or "" for DefaultSchedule
	// (a recipe being given when Epochs, LR or NoProxies is).
	Schedule string
	// MaxEpochs caps the auto schedule (unset or 0: its default).
	MaxEpochs Opt[int]
	// EpochFraction, in (0, 1], makes each round of the auto schedule
	// train over that fraction of the retain set (AutoConfig.EpochFraction;
	// unset: whole epochs).
	EpochFraction Opt[float64]
	// ForgetTolerance and UtilityTolerance are the auto schedule's stopping
	// tolerances (AutoConfig): unset, the rule's default; 0 or negative,
	// none.
	ForgetTolerance, UtilityTolerance Opt[float64]
	// PlateauCuts is the auto schedule's AutoConfig.PlateauCuts (unset:
	// none).
	PlateauCuts Opt[int]
	// NoProxies trains on the whole retain set, holding nothing out for
	// the oracle-free proxies (the auto schedule needs them). An algorithm
	// that trains from scratch (retrain) never holds anything out.
	NoProxies bool
	// Momentum and WeightDecay, when set, replace the algorithm's SGD
	// momentum (in [0, 1)) and weight decay (≥ 0).
	Momentum, WeightDecay Opt[float64]
	// GradChannels sets Config.GradChannels: a masked weight's gradient
	// covers only the mask's output channels. Off by default: in the
	// default (DEL's mask with its depth floor, on the suite's small
	// ResNet) it restricts 4 tensors and measured no faster per epoch
	// (bench/RESULTS.md), while it changes results at float32 rounding.
	GradChannels bool
	// Settings gives the algorithm's own settings by name (Algorithm.Settings);
	// each must be one of the algorithm's.
	Settings Values
}

// MaxPlateauCuts bounds Recipe.PlateauCuts: each cut lowers the rate
// 0.3×, so a few reach rates at which nothing moves.
const MaxPlateauCuts = 5

// autoSettings says whether r sets any of the auto schedule's own
// settings (max epochs, epoch fraction, tolerances) to a value that
// matters.
func (r Recipe) autoSettings() bool {
	return r.MaxEpochs.V != 0 || r.ForgetTolerance.Set || r.UtilityTolerance.Set || r.EpochFraction.V != 0 ||
		r.PlateauCuts.V != 0
}

// stopTolerance maps a stopping tolerance onto AutoConfig's convention: 0 (the
// rule's default) when unset, the value when positive, and −1 (none)
// otherwise.
func stopTolerance(o Opt[float64]) float64 {
	switch {
	case !o.Set:
		return 0
	case o.V > 0:
		return o.V
	}
	return -1
}

// DefaultSchedule is the schedule of a run that names none:
// Recommended.Schedule, unless the caller gave a recipe (epochs, a rate or
// no proxies: recipe true) or the auto schedule cannot drive the algorithm
// (it does not train in epochs, or trains from scratch); then
// ScheduleFixed.
func DefaultSchedule(algorithm string, recipe bool) string {
	if recipe || !isTraining(algorithm) {
		return ScheduleFixed
	}
	return Recommended.Schedule
}

// Configure returns Defaults(algorithm) with r applied. The caller sets the
// rest (BatchSize, Seed, Proxies.NoMIA, Runtime, Progress). It refuses the
// auto schedule for an algorithm that does not train in epochs, trains from
// scratch, or runs without proxies, and the auto schedule's settings under
// a fixed schedule. For an algorithm that trains from scratch (retrain) the
// schedule may also be the train command's, TrainCosine (as "" and
// ScheduleFixed) or TrainConstant: Config.TrainSchedule.
func Configure(algorithm string, r Recipe) (Config, error) {
	a, err := LookupAlgorithm(algorithm)
	if err != nil {
		return Config{}, err
	}
	cfg := Defaults(algorithm)
	if r.Momentum.Set {
		if m := r.Momentum.V; !(m >= 0 && m < 1) {
			return Config{}, fmt.Errorf("%w: momentum %g: must be in [0, 1)", ErrInput, m)
		}
		cfg.Momentum = zeroAsNegative(r.Momentum.V)
	}
	if r.WeightDecay.Set {
		if w := r.WeightDecay.V; !(w >= 0) {
			return Config{}, fmt.Errorf("%w: weight decay %g: must be ≥ 0", ErrInput, w)
		}
		cfg.WeightDecay = zeroAsNegative(r.WeightDecay.V)
	}
	sched := r.Schedule
	if sched == "" {
		sched = DefaultSchedule(algorithm, r.Epochs.Set || r.LR.Set || r.NoProxies)
	}
	if a.FromScratch && (sched == TrainCosine || sched == TrainConstant) {
		cfg.TrainSchedule, sched = sched, ScheduleFixed
	}
	switch sched {
	case ScheduleFixed:
		if r.autoSettings() {
			return Config{}, fmt.Errorf("%w: max epochs, the epoch fraction and the stopping tolerances apply to "+
				"the auto schedule", ErrInput)
		}
		if r.Epochs.V > 0 {
			cfg.Epochs = r.Epochs.V
		}
		if r.LR.V > 0 {
			cfg.LR = r.LR.V
		}
	case ScheduleAuto:
		if a.FromScratch {
			return Config{}, fmt.Errorf("%w: schedule auto: %s trains the recipe's epochs from scratch; "+
				"the auto schedule applies to %s", ErrInput, algorithm, strings.Join(AutoAlgorithms(), ", "))
		}
		if !a.Epochs {
			return Config{}, fmt.Errorf("%w: schedule auto: %s does not train in epochs", ErrInput, algorithm)
		}
		if r.NoProxies {
			return Config{}, fmt.Errorf("%w: schedule auto stops on the proxies; it cannot run without them", ErrInput)
		}
		// Zero epochs and rate: Run picks the cap and runs the range test.
		cfg.Schedule, cfg.Epochs, cfg.LR = ScheduleAuto, r.Epochs.V, r.LR.V
		cfg.Auto.MaxEpochs = r.MaxEpochs.V
		if f := r.EpochFraction.V; f != 0 && !(f > 0 && f <= 1) {
			return Config{}, fmt.Errorf("%w: epoch fraction %g: must be in (0, 1]", ErrInput, f)
		}
		cfg.Auto.EpochFraction = r.EpochFraction.V
		cfg.Auto.ForgetTolerance = stopTolerance(r.ForgetTolerance)
		cfg.Auto.UtilityTolerance = stopTolerance(r.UtilityTolerance)
		if n := r.PlateauCuts.V; n < 0 || n > MaxPlateauCuts {
			return Config{}, fmt.Errorf("%w: plateau cuts %d: must be in [0, %d]", ErrInput, n, MaxPlateauCuts)
		}
		cfg.Auto.PlateauCuts = r.PlateauCuts.V
	default:
		return Config{}, fmt.Errorf("%w: schedule %q: unknown; choose %s or %s", ErrInput, sched, ScheduleFixed, ScheduleAuto)
	}
	cfg.Proxies.Track = !r.NoProxies && !a.FromScratch
	if r.GradChannels && (!a.Epochs || a.FromScratch) {
		return Config{}, fmt.Errorf("%w: grad channels restrict the training steps to a mask's channels; %s %s",
			ErrInput, algorithm,
			map[bool]string{true: "trains every parameter from scratch", false: "takes no training steps"}[a.FromScratch])
	}
	cfg.GradChannels = r.GradChannels
	if err := cfg.apply(a, r.Settings); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// zeroAsNegative maps an explicit 0 to -1, which Config reads as zero (its
// own zero takes the algorithm's default).
func zeroAsNegative(v float64) float64 {
	if v == 0 {
		return -1
	}
	return v
}
