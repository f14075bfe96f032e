package runner

import (
	"fmt"
	"strings"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/experiment"
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/localize"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// Choices are what a method row runs at one budget: the method, strategy,
// algorithm and budget of the report, and the recipe that
// unlearn.Configure turns into the algorithm's Config.
type Choices struct {
	Method, Strategy, Algorithm string
	Budget                      float64
	Recipe                      unlearn.Recipe
	// Augment is the row's augmentation of the unlearning batches.
	Augment data.Augment
	// DepthFloor is del's depth floor (unlearn.Job.DepthFloor).
	DepthFloor float64
	// BatchSize is the row's batch (0: the main command's, 128).
	BatchSize int
	// Widen is the row's ladder of wider budgets (unlearn.Job.Widen).
	Widen []float64
	// WidenFloor is the depth floor of the wider rungs (unlearn.Job.WidenFloor).
	WidenFloor unlearn.Opt[float64]
}

// Choose maps a method row at a budget (0: none) onto the main command's
// choices, as its flags would: the method (the recommended one when the
// row names none, as --method defaults), the row's strategy and algorithm
// over the method's, the budget (the recommended one when none), and every
// recipe choice explicit, the schedule too (a fixed row trains on the
// whole retain set, as the paper's recipes do), so that a change of the
// tool's defaults never changes what a cached key means. A default row
// leaves every choice to the recommended default. A row with args (extra
// command-line flags) is refused: the runner calls the library, which
// takes no flags.
func Choose(m experiment.Method, budget float64) (Choices, error) {
	if len(m.Args) > 0 {
		return Choices{}, fmt.Errorf("%w: method %s: args %v: extra command-line flags are not supported (the runner calls "+
			"the library); use the row's fields", experiment.ErrConfig, m.Name, m.Args)
	}
	c := Choices{Method: unlearn.Recommended.Method, Budget: unlearn.Recommended.Budget,
		DepthFloor: unlearn.Recommended.DepthFloor,
		Widen:      m.Widen}
	if m.WidenFloor != nil {
		c.WidenFloor = unlearn.Some(*m.WidenFloor)
	}
	if !m.Default {
		c.DepthFloor, c.BatchSize = m.DepthFloor, m.BatchSize
		if m.Method != "" {
			c.Method = m.Method
		}
		if budget > 0 {
			c.Budget = budget
		}
		// A row's zero values are its keys left out: the defaults.
		c.Recipe = unlearn.Recipe{Epochs: unlearn.NonZero(m.Epochs), LR: unlearn.NonZero(m.LR),
			Schedule: unlearn.ScheduleFixed, NoProxies: true}
		if m.Schedule == unlearn.ScheduleAuto {
			c.Recipe.Schedule, c.Recipe.NoProxies = unlearn.ScheduleAuto, false
			c.Recipe.MaxEpochs = unlearn.NonZero(m.MaxEpochs)
		}
	}
	if m.Default || m.Schedule == unlearn.ScheduleAuto {
		// The auto schedule's own settings (a default row's too: the
		// default checked more often or with other tolerances).
		c.Recipe.EpochFraction = unlearn.NonZero(m.EpochFraction)
		c.Recipe.UtilityTolerance = unlearn.NonZero(m.UtilityTolerance)
		c.Recipe.ForgetTolerance = unlearn.NonZero(m.ForgetTolerance)
		c.Recipe.PlateauCuts = unlearn.NonZero(m.PlateauCuts)
	}
	c.Recipe.Settings = m.Settings
	meth, ok := unlearn.LookupMethod(c.Method)
	if !ok {
		return Choices{}, fmt.Errorf("%w: method %s: unknown method %q", experiment.ErrConfig, m.Name, c.Method)
	}
	c.Strategy, c.Algorithm = meth.Strategy, meth.Algorithm
	if m.Strategy != "" {
		c.Strategy = m.Strategy
	}
	if m.Algorithm != "" {
		c.Algorithm = m.Algorithm
	}
	if _, err := localize.LookupStrategy(c.Strategy); err != nil {
		return Choices{}, fmt.Errorf("method %s: %w", m.Name, err)
	}
	if err := unlearn.CheckDepthFloor(c.DepthFloor, c.Strategy); err != nil {
		return Choices{}, fmt.Errorf("%w: method %s: %v", experiment.ErrConfig, m.Name, err)
	}
	// Configure checks the algorithm and the recipe (auto needs an
	// algorithm that trains in epochs).
	if _, err := unlearn.Configure(c.Algorithm, c.Recipe); err != nil {
		// A setting named in the error is one of the row's keys.
		return Choices{}, setting.InFile(fmt.Errorf("method %s: %w", m.Name, err))
	}
	var err error
	if c.Augment, err = data.ParseAugment(m.Augment); err != nil {
		return Choices{}, fmt.Errorf("%w: method %s: %v", experiment.ErrConfig, m.Name, err)
	}
	if c.Augment.On() {
		if a, err := unlearn.LookupAlgorithm(c.Algorithm); err != nil || !a.Augments {
			return Choices{}, fmt.Errorf("%w: method %s: augment %s: algorithm %s does not augment its batches (%s do)",
				experiment.ErrConfig, m.Name, c.Augment, c.Algorithm, strings.Join(unlearn.AugmentingAlgorithms(), ", "))
		}
	}
	return c, nil
}
