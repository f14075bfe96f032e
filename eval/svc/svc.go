package svc

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/unlearn-tool/unlearn/internal/par"
)

// Defaults, as scikit-learn's SVC(C=3, gamma='auto') in SalUn's SVC_MIA.
const (
	DefaultC          = 3.0
	DefaultTol        = 1e-3
	DefaultCacheBytes = 200 << 20 // scikit-learn's cache_size=200 (MB)
)

// Options configure Fit. The zero value gives the SalUn/scikit-learn
// settings: C = 3, γ = 1/n_features, Tol = 1e-3, a 200 MB kernel cache and
// shrinking on.
type Options struct {
	// C is the box constraint; 0 means DefaultC.
	C float64
	// Gamma is the RBF width γ in exp(−γ‖u−v‖²); 0 means 1/n_features
	// (scikit-learn's gamma='auto').
	Gamma float64
	// Tol is the stopping tolerance on the maximal KKT violation
	// (LIBSVM's -e, scikit-learn's tol); 0 means DefaultTol.
	Tol float64
	// CacheBytes is the kernel-row cache budget in bytes; 0 means
	// DefaultCacheBytes. The cache always holds at least two full rows.
	CacheBytes int64
	// NoShrinking turns LIBSVM's shrinking heuristic off (scikit-learn's
	// shrinking=False). Shrinking is on by default.
	NoShrinking bool
	// KernelFloat64 stores cached kernel values in float64. By default they
	// are rounded to float32 as in LIBSVM (its Qfloat), which makes the
	// solver follow scikit-learn's iterations exactly and fits twice as
	// many rows in the cache; float64 is more precise but no closer to
	// scikit-learn, whose results are what the MIA score is compared with.
	KernelFloat64 bool
	// MaxIter caps the SMO iterations; 0 means max(10⁷, 100·n), LIBSVM's
	// own guard (scikit-learn's max_iter=-1 is this in practice). Reaching
	// the cap makes Fit return the model so far together with ErrMaxIter.
	MaxIter int
}

// Model is a fitted binary RBF SVC.
type Model struct {
	d       int
	gamma   float64
	rho     float64   // LIBSVM's ρ: f_libsvm(x) = Σ coefᵢK(svᵢ,x) − ρ
	coef    []float64 // LIBSVM sign: yᵢαᵢ with class 0 as +1
	sv      []float64 // nSV×d row-major
	support []int     // indices into the training set
	nSup    [2]int

	iterations int
	objective  float64
}

// Fit trains on the rows of x (n points × d features) with labels y in {0, 1}.
func Fit(x [][]float64, y []int, opts Options) (*Model, error) {
	n := len(x)
	if n == 0 {
		return nil, fmt.Errorf("svc: Fit: %w", ErrEmpty)
	}
	d := len(x[0])
	flat := make([]float64, 0, n*d)
	for i, r := range x {
		if len(r) != d {
			return nil, fmt.Errorf("svc: Fit: row %d has %d features, row 0 has %d: %w", i, len(r), d, ErrShape)
		}
		flat = append(flat, r...)
	}
	return fit(flat, n, d, y, opts)
}

// FitFlat trains on x holding n points of d features row-major
// (len(x) == n·d) with labels y in {0, 1}. x is not modified.
func FitFlat(x []float64, n, d int, y []int, opts Options) (*Model, error) {
	if n < 0 || d < 0 || len(x) != n*d {
		return nil, fmt.Errorf("svc: FitFlat: len(x) = %d, want n·d = %d·%d: %w", len(x), n, d, ErrShape)
	}
	return fit(append([]float64(nil), x...), n, d, y, opts)
}

