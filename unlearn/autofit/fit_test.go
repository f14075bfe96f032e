package autofit

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/schema"
	"github.com/unlearn-tool/unlearn/train"
	"github.com/unlearn-tool/unlearn/unlearn/autorule"
)

// The driver runs in package unlearn's auto tests (TestAuto*) on real
// engines; here, the arithmetic of a round and, on scripted proxies, the
// plateau cuts.
func TestRoundSteps(t *testing.T) {
	for _, c := range []struct {
		steps    int
		fraction float64
		want     int
	}{
		{40, 0, 40}, {40, 1, 40}, {40, 0.5, 20}, {40, 0.26, 11}, {3, 0.01, 1}, {40, -1, 40}, {40, 2, 40},
	} {
		if got := RoundSteps(c.steps, c.fraction); got != c.want {
			t.Errorf("RoundSteps(%d, %g) = %d, want %d", c.steps, c.fraction, got, c.want)
		}
	}
}

// TestPlateauCuts: a run whose test accuracy stalls after it forgot goes
// back to its best epoch and trains on at PlateauFactor times the rate
// (patience counted afresh), where it meets the rule; a run that still
// remembers the forget set stops as before, since a lower rate does not
// forget.
func TestPlateauCuts(t *testing.T) {
	run := func(forget float64, tests []float64) (*schema.AutoSchedule, []float64, []string) {
		var lrs []float64
		var notes []string
		log := &schema.ProxyLog{Estimate: &schema.OracleEstimate{ReferenceAccuracy: 0.8, TestAccuracy: 0.9}}
		res := &schema.AutoSchedule{MaxEpochs: len(tests)}
		tr := &Training{Engine: &train.Engine{}, Log: log, Result: res, Epochs: len(tests), BaseLR: 1,
			LR: func(int) float64 { return 1 },
			TrainEpoch: func(_ int, lr float64, _ bool, _ float64) error {
				lrs = append(lrs, lr)
				return nil
			},
			Measure: func(ep int, lr float64) error {
				log.After = schema.Proxies{ForgetAccuracy: forget, ReferenceAccuracy: 0.8, TestAccuracy: tests[ep-1]}
				log.Epochs = append(log.Epochs, schema.EpochProxies{Epoch: ep, LR: lr, Proxies: log.After})
				return nil
			},
			Note: func(f string, a ...any) { notes = append(notes, fmt.Sprintf(f, a...)) },
		}
		a := autorule.Config{MaxEpochs: len(tests), MinEpochs: 1, Patience: 2, ForgetTolerance: 0.01,
			UtilityTolerance: 0.005, UtilityBaseline: autorule.UtilityEstimate, ForgetBaseline: autorule.ForgetEstimate,
			PlateauCuts: 1, PlateauFactor: 0.3}
		if err := Fit(tr, a); err != nil {
			t.Fatal(err)
		}
		return res, lrs, notes
	}
	// Forgot (0.7 ≤ 0.8 + 0.01); test stalls at 0.86 from epoch 2, so
	// patience 2 would stop after epoch 4; the cut lets epoch 5 reach 0.895.
	res, lrs, notes := run(0.7, []float64{0.85, 0.86, 0.86, 0.86, 0.895, 0.7})
	if res.PlateauCuts != 1 || res.Reason != autorule.StopUnseen || res.Epoch != 5 {
		t.Errorf("cut %d, stopped %q at epoch %d: want one cut, then the rule met at epoch 5", res.PlateauCuts,
			res.Reason, res.Epoch)
	}
	if want := []float64{1, 1, 1, 1, 0.3}; !slices.Equal(lrs, want) {
		t.Errorf("rates %v, want %v", lrs, want)
	}
	if !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "the rate ×0.3 (cut 1 of 1)") }) {
		t.Errorf("no note of the cut: %q", notes)
	}
	// Still remembered (0.95 > 0.81): no cut, the run stops for lack of
	// progress after epoch 4, with its best epoch, 2.
	res, lrs, _ = run(0.95, []float64{0.85, 0.86, 0.86, 0.86, 0.895, 0.7})
	if res.PlateauCuts != 0 || res.Reason != autorule.StopNoProgress || res.StopEpoch != 4 || res.Epoch != 2 ||
		len(lrs) != 4 {
		t.Errorf("cut %d, stopped %q after epoch %d (result %d, %d epochs): want no cut, no progress after 4, "+
			"result 2", res.PlateauCuts, res.Reason, res.StopEpoch, res.Epoch, len(lrs))
	}
}
