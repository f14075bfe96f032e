package unlearn_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/cmd/unlearn/flagtext"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// TestConfigure checks the rule the command line and the experiment runner
// share: no recipe gives the recommended schedule, a recipe (or an
// algorithm without epochs) a fixed one with the given settings over the
// defaults, and the auto schedule keeps zero epochs and rate for Run to
// choose.
func TestConfigure(t *testing.T) {
	def := unlearn.Defaults("rft")
	cfg, err := unlearn.Configure("rft", unlearn.Recipe{})
	if err != nil || cfg.Schedule != unlearn.Recommended.Schedule || !cfg.Proxies.Track {
		t.Errorf("no recipe: schedule %q, proxies %v (%v); want %q with proxies", cfg.Schedule, cfg.Proxies.Track, err, unlearn.Recommended.Schedule)
	}
	cfg, err = unlearn.Configure("rft", unlearn.Recipe{Epochs: unlearn.Some(2)})
	if err != nil || cfg.Schedule == unlearn.ScheduleAuto || cfg.Epochs != 2 || cfg.LR != def.LR || !cfg.Proxies.Track {
		t.Errorf("epochs 2: %q, %d epochs, lr %g, proxies %v (%v)", cfg.Schedule, cfg.Epochs, cfg.LR, cfg.Proxies.Track, err)
	}
	cfg, err = unlearn.Configure("rft", unlearn.Recipe{Schedule: unlearn.ScheduleFixed, NoProxies: true})
	if err != nil || cfg.Epochs != def.Epochs || cfg.Proxies.Track {
		t.Errorf("fixed without proxies: %d epochs, proxies %v (%v)", cfg.Epochs, cfg.Proxies.Track, err)
	}
	cfg, err = unlearn.Configure("finetune", unlearn.Recipe{Schedule: unlearn.ScheduleAuto, MaxEpochs: unlearn.Some(4), ForgetTolerance: unlearn.Some(-1.0)})
	if err != nil || cfg.Schedule != unlearn.ScheduleAuto || cfg.Epochs != 0 || cfg.LR != 0 || cfg.Auto.MaxEpochs != 4 || cfg.Auto.ForgetTolerance != -1 {
		t.Errorf("auto: %+v (%v)", cfg, err)
	}
	if cfg, err := unlearn.Configure("rft", unlearn.Recipe{EpochFraction: unlearn.Some(0.25)}); err != nil || cfg.Schedule != unlearn.ScheduleAuto || cfg.Auto.EpochFraction != 0.25 {
		t.Errorf("the default with an epoch fraction: %q, fraction %g (%v)", cfg.Schedule, cfg.Auto.EpochFraction, err)
	}
	if cfg, err := unlearn.Configure("rft", unlearn.Recipe{}); err != nil || cfg.GradChannels {
		t.Errorf("no recipe: GradChannels %v (%v), want off", cfg.GradChannels, err)
	}
	if cfg, err := unlearn.Configure("rft", unlearn.Recipe{Epochs: unlearn.Some(2), GradChannels: true}); err != nil || !cfg.GradChannels {
		t.Errorf("GradChannels asked for: %v (%v)", cfg.GradChannels, err)
	}
	if cfg, err := unlearn.Configure("ssd", unlearn.Recipe{}); err != nil || cfg.Schedule == unlearn.ScheduleAuto {
		t.Errorf("ssd without a recipe: %q (%v), want fixed", cfg.Schedule, err)
	}
	for name, r := range map[string]struct {
		algo string
		r    unlearn.Recipe
	}{
		"auto without epochs":   {"ssd", unlearn.Recipe{Schedule: unlearn.ScheduleAuto}},
		"auto without proxies":  {"rft", unlearn.Recipe{Schedule: unlearn.ScheduleAuto, NoProxies: true}},
		"max epochs when fixed": {"rft", unlearn.Recipe{Schedule: unlearn.ScheduleFixed, MaxEpochs: unlearn.Some(3)}},
		"unknown schedule":      {"rft", unlearn.Recipe{Schedule: "sometimes"}},
		"fraction when fixed":   {"rft", unlearn.Recipe{Schedule: unlearn.ScheduleFixed, EpochFraction: unlearn.Some(0.5)}},
		"fraction above 1":      {"rft", unlearn.Recipe{EpochFraction: unlearn.Some(1.5)}},
		"negative fraction":     {"rft", unlearn.Recipe{EpochFraction: unlearn.Some(-0.5)}},
	} {
		if _, err := unlearn.Configure(r.algo, r.r); !errors.Is(err, unlearn.ErrInput) {
			t.Errorf("%s: %v, want ErrInput", name, err)
		}
	}
}

// A stopping tolerance left unset is the rule's default (0 in AutoConfig),
// an explicit 0 is none (−1), a positive value is itself.
func TestRecipeTolerance(t *testing.T) {
	for _, c := range []struct {
		tol  unlearn.Opt[float64]
		want float64
	}{{unlearn.Opt[float64]{}, 0}, {unlearn.Some(0.0), -1}, {unlearn.Some(0.005), 0.005}} {
		r := unlearn.Recipe{Schedule: unlearn.ScheduleAuto, ForgetTolerance: c.tol, UtilityTolerance: c.tol}
		cfg, err := unlearn.Configure("rft", r)
		if err != nil || cfg.Auto.ForgetTolerance != c.want || cfg.Auto.UtilityTolerance != c.want {
			t.Errorf("%+v: forget %g, utility %g (%v); want %g", c.tol, cfg.Auto.ForgetTolerance,
				cfg.Auto.UtilityTolerance, err, c.want)
		}
	}
}

// ResolveDepthFloor: a given floor wins (and is checked against the
// strategy); without one, the default localization gets the recommended
// floor and a chosen method or strategy (the paper's DEL) gets none; a
// floor with a mask file is refused.
func TestResolveDepthFloor(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		floor    *float64
		chosen   bool
		mask     string
		strategy string
		want     float64
		err      string
	}{
		{nil, false, "", "del", unlearn.Recommended.DepthFloor, ""},
		{nil, true, "", "del", 0, ""},
		{nil, false, "m.json", "del", 0, ""},
		{f(0.2), true, "", "del", 0.2, ""},
		{f(0), false, "", "del", 0, ""},
		{f(0.4), false, "m.json", "del", 0, "--mask m.json"},
		{f(0.4), true, "", "full", 0, "applies to strategy del"},
		{f(1), true, "", "del", 0, "fraction in [0, 1)"},
	} {
		got, err := unlearn.ResolveDepthFloor(c.floor, c.chosen, c.mask, c.strategy)
		if c.err != "" {
			if err == nil || !strings.Contains(flagtext.Render(err), c.err) {
				t.Errorf("%+v: error %v, want %q", c, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%+v: %v, %v; want %v", c, got, err, c.want)
		}
	}
}
