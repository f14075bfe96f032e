package unlearn

import (
	"errors"
	"math"
	"testing"
)

func TestHoldoutSize(t *testing.T) {
	p := ProxyConfig{}.withDefaults()
	for _, c := range []struct{ n, want int }{
		{3600, 180}, {100, 50}, {60, 30}, {1, 0}, {50000, 2000}, {1000, 100}, {4000, 200}, {10000, 500},
	} {
		if got := p.HoldoutSize(c.n); got != c.want {
			t.Errorf("HoldoutSize(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}

// Bad schedule settings are input errors, before any work.
func TestScheduleErrors(t *testing.T) {
	for _, c := range []struct {
		algo string
		cfg  Config
	}{
		{"rft", Config{Schedule: "cosine"}},
		{"ssd", Config{Schedule: ScheduleAuto}},
		{"iu", Config{Schedule: ScheduleAuto}},
		{"rft", Config{Schedule: ScheduleAuto, Auto: AutoConfig{MinEpochs: 5, MaxEpochs: 2}}},
		{"rft", Config{Schedule: ScheduleAuto, Auto: AutoConfig{LRs: []float64{0.1, -1}}}},
		{"rft", Config{Schedule: ScheduleAuto, Auto: AutoConfig{UtilityBaseline: "oracle"}}},
		{"rft", Config{Schedule: ScheduleAuto, Auto: AutoConfig{SplitAllowance: math.NaN()}}},
		{"rft", Config{Schedule: ScheduleAuto, Auto: AutoConfig{MinProgress: math.NaN()}}},
		{"rft", Config{Schedule: ScheduleAuto, Auto: AutoConfig{RoundBudget: math.NaN()}}},
		{"rft", Config{Proxies: ProxyConfig{Track: true, HoldoutFraction: 1.5}}},
		{"rft", Config{Proxies: ProxyConfig{Track: true, Feature: "loss"}}},
	} {
		_, err := Run(t.Context(), c.algo, Input{}, c.cfg)
		if !errors.Is(err, ErrInput) {
			t.Errorf("%s %+v: %v, want ErrInput", c.algo, c.cfg, err)
		}
	}
}
