package score

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestMarginAnalytic: two classes give z_y − z_other exactly; C equal
// logits give −ln(C − 1); moderate logits agree with the direct
// log p_y − log(1 − p_y); extreme logits stay finite where the direct
// formula overflows.
func TestMarginAnalytic(t *testing.T) {
	if got := Margin([]float32{3, -1.5}, 0); got != 4.5 {
		t.Errorf("two classes: %v, want 4.5", got)
	}
	if got := Margin([]float32{3, -1.5}, 1); got != -4.5 {
		t.Errorf("two classes, label 1: %v, want -4.5", got)
	}
	for _, c := range []int{2, 3, 10, 1000} {
		row := make([]float32, c)
		for i := range row {
			row[i] = 7.25
		}
		if got, want := Margin(row, c/2), -math.Log(float64(c-1)); math.Abs(got-want) > 1e-12 {
			t.Errorf("%d equal logits: %v, want %v", c, got, want)
		}
	}
	row := []float32{1.5, -0.25, 2, 0.75}
	for y := range row {
		var s float64
		for _, z := range row {
			s += math.Exp(float64(z))
		}
		p := math.Exp(float64(row[y])) / s
		want := math.Log(p) - math.Log(1-p)
		if got := LogitScaledConfidence(row, y); math.Abs(got-want) > 1e-12 {
			t.Errorf("label %d: %v, direct formula %v", y, got, want)
		}
	}
	// p_y rounds to 1 in float64 beyond a gap of ~37: the direct formula
	// gives +Inf, the margin the exact 100 − ln 2.
	if got, want := Margin([]float32{100, 0, 0}, 0), 100-math.Ln2; math.Abs(got-want) > 1e-12 {
		t.Errorf("gap 100: %v, want %v", got, want)
	}
	if got, want := Margin([]float32{-100, 0, 0}, 0), -100-math.Ln2; math.Abs(got-want) > 1e-12 {
		t.Errorf("gap −100: %v, want %v", got, want)
	}
	big := float32(math.MaxFloat32)
	for _, c := range []struct {
		row  []float32
		y    int
		want float64
	}{
		{[]float32{big, -big, 0}, 0, float64(big)},
		{[]float32{big, -big, 0}, 1, -2 * float64(big)},
		{[]float32{-big, -big}, 0, 0},
		{[]float32{big, big, big}, 2, -math.Ln2},
		{[]float32{1e-30, -1e-30}, 0, 2e-30},
	} {
		got := Margin(c.row, c.y)
		if math.IsNaN(got) || math.IsInf(got, 0) || !(math.Abs(got-c.want) <= 1e-9*math.Abs(c.want)+1e-37) {
			t.Errorf("Margin(%v, %d) = %v, want %v", c.row, c.y, got, c.want)
		}
	}
}

func TestMarginsErrors(t *testing.T) {
	if _, err := Margins([]float32{1, 2, 3}, 2, []int{0, 1}); !errors.Is(err, ErrShape) {
		t.Errorf("length: %v", err)
	}
	if _, err := Margins([]float32{1, 2}, 2, []int{2}); !errors.Is(err, ErrShape) {
		t.Errorf("label: %v", err)
	}
	if _, err := Margins([]float32{1}, 1, []int{0}); !errors.Is(err, ErrShape) {
		t.Errorf("one class: %v", err)
	}
	if _, err := Margins([]float32{1, float32(math.NaN())}, 2, []int{0}); !errors.Is(err, ErrNonFinite) {
		t.Errorf("NaN: %v", err)
	}
	got, err := Margins([]float32{1, 2, 5, 1}, 2, []int{1, 0})
	if err != nil || got[0] != 1 || got[1] != 4 {
		t.Errorf("Margins = %v, %v", got, err)
	}
}

