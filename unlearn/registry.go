package unlearn

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/localize"
	"github.com/unlearn-tool/unlearn/localize/floor"
)

// Algorithm describes one unlearning algorithm: how it runs, its defaults
// and the traits the pipeline needs (which index sets it uses, whether it
// trains in epochs, whether it always trains the classifier). Everything
// the pipeline, the command line and the experiment runner know about an
// algorithm comes from here; adding one is one file that calls Register
// from an init function, plus its test.
type Algorithm struct {
	// Name is what --algorithm and Run take.
	Name string
	// Summary is one line for help texts.
	Summary string
	// Run changes r.Input().Model's initializers; it must honour the mask
	// (train's optimizers do) and return ctx errors unchanged.
	Run func(r *Runner) error
	// Order places the algorithm in Algorithms() and the help texts that
	// list them: ascending, then in registration order; 0 (an algorithm
	// registered from outside that does not care) comes after every
	// ordered one.
	Order int
	// Defaults fills the zero fields of the algorithm's recipe (epochs,
	// rate, weight decay) when it is the one that runs; the common ones
	// (batch size, momentum) are filled before it. nil keeps the common
	// ones.
	Defaults func(*Config)
	// Settings is the algorithm's descriptor: the settings only it reads,
	// with their types, defaults and where Config keeps them (Setting).
	// The command line gives each as a flag and an experiment file's
	// method row under its settings key, and Configure sets them. A
	// built-in algorithm's settings are Config fields (Config.Beta,
	// Config.SCRUB.Alpha, ...) whose defaults fill every Config
	// (Defaults), so that a Config, and the settings.json and records made
	// from it, holds every knob's value whichever algorithm runs. An
	// algorithm registered from outside declares settings without a Field:
	// Config.Own holds them by name, filled with their defaults only when
	// that algorithm runs, and it reads them with SettingOf.
	Settings []Setting
	// Check, if set, refuses settings of the algorithm's own that cannot
	// work (after defaults), wrapping ErrInput.
	Check func(Config) error
	// UsesForget and UsesRetain: which index sets must be non-empty.
	UsesForget, UsesRetain bool
	// Epochs: the algorithm trains in epochs, so Config.Epochs and LR apply
	// and, unless FromScratch, the auto schedule can drive it.
	Epochs bool
	// FromScratch: the algorithm re-initialises every parameter and trains
	// the model from scratch on the whole retain set (retrain, exact
	// unlearning): it takes no mask (strategy full), holds nothing out for
	// the proxies, runs a fixed recipe (never the auto schedule), and every
	// parameter changes.
	FromScratch bool
	// TrainsClassifier: the algorithm always trains the whole classifier
	// layer, whatever the mask (rft, after DEL's reference); the audit
	// allows it.
	TrainsClassifier bool
	// Augments: the algorithm applies Config.Augment to its training
	// batches (Runner.Augmenter); otherwise Run notes that it is not
	// applied, giving NoAugment as the reason when set.
	Augments  bool
	NoAugment string
	// EpochExamples is the number of examples one epoch trains on, given
	// the retain examples it trains on and the forget set's size; nil when
	// an epoch is not a pass over known examples (no epochs-equivalent
	// cost, and no cheaper-retraining note without --retrain-epochs).
	EpochExamples func(retain, forget int) int
}

var (
	registryMu sync.RWMutex
	registry   = map[string]*Algorithm{}
	// order lists the names by Algorithm.Order, then in registration
	// order: the built-in ones first, in the order of the package
	// documentation's table.
	order []string
)

func retainOnly(retain, _ int) int      { return retain }
func retainAndForget(retain, f int) int { return retain + f }

// WhyNoAugment is " (NoAugment)" for messages, or "" when it is not set.
func (a *Algorithm) WhyNoAugment() string {
	if a.NoAugment == "" {
		return ""
	}
	return " (" + a.NoAugment + ")"
}

// mustRegister registers a built-in algorithm from its file's init.
func mustRegister(a Algorithm) {
	if err := Register(a); err != nil {
		panic(err) // a built-in algorithm is wrong: a programming error
	}
}

