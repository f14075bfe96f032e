package score

import (
	"fmt"
	"math"

	"github.com/unlearn-tool/unlearn/internal/par"
)

// KLoMOptions sets the histogram KLoM compares. The zero value means the
// defaults of the KLoM reference code (data-unlearning-bench's
// compute_binned_KL_div): 20 bins, values clipped to [−100, 100], a floor
// of 1e-5 on the retrained probability of every bin the unlearned
// histogram occupies, and np.digitize's counting, which leaves out every
// value equal to the top edge.
type KLoMOptions struct {
	// Bins is the number of equal-width bins over the combined range of both
	// samples (default 20).
	Bins int
	// Clip bounds the margins to [−Clip, Clip] before binning (default 100).
	Clip float64
	// Floor replaces a retrained bin probability below it wherever the
	// unlearned histogram has mass (default 1e-5); the floored histogram is
	// renormalised.
	Floor float64
	// CloseLastBin counts values equal to the top edge of the last bin in
	// that bin (numpy.histogram's convention), so every model counts; the
	// tool did this before issue 47 and its KLoM then differs from
	// published numbers. By default values equal to the top edge (the
	// largest value of the two samples) are left out, as the reference
	// code's np.digitize counting leaves them out.
	CloseLastBin bool
}

func (o KLoMOptions) withDefaults() (KLoMOptions, error) {
	if o.Bins == 0 {
		o.Bins = 20
	}
	if o.Clip == 0 {
		o.Clip = 100
	}
	if o.Floor == 0 {
		o.Floor = 1e-5
	}
	if o.Bins < 1 || !(o.Clip > 0) || math.IsInf(o.Clip, 0) || !(o.Floor > 0 && o.Floor < 1) {
		return o, fmt.Errorf("%w: KLoM bins %d, clip %v, floor %v", ErrOptions, o.Bins, o.Clip, o.Floor)
	}
	return o, nil
}

// histogram counts values (already clipped) in bins equal-width bins over
// [lo, hi]; the edges are numpy.linspace(lo, hi, bins+1). Bins are
// [e_i, e_{i+1}); a value equal to the top edge counts in the last bin only
// when closeLast is set.
func histogram(values []float64, edges []float64, closeLast bool) []float64 {
	bins := len(edges) - 1
	h := make([]float64, bins)
	top := edges[bins]
	for _, v := range values {
		if v >= top {
			if closeLast && v == top {
				h[bins-1]++
			}
			continue
		}
		// The last edge ≤ v (edges ascend; v ≥ edges[0] by construction).
		lo, hi := 0, bins // edges[lo] ≤ v < edges[hi]
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			if edges[mid] <= v {
				lo = mid
			} else {
				hi = mid
			}
		}
		h[lo]++
	}
	return h
}

// KLoM returns KL(P_u ‖ P_r) in nats between the histograms of one
// example's margin under the unlearned models (P_u) and under the retrained
// models (P_r): 0 when the histograms agree, larger the more the unlearned
// margins sit where the retrained ones do not. The package documentation
// gives the binning. The two samples may differ in size; each needs at least
// one value.
func KLoM(unlearned, retrained []float64, opt KLoMOptions) (float64, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return 0, err
	}
	if len(unlearned) == 0 || len(retrained) == 0 {
		return 0, fmt.Errorf("%w: %d unlearned and %d retrained margins", ErrTooFewModels, len(unlearned), len(retrained))
	}
	for _, s := range [][]float64{unlearned, retrained} {
		for _, v := range s {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, fmt.Errorf("%w: margin %v", ErrNonFinite, v)
			}
		}
	}
	return klom(unlearned, retrained, opt), nil
}

func klom(unlearned, retrained []float64, opt KLoMOptions) float64 {
	clip := func(s []float64) []float64 {
		c := make([]float64, len(s))
		for i, v := range s {
			c[i] = min(max(v, -opt.Clip), opt.Clip)
		}
		return c
	}
	u, r := clip(unlearned), clip(retrained)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range [][]float64{u, r} {
		for _, v := range s {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if lo >= hi {
		hi = lo + 1
	}
	edges := linspaceNumPy(lo, hi, opt.Bins+1)
	hu := histogram(u, edges, opt.CloseLastBin)
	hr := histogram(r, edges, opt.CloseLastBin)
	if sum(hu) == 0 {
		// Every unlearned value sits on the top edge (all of them equal
		// and above some retrained value, e.g. all clipped at +100): the
		// reference's normalisation divides 0 by 0 and returns NaN. Count
		// the top edge in the last bin for this example instead, so the
		// unlearned point mass is compared with the retrained histogram.
		hu = histogram(u, edges, true)
		hr = histogram(r, edges, true)
	}
	normalize := func(h []float64) {
		if s := sum(h); s > 0 {
			for i := range h {
				h[i] /= s
			}
		}
	}
	normalize(hu)
	normalize(hr)
	for i := range hr {
		if hu[i] > 0 {
			hr[i] = max(hr[i], opt.Floor)
		}
	}
	normalize(hr)
	var kl float64
	for i, p := range hu {
		if p > 0 {
			kl += p * math.Log(p/hr[i])
		}
	}
	return max(kl, 0)
}

func sum(s []float64) float64 {
	var t float64
	for _, v := range s {
		t += v
	}
	return t
}

// KLoMs applies KLoM to every example of [model][example] margins (the
// unlearned and retrained sides may have different numbers of models, each
// at least one). workers bounds the parallelism (≤ 0: GOMAXPROCS).
func KLoMs(unlearned, retrained [][]float64, opt KLoMOptions, workers int) ([]float64, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	if len(unlearned) == 0 || len(retrained) == 0 {
		return nil, fmt.Errorf("%w: %d unlearned and %d retrained models", ErrTooFewModels, len(unlearned), len(retrained))
	}
	examples := len(unlearned[0])
	for side, rows := range [][][]float64{unlearned, retrained} {
		for m, row := range rows {
			if len(row) != examples {
				return nil, fmt.Errorf("%w: model %d of side %d has %d margins, model 0 of the unlearned side %d",
					ErrShape, m, side, len(row), examples)
			}
			for j, v := range row {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, fmt.Errorf("%w: model %d, example %d: margin %v", ErrNonFinite, m, j, v)
				}
			}
		}
	}
	out := make([]float64, examples)
	par.Range(examples, workers, func(lo, hi int) {
		u, r := make([]float64, len(unlearned)), make([]float64, len(retrained))
		for j := lo; j < hi; j++ {
			for m := range unlearned {
				u[m] = unlearned[m][j]
			}
			for m := range retrained {
				r[m] = retrained[m][j]
			}
			out[j] = klom(u, r, opt)
		}
	})
	return out, nil
}