func TestPointsAndMaxEpsilon(t *testing.T) {
	// N = 16: E = ⌈ln 15⌉ = 3, six buckets.
	for _, c := range []struct{ eps, want float64 }{
		{0, 1}, {0.4999, 1}, {0.5, 0.5}, {1, 0.25}, {2.9, 1.0 / 32}, {3, 0}, {EpsilonCap, 0}, {math.NaN(), 0},
	} {
		if got := Points(c.eps, 16); got != c.want {
			t.Errorf("Points(%v, 16) = %v, want %v", c.eps, got, c.want)
		}
	}
	for n, want := range map[int]float64{3: 1, 16: 3, 64: 5, 512: 7} {
		if got := MaxEpsilon(n); got != want {
			t.Errorf("MaxEpsilon(%d) = %v, want %v", n, got, want)
		}
	}
	if Points(0, 2) != 0 {
		t.Error("N = 2 has no bucket")
	}
}

func gaussEnsemble(seed uint64, k, examples int, shift float64) (u, r [][]float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	u, r = make([][]float64, k), make([][]float64, k)
	for m := range k {
		u[m], r[m] = make([]float64, examples), make([]float64, examples)
		for j := range examples {
			u[m][j], r[m][j] = rng.NormFloat64(), rng.NormFloat64()+shift
		}
	}
	return u, r
}

// TestEpsilonBounds: identical values give ε = 0 and F = 1; a finite ε
// never exceeds ln(N(1−δ) − 1); a larger shift never lowers the mean ε much.
func TestEpsilonBounds(t *testing.T) {
	u, _ := gaussEnsemble(1, 16, 10, 0)
	f, err := ForgetScore(u, u, 1)
	if err != nil || f.F != 1 {
		t.Fatalf("identical values: F %v, %v", f.F, err)
	}
	for _, k := range []int{4, 16, 64} {
		u, r := gaussEnsemble(2, k, 20, 0.5)
		f, err := ForgetScore(u, r, 0)
		if err != nil {
			t.Fatal(err)
		}
		bound := math.Log(float64(k)*(1-Delta) - 1)
		for j, e := range f.Examples {
			if e.How == HowThreshold && e.Value > bound+1e-12 {
				t.Errorf("K=%d example %d: ε %v above ln(N(1−δ)−1) = %v", k, j, e.Value, bound)
			}
		}
	}
}

func TestForgetScoreErrorsAndWorkers(t *testing.T) {
	u, r := gaussEnsemble(3, 8, 30, 0.3)
	if _, err := ForgetScore(u, r[:7], 1); !errors.Is(err, ErrTooFewModels) {
		t.Errorf("unequal counts: %v", err)
	}
	if _, err := ForgetScore(u[:1], r[:1], 1); !errors.Is(err, ErrTooFewModels) {
		t.Errorf("one model: %v", err)
	}
	bad := [][]float64{{1, 2}, {1}}
	if _, err := ForgetScore(bad, bad, 1); !errors.Is(err, ErrShape) {
		t.Errorf("ragged: %v", err)
	}
	nan := [][]float64{{1, math.Inf(1)}, {1, 2}}
	if _, err := ForgetScore(nan, nan, 1); !errors.Is(err, ErrNonFinite) {
		t.Errorf("Inf: %v", err)
	}
	a, _ := ForgetScore(u, r, 1)
	b, _ := ForgetScore(u, r, 3)
	if !reflect.DeepEqual(a, b) {
		t.Error("ForgetScore depends on the number of workers")
	}
	if _, err := ExampleEpsilon([]float64{1}, []float64{2}); !errors.Is(err, ErrTooFewModels) {
		t.Errorf("ExampleEpsilon, one model: %v", err)
	}
}

func TestFinalScore(t *testing.T) {
	s, err := FinalScore(0.5, 0.9, 1.0, 0.8, 0.8)
	if err != nil || math.Abs(s-0.45) > 1e-15 {
		t.Errorf("FinalScore = %v, %v", s, err)
	}
	if _, err := FinalScore(0.5, 0.9, 0, 0.8, 0.8); !errors.Is(err, ErrNonFinite) {
		t.Errorf("zero retrained accuracy: %v", err)
	}
}