// fillInt and fillFloat set a zero setting to its default (Algorithm.Defaults).
func fillInt(v *int, d int) {
	if *v == 0 {
		*v = d
	}
}

func fillFloat(v *float64, d float64) {
	if *v == 0 {
		*v = d
	}
}

// Register adds an algorithm; its name must be new and it must have a Run.
func Register(a Algorithm) error {
	if a.Name == "" || a.Run == nil {
		return fmt.Errorf("unlearn: Register: an algorithm needs a name and a Run function")
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[a.Name]; dup {
		return fmt.Errorf("unlearn: Register: algorithm %q is already registered", a.Name)
	}
	for i, s := range a.Settings {
		if err := s.check(); err != nil {
			return fmt.Errorf("unlearn: Register %s: %w", a.Name, err)
		}
		taken := slices.ContainsFunc(a.Settings[:i], func(o Setting) bool { return o.Name == s.Name })
		for _, other := range registry {
			taken = taken || slices.ContainsFunc(other.Settings, func(o Setting) bool { return o.Name == s.Name })
		}
		if taken {
			return fmt.Errorf("unlearn: Register %s: setting %q is already an algorithm's", a.Name, s.Name)
		}
	}
	registry[a.Name] = &a
	order = append(order, a.Name)
	rank := func(name string) int {
		if o := registry[name].Order; o > 0 {
			return o
		}
		return math.MaxInt
	}
	slices.SortStableFunc(order, func(x, y string) int { return cmp.Compare(rank(x), rank(y)) })
	return nil
}

// Algorithms returns the algorithm names Run accepts, in registration
// order.
func Algorithms() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return append([]string(nil), order...)
}

// AugmentingAlgorithms returns the names of the algorithms that apply
// Config.Augment (Algorithm.Augments), in registration order.
func AugmentingAlgorithms() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	var out []string
	for _, name := range order {
		if registry[name].Augments {
			out = append(out, name)
		}
	}
	return out
}

// AutoAlgorithms returns the names of the algorithms the auto schedule
// can drive (they train in epochs and not from scratch), in registration
// order.
func AutoAlgorithms() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	var out []string
	for _, name := range order {
		if a := registry[name]; a.Epochs && !a.FromScratch {
			out = append(out, name)
		}
	}
	return out
}

// LookupAlgorithm returns the named algorithm's descriptor.
func LookupAlgorithm(name string) (*Algorithm, error) {
	registryMu.RLock()
	a, ok := registry[name]
	registryMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w %q; choose one of %s", ErrUnknownAlgorithm, name, strings.Join(Algorithms(), ", "))
	}
	return a, nil
}

func lookup(name string) (*Algorithm, error) { return LookupAlgorithm(name) }

// Method is a named pair of a localization strategy and an algorithm
// (--method).
type Method struct {
	Name, Strategy, Algorithm string
}

var methods = map[string]Method{}

func init() {
	for _, m := range []Method{
		{"del", "del", "rft"},
		{"salun", "salloc", "random-label"},
		{"shallowest-rft", "shallowest", "rft"},
		{"critmem-rl", "critmem", "random-label"},
		{"retrain-free", "full", "rft"},
		{"finetune", "full", "finetune"},
		{"neggrad", "full", "neggrad"},
		{"neggrad+", "full", "neggrad+"},
		{"random-label", "full", "random-label"},
		{"l1-sparse", "full", "l1-sparse"},
		{"scrub", "full", "scrub"},
		{"ssd", "full", "ssd"},
		{"iu", "full", "iu"},
		{"retrain", "full", "retrain"},
	} {
		methods[m.Name] = m
	}
}

// RegisterMethod adds m to the methods, so that a caller outside this
// package can name its own pairing of a strategy and an algorithm (one it
// registered with Register, say) as Spec.Method, the main command's
// --method and an experiment file's method key. The name must be new, and
// the strategy and the algorithm registered.
func RegisterMethod(m Method) error {
	if m.Name == "" {
		return fmt.Errorf("unlearn: RegisterMethod: a method needs a name")
	}
	if _, err := localize.LookupStrategy(m.Strategy); err != nil {
		return fmt.Errorf("unlearn: RegisterMethod %q: %w", m.Name, err)
	}
	if _, err := LookupAlgorithm(m.Algorithm); err != nil {
		return fmt.Errorf("unlearn: RegisterMethod %q: %w", m.Name, err)
	}
	methodsMu.Lock()
	defer methodsMu.Unlock()
	if _, dup := methods[m.Name]; dup {
		return fmt.Errorf("unlearn: RegisterMethod: method %q is already registered", m.Name)
	}
	methods[m.Name] = m
	return nil
}

