package eval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// LogReg is a fitted one-feature logistic regression: P(y = 1 | x) =
// σ(W·x + B).
type LogReg struct {
	W, B       float64
	Iterations int // Newton iterations taken
}

// Predict returns 1 where W·x + B > 0 and 0 elsewhere (scikit-learn's
// LogisticRegression.predict: a decision value of exactly 0 is class 0).
func (m LogReg) Predict(x float64) int {
	if m.W*x+m.B > 0 {
		return 1
	}
	return 0
}

// FitLogReg1D fits scikit-learn's LogisticRegression(C=c) (penalty 'l2',
// fit_intercept=True, the intercept not penalised, as with its default lbfgs
// solver) to one feature: it minimises
//
//	Σᵢ log(1 + exp(−sᵢ(W·xᵢ + B))) + W²/(2c),   sᵢ = 2yᵢ − 1,
//
// by Newton's method with a backtracking line search. The objective is
// strictly convex in (W, B) for any data with both labels, so the optimum is
// unique and Newton reaches it to rounding; scikit-learn's lbfgs stops at a
// gradient tolerance of 1e-4 and agrees to about that.
func FitLogReg1D(x []float64, y []int, c float64) (LogReg, error) {
	if len(x) != len(y) {
		return LogReg{}, fmt.Errorf("eval: FitLogReg1D: %d points, %d labels: %w", len(x), len(y), ErrShape)
	}
	if !(c > 0) || math.IsInf(c, 0) {
		return LogReg{}, fmt.Errorf("eval: FitLogReg1D: C = %v must be positive and finite", c)
	}
	var n1 int
	for i, v := range y {
		if v != 0 && v != 1 {
			return LogReg{}, fmt.Errorf("eval: FitLogReg1D: label %d at %d: labels must be 0 or 1: %w", v, i, ErrShape)
		}
		if math.IsNaN(x[i]) || math.IsInf(x[i], 0) {
			return LogReg{}, fmt.Errorf("eval: FitLogReg1D: x[%d] = %v: %w", i, x[i], ErrNonFinite)
		}
		n1 += v
	}
	if n1 == 0 || n1 == len(y) {
		return LogReg{}, fmt.Errorf("eval: FitLogReg1D: %d points all of one label: %w", len(y), ErrTooFew)
	}
	obj := func(w, b float64) float64 {
		f := w * w / (2 * c)
		for i, xi := range x {
			f += softplus(-sign(y[i]) * (w*xi + b))
		}
		return f
	}
	var w, b float64
	f := obj(w, b)
	m := LogReg{}
	for it := 1; it <= 100; it++ {
		// gradient and Hessian
		gw, gb := w/c, 0.0
		hww, hwb, hbb := 1/c, 0.0, 0.0
		for i, xi := range x {
			z := w*xi + b
			s := sign(y[i])
			r := -s * sigmoid(-s*z) // d/dz of softplus(−s·z)
			gw += r * xi
			gb += r
			h := sigmoid(z) * sigmoid(-z)
			hww += h * xi * xi
			hwb += h * xi
			hbb += h
		}
		det := hww*hbb - hwb*hwb
		if !(det > 0) {
			// Degenerate curvature (every point saturated): gradient step.
			det = 0
		}
		var dw, db float64
		if det > 0 {
			dw = -(hbb*gw - hwb*gb) / det
			db = -(-hwb*gw + hww*gb) / det
		} else {
			dw, db = -gw, -gb
		}
		// Newton decrement: stop when the predicted decrease is at rounding level.
		dec := -(gw*dw + gb*db)
		m.Iterations = it
		if dec <= 1e-15*math.Max(1, math.Abs(f)) {
			break
		}
		t := 1.0
		var fn float64
		for range 60 {
			fn = obj(w+t*dw, b+t*db)
			if fn <= f-0.25*t*dec {
				break
			}
			t /= 2
		}
		if fn >= f {
			break // no further decrease representable
		}
		w, b, f = w+t*dw, b+t*db, fn
	}
	m.W, m.B = w, b
	return m, nil
}

func sign(y int) float64 {
	if y == 1 {
		return 1
	}
	return -1
}

// softplus returns log(1 + exp(t)) without overflow.
func softplus(t float64) float64 {
	if t > 0 {
		return t + math.Log1p(math.Exp(-t))
	}
	return math.Log1p(math.Exp(t))
}

func sigmoid(t float64) float64 {
	if t >= 0 {
		return 1 / (1 + math.Exp(-t))
	}
	e := math.Exp(t)
	return e / (1 + e)
}

// CVSplit is one train/test partition of a cross-validation, as indices
// into the samples.
type CVSplit struct {
	Train, Test []int
}

