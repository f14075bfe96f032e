package score

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"reflect"
	"testing"

	"github.com/unlearn-tool/unlearn/internal/testutil"
)

// uliraRef is testdata/score/ulira_ref.json, written by make_ulira_ref.py,
// an independent NumPy implementation of the protocol.
type uliraRef struct {
	Floor             float64 `json:"floor"`
	PerExampleShadows int     `json:"per_example_shadows"`
	Cases             map[string]uliraCase
	LargeK            []struct {
		D             float64 `json:"d"`
		K             int     `json:"k"`
		Examples      int     `json:"examples"`
		Accuracy      float64 `json:"accuracy"`
		AUC           float64 `json:"auc"`
		Variance      string  `json:"variance"`
		IdealAccuracy float64 `json:"ideal_accuracy"`
		IdealAUC      float64 `json:"ideal_auc"`
	} `json:"large_k"`
}

type uliraCase struct {
	Unlearned      [][]float64 `json:"unlearned"` // [model][example]
	Retrained      [][]float64 `json:"retrained"`
	OptionFolds    int         `json:"option_folds"`
	OptionVariance string      `json:"option_variance"`
	Accuracy       float64     `json:"accuracy"`
	Examples       []float64   `json:"examples"`
	AUC            float64     `json:"auc"`
	Folds          int         `json:"folds"`
	Shadows        int         `json:"shadows"`
	Targets        int         `json:"targets"`
	Variance       string      `json:"variance"`
	// Some cases only: each target's log-likelihood ratio, [model][example].
	LRUnlearned [][]float64 `json:"lr_unlearned"`
	LRRetrained [][]float64 `json:"lr_retrained"`
}