// methodsMu guards methods against RegisterMethod.
var methodsMu sync.RWMutex

// LookupMethod returns the named method.
func LookupMethod(name string) (Method, bool) {
	methodsMu.RLock()
	defer methodsMu.RUnlock()
	m, ok := methods[name]
	return m, ok
}

// Methods returns the method names, sorted.
func Methods() []string {
	methodsMu.RLock()
	defer methodsMu.RUnlock()
	out := make([]string, 0, len(methods))
	for k := range methods {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Recommended is what `unlearn --model M --forget ids.txt` runs when no
// method, budget or schedule is given (README "Which method"). The
// experiment grid's default rows are keyed by RecommendedSettings, so
// changing it reruns them.
var Recommended = struct {
	Method   string
	Budget   float64
	Schedule string
	// DepthFloor is del's depth floor when the localization is left to
	// the default (Job.DepthFloor): the first 40 % of the network's depth
	// is never reset.
	DepthFloor float64
}{Method: "del", Budget: 0.1, Schedule: ScheduleAuto, DepthFloor: floor.Recommended}

// CheckDepthFloor checks a depth floor for a strategy: a fraction in
// [0, 1), and only for del (and random, which copies del's per-layer
// counts).
func CheckDepthFloor(floor float64, strategy string) error {
	switch {
	case !(floor >= 0 && floor < 1):
		return fmt.Errorf("depth floor %g: must be a fraction in [0, 1) of the network's depth", floor)
	case floor > 0 && strategy != "del" && strategy != "random":
		return fmt.Errorf("depth floor %g applies to strategy del (and random, which copies its per-layer counts), "+
			"not %s", floor, strategy)
	}
	return nil
}

// ResolveDepthFloor is the depth floor of a run: floor when given (non-nil),
// else Recommended.DepthFloor when the localization is left to the default
// (chosen false: no method or strategy named, and no mask file), else 0
// (the paper's DEL). A floor with a mask file, or one CheckDepthFloor
// refuses for the strategy, is an error.
func ResolveDepthFloor(floor *float64, chosen bool, maskPath, strategy string) (float64, error) {
	switch {
	case floor != nil && maskPath != "":
		return 0, setting.Textf("a depth floor and %s: the mask file already fixes the parameters; pass one of them",
			setting.Use("mask", maskPath))
	case floor != nil:
		return *floor, CheckDepthFloor(*floor, strategy)
	case !chosen && maskPath == "":
		return Recommended.DepthFloor, CheckDepthFloor(Recommended.DepthFloor, strategy)
	}
	return 0, nil
}

// RecommendedSettings are the settings that choose Recommended, with its
// values, in the order the command line gives them: method, budget, depth
// floor, schedule (under the auto schedule, AutoVersion is its rule).
func RecommendedSettings() []setting.Ref {
	return []setting.Ref{setting.Use("method", Recommended.Method), setting.Use("budget", Recommended.Budget),
		setting.Use("depth-floor", Recommended.DepthFloor), setting.Use("schedule", Recommended.Schedule)}
}

// Recommendation describes Recommended: its settings and, under the auto
// schedule, the rule ("method del budget 0.1 depth-floor 0.4 schedule auto
// (auto rule 9)" in plain terms).
func Recommendation() setting.Message {
	var m setting.Message
	for i, s := range RecommendedSettings() {
		if i > 0 {
			m = append(m, setting.Part{Text: " "})
		}
		m = append(m, setting.Part{Setting: &s})
	}
	if Recommended.Schedule == ScheduleAuto {
		m = append(m, setting.Part{Text: fmt.Sprintf(" (auto rule %d)", AutoVersion)})
	}
	return m
}