func TestKLoMBasics(t *testing.T) {
	v := []float64{0.1, -2, 3, 0.5}
	if kl, err := KLoM(v, v, KLoMOptions{}); err != nil || kl != 0 {
		t.Errorf("identical: %v, %v", kl, err)
	}
	// Disjoint samples: all unlearned mass in bins where the retrained has
	// none, so KL = ln(1/floor) after renormalisation, about 11.5.
	kl, err := KLoM([]float64{0, 0.01}, []float64{10, 10.01}, KLoMOptions{})
	if err != nil || kl < 11 || kl > 12 {
		t.Errorf("disjoint: %v, %v", kl, err)
	}
	if _, err := KLoM(nil, v, KLoMOptions{}); !errors.Is(err, ErrTooFewModels) {
		t.Errorf("empty: %v", err)
	}
	if _, err := KLoM(v, v, KLoMOptions{Floor: 2}); !errors.Is(err, ErrOptions) {
		t.Errorf("floor 2: %v", err)
	}
	u, r := gaussEnsemble(4, 16, 12, 1)
	a, err := KLoMs(u, r, KLoMOptions{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := KLoMs(u, r, KLoMOptions{}, 4)
	if !reflect.DeepEqual(a, b) {
		t.Error("KLoMs depends on the number of workers")
	}
	for j := range a {
		col := func(rows [][]float64) []float64 {
			c := make([]float64, len(rows))
			for m := range rows {
				c[m] = rows[m][j]
			}
			return c
		}
		if one, _ := KLoM(col(u), col(r), KLoMOptions{}); one != a[j] {
			t.Errorf("example %d: KLoMs %v, KLoM %v", j, a[j], one)
		}
	}
}

// TestSummarize: the estimates equal ForgetScore's, FinalScore's and the
// mean of KLoMs; the intervals hold their estimate, do not depend on the
// number of workers, repeat with the seed and change with it.
func TestSummarize(t *testing.T) {
	u, r := gaussEnsemble(5, 8, 12, 0.5)
	acc := func(v float64) []float64 {
		a := make([]float64, 8)
		for i := range a {
			a[i] = v + 0.01*float64(i%3)
		}
		return a
	}
	e := Ensemble{Unlearned: u, Retrained: r,
		UnlearnedRetainAcc: acc(0.9), RetrainedRetainAcc: acc(0.95),
		UnlearnedTestAcc: acc(0.8), RetrainedTestAcc: acc(0.82)}
	opt := BootstrapOptions{Resamples: 30, Seed: 9, Workers: 1}
	s, err := Summarize(e, opt)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := ForgetScore(u, r, 1)
	mean := func(a []float64) float64 {
		var t float64
		for _, v := range a {
			t += v
		}
		return t / float64(len(a))
	}
	final, _ := FinalScore(f.F, mean(e.UnlearnedRetainAcc), mean(e.RetrainedRetainAcc), mean(e.UnlearnedTestAcc), mean(e.RetrainedTestAcc))
	kl, _ := KLoMs(u, r, KLoMOptions{}, 1)
	if s.F.Estimate != f.F || math.Abs(s.Final.Estimate-final) > 1e-15 || math.Abs(s.MeanKLoM.Estimate-mean(kl)) > 1e-12 {
		t.Errorf("estimates %v %v %v, want %v %v %v", s.F.Estimate, s.Final.Estimate, s.MeanKLoM.Estimate, f.F, final, mean(kl))
	}
	for name, iv := range map[string]Interval{"F": s.F, "final": *s.Final, "KLoM": s.MeanKLoM} {
		if !(iv.Lo <= iv.Estimate && iv.Estimate <= iv.Hi) {
			t.Errorf("%s: interval %+v", name, iv)
		}
	}
	opt.Workers = 3
	s2, _ := Summarize(e, opt)
	if !reflect.DeepEqual(s, s2) {
		t.Error("Summarize depends on the number of workers")
	}
	opt.Seed = 10
	s3, _ := Summarize(e, opt)
	if reflect.DeepEqual(s.MeanKLoM, s3.MeanKLoM) {
		t.Error("another seed gave the same interval")
	}
	if _, err := Summarize(Ensemble{Unlearned: u, Retrained: r, UnlearnedRetainAcc: acc(0.9)}, opt); !errors.Is(err, ErrShape) {
		t.Errorf("missing accuracies: %v", err)
	}
	none, err := Summarize(Ensemble{Unlearned: u, Retrained: r}, BootstrapOptions{Resamples: -1})
	if err != nil || none.Final != nil || none.F.Lo != none.F.Estimate || none.Resamples != 0 {
		t.Errorf("no resamples: %+v, %v", none, err)
	}
}
