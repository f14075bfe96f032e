package svc

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// minAgreement is the fraction of test points on which Predict must agree
// with scikit-learn.
const minAgreement = 0.995

func TestParitySklearn(t *testing.T) {
	for _, meta := range loadManifest(t) {
		t.Run(meta.Name, func(t *testing.T) {
			fx := loadFixture(t, meta)
			xCopy := slices.Clone(fx.xTrain)
			start := time.Now()
			m, err := FitFlat(fx.xTrain, fx.NTrain, fx.D, fx.yTrain, Options{})
			fitTime := time.Since(start)
			if err != nil {
				t.Fatalf("FitFlat: %v", err)
			}
			if !slices.Equal(xCopy, fx.xTrain) {
				t.Fatal("FitFlat modified its input")
			}
			dec := m.DecisionFunctionFlat(fx.xTest)
			pred := m.PredictFlat(fx.xTest)
			agree, maxDiff := 0, 0.0
			for i, p := range pred {
				if p == fx.pred[i] {
					agree++
				}
				maxDiff = math.Max(maxDiff, math.Abs(dec[i]-fx.dec[i]))
				if (dec[i] >= 0) != (p == 1) {
					t.Fatalf("point %d: decision %v but prediction %d", i, dec[i], p)
				}
			}
			frac := float64(agree) / float64(len(pred))
			t.Logf("%s (%s): agreement %.4f (%d/%d), nSV %d (sklearn %d), per class %v (sklearn %v), intercept %.6g (sklearn %.6g), max |Δdecision| %.3g, iter %d, fit %.3fs (sklearn %.3fs)",
				meta.Name, meta.Description, frac, agree, len(pred), m.NumSV(), meta.NSV, m.NumSupport(), meta.NSupport,
				m.Intercept(), meta.Intercept, maxDiff, m.Iterations(), fitTime.Seconds(), meta.FitSeconds)
			if frac < minAgreement {
				t.Errorf("agreement with sklearn %.4f < %.4f", frac, minAgreement)
			}
			if rel := math.Abs(float64(m.NumSV()-meta.NSV)) / float64(meta.NSV); rel > 0.02 {
				t.Errorf("nSV %d differs from sklearn's %d by %.1f%%", m.NumSV(), meta.NSV, 100*rel)
			}
		})
	}
}