// fit owns flat (n×d) and may reorder it.
func fit(flat []float64, n, d int, y []int, opts Options) (*Model, error) {
	if n == 0 || d == 0 {
		return nil, fmt.Errorf("svc: Fit: %d points × %d features: %w", n, d, ErrEmpty)
	}
	if len(y) != n {
		return nil, fmt.Errorf("svc: Fit: %d labels for %d points: %w", len(y), n, ErrShape)
	}
	var count [2]int
	for i, v := range y {
		if v != 0 && v != 1 {
			return nil, fmt.Errorf("svc: Fit: label %d at index %d: %w", v, i, ErrLabel)
		}
		count[v]++
	}
	if count[0] == 0 || count[1] == 0 {
		return nil, fmt.Errorf("svc: Fit: all %d labels are %d: %w", n, y[0], ErrOneClass)
	}
	for i, v := range flat {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("svc: Fit: feature %d of point %d is %v: %w", i%d, i/d, v, ErrNonFinite)
		}
	}
	o, err := opts.resolve(n, d)
	if err != nil {
		return nil, err
	}

	// Group by class, class 0 first, stable: the order LIBSVM's solver sees
	// under scikit-learn. Class 0 is the internal +1 class.
	order := make([]int, 0, n)
	for c := range 2 {
		for i, v := range y {
			if v == c {
				order = append(order, i)
			}
		}
	}
	xs := make([]float64, n*d)
	ys := make([]float64, n)
	for k, i := range order {
		copy(xs[k*d:(k+1)*d], flat[i*d:(i+1)*d])
		ys[k] = 1
		if y[i] == 1 {
			ys[k] = -1
		}
	}
	ySolver := append([]float64(nil), ys...) // the solver permutes its copy

	var sol solution
	if o.KernelFloat64 {
		sol = solve[float64](xs, n, d, ySolver, o)
	} else {
		sol = solve[float32](xs, n, d, ySolver, o)
	}

	// xs was permuted by the solver; rebuild the grouped points from flat.
	m := &Model{d: d, gamma: o.Gamma, rho: sol.rho, iterations: sol.iterations, objective: sol.obj}
	for k, i := range order {
		a := sol.alpha[k]
		if a == 0 {
			continue
		}
		m.coef = append(m.coef, ys[k]*a)
		m.sv = append(m.sv, flat[i*d:(i+1)*d]...)
		m.support = append(m.support, i)
		m.nSup[y[i]]++
	}
	if !sol.converged {
		return m, fmt.Errorf("svc: Fit: %d iterations without reaching tol %g: %w", sol.iterations, o.Tol, ErrMaxIter)
	}
	return m, nil
}

func solve[T elem](x []float64, n, d int, y []float64, o Options) solution {
	q := newQMatrix[T](x, n, d, y, o.Gamma, o.CacheBytes)
	return newSMO(q, o.C, o.Tol, !o.NoShrinking).solve(o.MaxIter)
}

func (o Options) resolve(n, d int) (Options, error) {
	bad := func(name string, v float64) error {
		return fmt.Errorf("svc: Fit: %s = %v: %w", name, v, ErrOption)
	}
	if o.C == 0 {
		o.C = DefaultC
	}
	if !(o.C > 0) || math.IsInf(o.C, 0) {
		return o, bad("C", o.C)
	}
	if o.Gamma == 0 {
		o.Gamma = 1 / float64(d)
	}
	if !(o.Gamma > 0) || math.IsInf(o.Gamma, 0) {
		return o, bad("Gamma", o.Gamma)
	}
	if o.Tol == 0 {
		o.Tol = DefaultTol
	}
	if !(o.Tol > 0) || math.IsInf(o.Tol, 0) {
		return o, bad("Tol", o.Tol)
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = DefaultCacheBytes
	}
	if o.CacheBytes < 0 {
		return o, bad("CacheBytes", float64(o.CacheBytes))
	}
	if o.MaxIter == 0 {
		o.MaxIter = max(10_000_000, 100*n)
	}
	if o.MaxIter < 0 {
		return o, bad("MaxIter", float64(o.MaxIter))
	}
	return o, nil
}

// NumSV is the number of support vectors (scikit-learn's len(support_)).
func (m *Model) NumSV() int { return len(m.coef) }

// NumSupport is the number of support vectors per class
// (scikit-learn's n_support_).
func (m *Model) NumSupport() [2]int { return m.nSup }

// NumFeatures is the number of features the model was trained on.
func (m *Model) NumFeatures() int { return m.d }

// Gamma is the RBF width used.
func (m *Model) Gamma() float64 { return m.gamma }

