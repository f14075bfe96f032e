package unlearn

import (
	"sort"

	"github.com/unlearn-tool/unlearn/train"
	"github.com/unlearn-tool/unlearn/train/autodiff"
)

// runSSD is Selective Synaptic Dampening (Foster et al., AAAI 2024), as its
// code computes it (github.com/if-loops/selective-synaptic-dampening,
// ssd.py ParameterPerturber, reused by DEL's reference utils.py), with no
// training:
//
//   - importance of a parameter element over a data set: the mean over
//     mini-batches B of g_B², g_B the gradient of the batch-mean
//     cross-entropy, the model in inference mode (calc_importance);
//   - imp_F over the forget set, imp_D over the full training set
//     (forget ∪ retain);
//   - every element with imp_F > Alpha·imp_D is multiplied by
//     min(1, Lambda·imp_D/imp_F) (modify_weight, lower_bound 1, exponent 1).
//
// Batches of Config.BatchSize are taken in order (the forget set as given,
// the full set in index order), which makes the result independent of the
// seed; the reference shuffles, which changes only which examples share a
// batch. Arithmetic is float32 like the reference's. Only masked elements
// are considered.
func runSSD(r *run) error {
	e, err := r.engine(engineOpts{bn: autodiff.BNInference})
	if err != nil {
		return err
	}
	defer e.Close()
	r.noteMask()
	full := append(append([]int(nil), r.in.Forget...), r.in.Retain...)
	sort.Ints(full)
	impF, err := r.importance(e, r.in.Forget, "importance-forget")
	if err != nil {
		return err
	}
	impD, err := r.importance(e, full, "importance-full")
	if err != nil {
		return err
	}
	alpha, lambda := float32(r.cfg.SSD.Alpha), float32(r.cfg.SSD.Lambda)
	dampened, zeroed := 0, 0
	for _, p := range e.Params() {
		if p.Frozen {
			continue
		}
		f, d := impF[p.Name], impD[p.Name]
		for i := range p.Data {
			if p.Mask != nil && !p.Mask[i] {
				continue
			}
			if !(f[i] > d[i]*alpha) {
				continue
			}
			w := d[i] * lambda / f[i]
			if w > 1 {
				w = 1
			}
			p.Data[i] *= w
			dampened++
			if w == 0 {
				zeroed++
			}
		}
	}
	if err := checkFiniteData(e.Params()); err != nil {
		return err
	}
	r.note("SSD: importances (mean squared batch gradients, inference mode) over %d forget and %d training examples in batches of %d; %d masked elements with imp_F > %g·imp_D dampened by min(1, %g·imp_D/imp_F) (%d of them to 0)",
		len(r.in.Forget), len(full), r.cfg.BatchSize, dampened, r.cfg.SSD.Alpha, r.cfg.SSD.Lambda, zeroed)
	return r.writeBack(e)
}

// importance returns, per engine parameter, the mean over batches of idx
// (in order) of the squared gradient of the batch-mean cross-entropy.
func (r *run) importance(e *train.Engine, idx []int, phase string) (map[string][]float32, error) {
	imp := map[string][]float32{}
	for _, p := range e.Params() {
		if !p.Frozen {
			imp[p.Name] = make([]float32, len(p.Data))
		}
	}
	batches := 0
	err := r.gradBatches(e, idx, phase, func(int) {
		batches++
		for _, p := range e.Params() {
			if a := imp[p.Name]; a != nil {
				for i, g := range p.Grad {
					a[i] += g * g
				}
			}
		}
	})
	if err != nil {
		return nil, err
	}
	n := float32(batches)
	for _, a := range imp {
		for i := range a {
			a[i] /= n
		}
	}
	return imp, nil
}