// TestFitMatchesFitFlat checks the [][]float64 entry point and the
// support-vector bookkeeping on a small problem.
func TestFitMatchesFitFlat(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, d = 300, 3
	x := make([][]float64, n)
	flat := make([]float64, 0, n*d)
	y := make([]int, n)
	for i := range x {
		x[i] = make([]float64, d)
		for k := range x[i] {
			x[i][k] = rng.NormFloat64()
		}
		if x[i][0]+0.5*rng.NormFloat64() > 0 {
			y[i] = 1
		}
		flat = append(flat, x[i]...)
	}
	a, err := Fit(x, y, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := FitFlat(flat, n, d, y, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Intercept() != b.Intercept() || !slices.Equal(a.Support(), b.Support()) {
		t.Fatalf("Fit and FitFlat differ: %v/%v vs %v/%v", a.Intercept(), a.NumSV(), b.Intercept(), b.NumSV())
	}
	if !slices.Equal(a.Predict(x), b.PredictFlat(flat)) {
		t.Fatal("predictions differ")
	}
	// Support vectors come class 0 first, each class in input order, and
	// the dual coefficients have scikit-learn's sign.
	sup, coef := a.Support(), a.DualCoef()
	ns := a.NumSupport()
	if ns[0]+ns[1] != a.NumSV() || len(sup) != a.NumSV() {
		t.Fatalf("NumSupport %v, NumSV %d, len(Support) %d", ns, a.NumSV(), len(sup))
	}
	var sum float64
	for k, i := range sup {
		wantClass := 0
		if k >= ns[0] {
			wantClass = 1
		}
		if y[i] != wantClass {
			t.Fatalf("support %d (index %d) has class %d, want %d", k, i, y[i], wantClass)
		}
		if k > 0 && k != ns[0] && sup[k-1] >= i {
			t.Fatalf("support indices not increasing within class at %d", k)
		}
		if (coef[k] > 0) != (y[i] == 1) || math.Abs(coef[k]) > DefaultC*(1+1e-12) {
			t.Fatalf("dual coef %v for class %d", coef[k], y[i])
		}
		sum += coef[k]
	}
	if math.Abs(sum) > 1e-9 {
		t.Fatalf("Σ dual coef = %v, want 0", sum)
	}
	// The decision function recomputed from the exported pieces.
	dec := a.DecisionFunction(x[:5])
	for p := range 5 {
		want := a.Intercept()
		for k, i := range sup {
			want += coef[k] * rbf(x[i], x[p], a.Gamma())
		}
		if math.Abs(dec[p]-want) > 1e-12 {
			t.Fatalf("decision %d: %v, recomputed %v", p, dec[p], want)
		}
	}
}

// TestShrinkingAndCacheInvariance: without shrinking, and with a tiny cache,
// the solution is the same up to the stopping tolerance.
func TestShrinkingAndCacheInvariance(t *testing.T) {
	fx := loadFixture(t, findMeta(t, "overlap1d_2000"))
	ref, err := FitFlat(fx.xTrain, fx.NTrain, fx.D, fx.yTrain, Options{})
	if err != nil {
		t.Fatal(err)
	}
	refDec := ref.DecisionFunctionFlat(fx.xTest)
	for _, o := range []Options{{NoShrinking: true}, {CacheBytes: 1}, {CacheBytes: 64 << 10, NoShrinking: true}} {
		m, err := FitFlat(fx.xTrain, fx.NTrain, fx.D, fx.yTrain, o)
		if err != nil {
			t.Fatal(err)
		}
		dec := m.DecisionFunctionFlat(fx.xTest)
		var maxDiff float64
		for i := range dec {
			maxDiff = math.Max(maxDiff, math.Abs(dec[i]-refDec[i]))
		}
		t.Logf("%+v: nSV %d (ref %d), iter %d (ref %d), max |Δdecision| %.3g", o, m.NumSV(), ref.NumSV(), m.Iterations(), ref.Iterations(), maxDiff)
		if maxDiff > 0.05 {
			t.Errorf("%+v: decision differs by %v", o, maxDiff)
		}
	}
}

func findMeta(t *testing.T, name string) fixtureMeta {
	t.Helper()
	for _, m := range loadManifest(t) {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("no fixture %q", name)
	return fixtureMeta{}
}

func TestDegenerate(t *testing.T) {
	// All points identical but labels differ: K ≡ 1, every decision value is
	// the same and is decided by the majority.
	x := make([][]float64, 10)
	y := make([]int, 10)
	for i := range x {
		x[i] = []float64{0.5, -2}
		if i < 7 {
			y[i] = 1
		}
	}
	m, err := Fit(x, y, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Predict([][]float64{{0.5, -2}, {10, 10}}); !slices.Equal(got, []int{1, 1}) {
		t.Errorf("constant features, 7 of 10 labels 1: predictions %v, want [1 1]", got)
	}
	// Two points per class, duplicated many times.
	x = x[:0]
	y = y[:0]
	for i := range 200 {
		x = append(x, []float64{float64(i % 2)})
		y = append(y, i%2)
	}
	m, err = Fit(x, y, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Predict([][]float64{{0}, {1}}); !slices.Equal(got, []int{0, 1}) {
		t.Errorf("duplicated separable points: predictions %v, want [0 1]", got)
	}
	if m.NumSV() == 0 {
		t.Error("no support vectors")
	}
}

func TestValidation(t *testing.T) {
	x2 := [][]float64{{0}, {1}}
	tests := []struct {
		name string
		fit  func() (*Model, error)
		want error
	}{
		{"empty", func() (*Model, error) { return Fit(nil, nil, Options{}) }, ErrEmpty},
		{"zero features", func() (*Model, error) { return Fit([][]float64{{}, {}}, []int{0, 1}, Options{}) }, ErrEmpty},
		{"ragged", func() (*Model, error) { return Fit([][]float64{{0, 1}, {1}}, []int{0, 1}, Options{}) }, ErrShape},
		{"flat length", func() (*Model, error) { return FitFlat([]float64{0, 1, 2}, 2, 2, []int{0, 1}, Options{}) }, ErrShape},
		{"label count", func() (*Model, error) { return Fit(x2, []int{0}, Options{}) }, ErrShape},
		{"label value", func() (*Model, error) { return Fit(x2, []int{0, 2}, Options{}) }, ErrLabel},
		{"negative label", func() (*Model, error) { return Fit(x2, []int{-1, 1}, Options{}) }, ErrLabel},
		{"one class", func() (*Model, error) { return Fit(x2, []int{1, 1}, Options{}) }, ErrOneClass},
		{"NaN", func() (*Model, error) { return Fit([][]float64{{0}, {math.NaN()}}, []int{0, 1}, Options{}) }, ErrNonFinite},
		{"Inf", func() (*Model, error) { return Fit([][]float64{{math.Inf(1)}, {0}}, []int{0, 1}, Options{}) }, ErrNonFinite},
		{"negative C", func() (*Model, error) { return Fit(x2, []int{0, 1}, Options{C: -1}) }, ErrOption},
		{"NaN C", func() (*Model, error) { return Fit(x2, []int{0, 1}, Options{C: math.NaN()}) }, ErrOption},
		{"negative gamma", func() (*Model, error) { return Fit(x2, []int{0, 1}, Options{Gamma: -1}) }, ErrOption},
		{"negative tol", func() (*Model, error) { return Fit(x2, []int{0, 1}, Options{Tol: -1}) }, ErrOption},
		{"negative cache", func() (*Model, error) { return Fit(x2, []int{0, 1}, Options{CacheBytes: -1}) }, ErrOption},
		{"negative max iter", func() (*Model, error) { return Fit(x2, []int{0, 1}, Options{MaxIter: -1}) }, ErrOption},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tc.fit()
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if m != nil {
				t.Fatal("model returned with a validation error")
			}
		})
	}
}

func TestMaxIter(t *testing.T) {
	fx := loadFixture(t, findMeta(t, "random1d_1000"))
	m, err := FitFlat(fx.xTrain, fx.NTrain, fx.D, fx.yTrain, Options{MaxIter: 10})
	if !errors.Is(err, ErrMaxIter) {
		t.Fatalf("error %v, want ErrMaxIter", err)
	}
	if m == nil || m.Iterations() != 10 {
		t.Fatalf("model %v after hitting MaxIter", m)
	}
}

func TestPredictPanicsOnShape(t *testing.T) {
	m, err := Fit([][]float64{{0, 0}, {1, 1}}, []int{0, 1}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("no panic on a row of the wrong length")
		}
	}()
	m.Predict([][]float64{{1}})
}