func loadULiRARef(t *testing.T) *uliraRef {
	t.Helper()
	b, err := os.ReadFile(testutil.Testdata(t, "score", "ulira_ref.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r uliraRef
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if r.Floor != ULiRAVarianceFloor || r.PerExampleShadows != ULiRAPerExampleShadows {
		t.Fatalf("fixture floor %v, per-example from %d shadows; package %v, %d", r.Floor, r.PerExampleShadows, ULiRAVarianceFloor, ULiRAPerExampleShadows)
	}
	return &r
}

// TestULiRAMatchesReference: every case of the NumPy reference (Gaussians
// 0.5, 1 and 2 sd apart at K = 16 with 2, 4 and 16 folds and both variance
// modes; identical distributions at K = 64; separable samples; equal and
// distinct constants; K = 128, where the automatic mode turns per-example;
// K = 5 in unequal folds; equal means with unequal spreads; integer ties).
// Accuracies and AUCs are multiples of 1/(2K) and of 1/(EK)², computed from
// the signs and order of the same likelihood ratios, so they must agree to
// 1e-9 (in fact exactly); the ratios themselves, written out for the
// unequal-spread cases, to 1e-9 relative (the reference keeps the 2π terms
// and numpy's pairwise sums, so the last bits differ).
func TestULiRAMatchesReference(t *testing.T) {
	ref := loadULiRARef(t)
	if len(ref.Cases) < 15 {
		t.Fatalf("fixture has %d cases", len(ref.Cases))
	}
	withLR := 0
	for _, name := range sortedKeys(ref.Cases) {
		c := ref.Cases[name]
		got, err := ULiRAScore(c.Unlearned, c.Retrained, ULiRAOptions{Folds: c.OptionFolds, Variance: c.OptionVariance})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if math.Abs(got.Accuracy-c.Accuracy) > 1e-9 || math.Abs(got.AUC-c.AUC) > 1e-9 {
			t.Errorf("%s: accuracy %v, AUC %v; reference %v, %v", name, got.Accuracy, got.AUC, c.Accuracy, c.AUC)
		}
		for j, want := range c.Examples {
			if math.Abs(got.Examples[j]-want) > 1e-9 {
				t.Errorf("%s example %d: accuracy %v, reference %v", name, j, got.Examples[j], want)
			}
		}
		if got.Folds != c.Folds || got.Shadows != c.Shadows || got.Targets != c.Targets || got.Variance != c.Variance {
			t.Errorf("%s: folds %d, shadows %d, targets %d, variance %s; reference %d, %d, %d, %s", name,
				got.Folds, got.Shadows, got.Targets, got.Variance, c.Folds, c.Shadows, c.Targets, c.Variance)
		}
		if c.LRUnlearned == nil {
			continue
		}
		withLR++
		k, examples := len(c.Unlearned), len(c.Unlearned[0])
		fold := uliraFolds(k, got.Folds)
		_, lrU, lrR, ok := ulira(c.Unlearned, c.Retrained, fold, fold, got.Folds, got.Variance == ULiRAVarianceGlobal, examples, true)
		if !ok {
			t.Fatalf("%s: no fit", name)
		}
		// ulira lists the ratios fold by fold, example by example, model
		// by model.
		i := 0
		for f := range got.Folds {
			for j := range examples {
				for m := range k {
					if fold[m] != f {
						continue
					}
					for _, p := range []struct {
						got, want float64
						side      string
					}{{lrU[i], c.LRUnlearned[m][j], "unlearned"}, {lrR[i], c.LRRetrained[m][j], "retrained"}} {
						if !testutil.CloseAbsRel(p.got, p.want, 1e-12, 1e-9) {
							t.Errorf("%s: %s target %d, example %d: LR %v, reference %v", name, p.side, m, j, p.got, p.want)
						}
					}
					i++
				}
			}
		}
	}
	if withLR != 2 {
		t.Errorf("fixture has %d cases with ratios, want 2", withLR)
	}
	// What the cases are for: identical distributions score 0.5 in
	// expectation (targets are disjoint from shadows; with 50 examples
	// × 128 targets the mean's sd is about 0.006, so 0.03 is 5 sd), the
	// separable and distinct-constant cases 1, equal constants exactly 0.5
	// (every ratio 0, every target called retrained).
	for name, want := range map[string][2]float64{"identical_k64": {0.5, 0.03}, "separable_k16": {1, 0}, "constant_apart": {1, 0}, "constant_equal": {0.5, 0}} {
		if a := ref.Cases[name].Accuracy; math.Abs(a-want[0]) > want[1] {
			t.Errorf("%s: accuracy %v, want %v ± %v", name, a, want[0], want[1])
		}
	}
	if v := ref.Cases["shift_d0.5_k128_auto"].Variance; v != ULiRAVariancePerExample {
		t.Errorf("K = 128, 2 folds: variance %s, want per-example (64 shadows)", v)
	}
}

// TestULiRALargeK: with many models the attack approaches the ideal one,
// whose accuracy between N(0, 1) and N(d, 1) is Φ(d/2) and whose pooled
// AUC is Φ(d/√2) (the ratio is then d·x − d²/2 for every example). K =
// 1000 per side, 50 examples, 2 folds (500 shadows, per-example
// variances): the accuracy's sd is about 0.002, and the estimated fits
// cost a little, so within 0.01 of the ideal; checked on the reference's
// own large ensembles (d = 0.5, 1, 2: 0.597, 0.694, 0.842 against 0.599,
// 0.692, 0.841) and on this package's.
func TestULiRALargeK(t *testing.T) {
	const tol = 0.01
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	ref := loadULiRARef(t)
	if len(ref.LargeK) != 3 {
		t.Fatalf("fixture has %d large-K cases", len(ref.LargeK))
	}
	for _, c := range ref.LargeK {
		if math.Abs(c.IdealAccuracy-phi(c.D/2)) > 1e-12 || math.Abs(c.Accuracy-c.IdealAccuracy) > tol || math.Abs(c.AUC-c.IdealAUC) > tol {
			t.Errorf("reference, d = %v: accuracy %v (ideal %v), AUC %v (ideal %v)", c.D, c.Accuracy, c.IdealAccuracy, c.AUC, c.IdealAUC)
		}
	}
	for i, d := range []float64{0.5, 1, 2} {
		r, u := gaussEnsemble(uint64(40+i), 1000, 50, d) // u is shifted: the unlearned side
		got, err := ULiRAScore(u, r, ULiRAOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Variance != ULiRAVariancePerExample || got.Shadows != 500 ||
			math.Abs(got.Accuracy-phi(d/2)) > tol || math.Abs(got.AUC-phi(d/math.Sqrt2)) > tol {
			t.Errorf("d = %v: accuracy %.4f (ideal %.4f), AUC %.4f (ideal %.4f), %s, %d shadows", d, got.Accuracy, phi(d/2), got.AUC, phi(d/math.Sqrt2), got.Variance, got.Shadows)
		}
		t.Logf("d = %v: accuracy %.4f (ideal %.4f), AUC %.4f (ideal %.4f)", d, got.Accuracy, phi(d/2), got.AUC, phi(d/math.Sqrt2))
	}
}

func TestULiRAErrorsAndFolds(t *testing.T) {
	if ULiRAMinModels(2) != 4 || ULiRAMinModels(4) != 4 || ULiRAMinModels(16) != 16 {
		t.Errorf("ULiRAMinModels(2, 4, 16) = %d, %d, %d", ULiRAMinModels(2), ULiRAMinModels(4), ULiRAMinModels(16))
	}
	if f := uliraFolds(5, 2); !reflect.DeepEqual(f, []int{0, 0, 1, 1, 1}) {
		t.Errorf("folds of 5 models in 2: %v", f)
	}
	u, r := gaussEnsemble(1, 4, 3, 1)
	for _, c := range []struct {
		u, r [][]float64
		opt  ULiRAOptions
		want error
	}{
		{u[:3], r[:3], ULiRAOptions{}, ErrTooFewModels},
		{u, r, ULiRAOptions{Folds: 5}, ErrTooFewModels},
		{u, r, ULiRAOptions{Folds: 1}, ErrOptions},
		{u, r, ULiRAOptions{Variance: "median"}, ErrOptions},
		{u, r[:3], ULiRAOptions{}, ErrTooFewModels},
		{u, [][]float64{r[0], r[1], r[2], {1, math.NaN(), 2}}, ULiRAOptions{}, ErrNonFinite},
	} {
		if _, err := ULiRAScore(c.u, c.r, c.opt); !errors.Is(err, c.want) {
			t.Errorf("%d/%d models, %+v: %v, want %v", len(c.u), len(c.r), c.opt, err, c.want)
		}
	}
	if got, err := ULiRAScore(u, r, ULiRAOptions{Folds: 4}); err != nil || got.Shadows != 3 || got.Targets != 4 || got.Variance != ULiRAVarianceGlobal {
		t.Errorf("leave-one-out on K = 4: %+v, %v", got, err)
	}
}

// TestSummarizeULiRA: Summarize reports U-LiRA from K = 4 on (nil below),
// with an interval around the estimate that does not depend on the
// workers; resampled copies of a model keep its fold.
func TestSummarizeULiRA(t *testing.T) {
	u, r := gaussEnsemble(7, 16, 20, 1)
	opt := BootstrapOptions{Resamples: 40, Seed: 3, Workers: 1}
	s, err := Summarize(Ensemble{Unlearned: u, Retrained: r}, opt)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := ULiRAScore(u, r, ULiRAOptions{})
	if s.ULiRA == nil || s.ULiRAAccuracy == nil || !reflect.DeepEqual(s.ULiRA, want) || s.ULiRAAccuracy.Estimate != want.Accuracy {
		t.Fatalf("Summarize's U-LiRA %+v %+v, want %+v", s.ULiRA, s.ULiRAAccuracy, want)
	}
	if iv := s.ULiRAAccuracy; !(iv.Lo <= iv.Estimate && iv.Estimate <= iv.Hi && iv.Hi > iv.Lo) {
		t.Errorf("interval %+v", iv)
	}
	opt.Workers = 3
	if s2, _ := Summarize(Ensemble{Unlearned: u, Retrained: r}, opt); !reflect.DeepEqual(s.ULiRAAccuracy, s2.ULiRAAccuracy) {
		t.Error("the interval depends on the number of workers")
	}
	for _, k := range []int{2, 3} {
		s, err := Summarize(Ensemble{Unlearned: u[:k], Retrained: r[:k]}, BootstrapOptions{Resamples: 5})
		if err != nil || s.ULiRA != nil || s.ULiRAAccuracy != nil {
			t.Errorf("K = %d: U-LiRA %+v, %v; want none", k, s.ULiRA, err)
		}
	}
	if _, err := Summarize(Ensemble{Unlearned: u, Retrained: r}, BootstrapOptions{ULiRA: ULiRAOptions{Variance: "x"}}); !errors.Is(err, ErrOptions) {
		t.Errorf("bad U-LiRA option: %v", err)
	}
	// In a resample, copies of one model keep its fold, so a target is
	// never among its own shadows. With identical distributions (K = 8, 60
	// examples, per-example variances, 60 resamples) the resamples' median
	// then stays near the estimate (shift −0.014); folds by position in the
	// resample, which let a copy be both, shifted it by +0.084.
	u, r = gaussEnsemble(7, 8, 60, 0)
	s, err = Summarize(Ensemble{Unlearned: u, Retrained: r}, BootstrapOptions{Resamples: 60, Seed: 1, ULiRA: ULiRAOptions{Variance: ULiRAVariancePerExample}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("shift %v", s.ULiRAAccuracy.Shift)
	if sh := s.ULiRAAccuracy.Shift; math.Abs(sh) > 0.03 {
		t.Errorf("identical distributions: resamples' median shifted by %v", sh)
	}
}