// Support returns the training indices of the support vectors, class 0
// first (scikit-learn's support_).
func (m *Model) Support() []int { return append([]int(nil), m.support...) }

// DualCoef returns the support vectors' coefficients in scikit-learn's
// sign (dual_coef_[0]): positive for class 1.
func (m *Model) DualCoef() []float64 {
	out := make([]float64, len(m.coef))
	for i, c := range m.coef {
		out[i] = -c
	}
	return out
}

// Intercept is scikit-learn's intercept_[0] (LIBSVM's ρ).
func (m *Model) Intercept() float64 { return m.rho }

// Iterations is the number of SMO iterations Fit ran.
func (m *Model) Iterations() int { return m.iterations }

// Objective is the dual objective ½αᵀQα − eᵀα at the solution.
func (m *Model) Objective() float64 { return m.objective }

// DecisionFunction returns scikit-learn's decision_function for each row of
// x: positive means class 1. It panics if a row's length is not
// NumFeatures().
func (m *Model) DecisionFunction(x [][]float64) []float64 {
	flat := make([]float64, 0, len(x)*m.d)
	for i, r := range x {
		if len(r) != m.d {
			panic(fmt.Sprintf("svc: DecisionFunction: row %d has %d features, model has %d", i, len(r), m.d))
		}
		flat = append(flat, r...)
	}
	return m.DecisionFunctionFlat(flat)
}

// DecisionFunctionFlat is DecisionFunction on row-major points; it panics if
// len(x) is not a multiple of NumFeatures().
func (m *Model) DecisionFunctionFlat(x []float64) []float64 {
	if len(x)%m.d != 0 {
		panic(fmt.Sprintf("svc: DecisionFunctionFlat: len(x) = %d is not a multiple of %d features", len(x), m.d))
	}
	n := len(x) / m.d
	// Duplicate points (0/1 or saturated MIA features) are computed once.
	first := make([]int, n) // first[p]: earliest row equal to row p
	uniq := make([]int, 0, n)
	seen := make(map[string]int)
	key := make([]byte, 8*m.d)
	for p := range n {
		for k, v := range x[p*m.d : (p+1)*m.d] {
			binary.LittleEndian.PutUint64(key[8*k:], math.Float64bits(v))
		}
		if f, ok := seen[string(key)]; ok {
			first[p] = f
			continue
		}
		seen[string(key)] = p
		first[p] = p
		uniq = append(uniq, p)
	}
	out := make([]float64, n)
	work := func(lo, hi int) {
		for _, p := range uniq[lo:hi] {
			out[p] = m.decision(x[p*m.d : (p+1)*m.d])
		}
	}
	nu := len(uniq)
	workers := 0 // GOMAXPROCS
	if nu*len(m.coef) < 1<<16 {
		workers = 1
	}
	par.Range(nu, workers, work)
	for p, f := range first {
		out[p] = out[f]
	}
	return out
}

// decision is scikit-learn's decision value −(Σ coefᵢK(svᵢ,x) − ρ), the sum
// taken in support-vector order as LIBSVM does.
func (m *Model) decision(p []float64) float64 {
	var s float64
	if m.d == 1 {
		v := p[0]
		for i, c := range m.coef {
			t := m.sv[i] - v
			s += c * math.Exp(-m.gamma*t*t)
		}
	} else {
		d := m.d
		for i, c := range m.coef {
			s += c * rbf(m.sv[i*d:(i+1)*d], p, m.gamma)
		}
	}
	return -(s - m.rho)
}

// Predict returns the predicted label (0 or 1) of each row of x. It panics
// if a row's length is not NumFeatures().
func (m *Model) Predict(x [][]float64) []int {
	return labels(m.DecisionFunction(x))
}

// PredictFlat is Predict on row-major points.
func (m *Model) PredictFlat(x []float64) []int {
	return labels(m.DecisionFunctionFlat(x))
}

// labels maps decision values to classes: LIBSVM gives class 0 only for a
// strictly positive internal value, i.e. a strictly negative one here.
func labels(dec []float64) []int {
	out := make([]int, len(dec))
	for i, v := range dec {
		if v >= 0 {
			out[i] = 1
		}
	}
	return out
}