// StratifiedShuffleSplit draws n random train/test partitions of the
// samples with labels y (0 or 1), each with ⌈testFrac·len(y)⌉ test samples
// and the rest for training, both keeping the class proportions, as
// scikit-learn's StratifiedShuffleSplit does (its class allocation: each
// class gets the floor of its share and the remaining places go to the
// classes with the largest fractional parts). The random stream is rng's,
// not numpy's, so the partitions themselves differ from scikit-learn's.
func StratifiedShuffleSplit(y []int, n int, testFrac float64, rng *rand.Rand) ([]CVSplit, error) {
	if n < 1 || !(testFrac > 0 && testFrac < 1) {
		return nil, fmt.Errorf("eval: StratifiedShuffleSplit: %d splits with test fraction %v", n, testFrac)
	}
	var byClass [2][]int
	for i, v := range y {
		if v != 0 && v != 1 {
			return nil, fmt.Errorf("eval: StratifiedShuffleSplit: label %d at %d: %w", v, i, ErrShape)
		}
		byClass[v] = append(byClass[v], i)
	}
	total := len(y)
	nTest := int(math.Ceil(testFrac * float64(total)))
	nTrain := total - nTest
	if nTest < 2 || nTrain < 2 || len(byClass[0]) < 2 || len(byClass[1]) < 2 {
		return nil, fmt.Errorf("eval: StratifiedShuffleSplit: %d samples (%d and %d per class) "+
			"cannot be split %d/%d keeping both classes on both sides: %w",
			total, len(byClass[0]), len(byClass[1]), nTrain, nTest, ErrTooFew)
	}
	counts := []int{len(byClass[0]), len(byClass[1])}
	out := make([]CVSplit, n)
	for s := range out {
		testPer := approximateMode(counts, nTest, rng)
		left := []int{counts[0] - testPer[0], counts[1] - testPer[1]}
		trainPer := approximateMode(left, nTrain, rng)
		var sp CVSplit
		for c := range 2 {
			perm := slices.Clone(byClass[c])
			rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
			sp.Test = append(sp.Test, perm[:testPer[c]]...)
			sp.Train = append(sp.Train, perm[testPer[c]:testPer[c]+trainPer[c]]...)
		}
		slices.Sort(sp.Test)
		slices.Sort(sp.Train)
		out[s] = sp
	}
	return out, nil
}

// approximateMode allocates k draws to classes in proportion to counts:
// floors first, then one more to the classes with the largest fractional
// parts, ties broken at random (scikit-learn's _approximate_mode).
func approximateMode(counts []int, k int, rng *rand.Rand) []int {
	total := 0
	for _, c := range counts {
		total += c
	}
	out := make([]int, len(counts))
	frac := make([]float64, len(counts))
	given := 0
	for i, c := range counts {
		v := float64(c) * float64(k) / float64(total)
		out[i] = int(math.Floor(v))
		frac[i] = v - math.Floor(v)
		given += out[i]
	}
	order := rng.Perm(len(counts))
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case frac[a] > frac[b]:
			return -1
		case frac[a] < frac[b]:
			return 1
		}
		return 0
	})
	for _, i := range order {
		if given >= k {
			break
		}
		if out[i] < counts[i] {
			out[i]++
			given++
		}
	}
	return out
}

// CrossValidateLogReg fits FitLogReg1D(c) on each split's training samples
// and returns its accuracy on the split's test samples.
func CrossValidateLogReg(x []float64, y []int, splits []CVSplit, c float64) ([]float64, []LogReg, error) {
	if len(x) != len(y) {
		return nil, nil, fmt.Errorf("eval: CrossValidateLogReg: %d points, %d labels: %w", len(x), len(y), ErrShape)
	}
	acc := make([]float64, len(splits))
	models := make([]LogReg, len(splits))
	for s, sp := range splits {
		if len(sp.Test) == 0 {
			return nil, nil, fmt.Errorf("eval: CrossValidateLogReg: split %d has no test samples: %w", s, ErrTooFew)
		}
		xs, ys := make([]float64, len(sp.Train)), make([]int, len(sp.Train))
		for k, i := range sp.Train {
			if i < 0 || i >= len(x) {
				return nil, nil, fmt.Errorf("eval: CrossValidateLogReg: split %d index %d out of range: %w", s, i, ErrShape)
			}
			xs[k], ys[k] = x[i], y[i]
		}
		m, err := FitLogReg1D(xs, ys, c)
		if err != nil {
			return nil, nil, fmt.Errorf("split %d: %w", s, err)
		}
		ok := 0
		for _, i := range sp.Test {
			if i < 0 || i >= len(x) {
				return nil, nil, fmt.Errorf("eval: CrossValidateLogReg: split %d index %d out of range: %w", s, i, ErrShape)
			}
			if m.Predict(x[i]) == y[i] {
				ok++
			}
		}
		acc[s] = float64(ok) / float64(len(sp.Test))
		models[s] = m
	}
	return acc, models, nil
}
