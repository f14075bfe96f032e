package unlearn

import (
	"fmt"
	"sort"

	"github.com/unlearn-tool/unlearn/train/autodiff"
)

func init() {
	mustRegister(Algorithm{Name: "ssd", Order: 80, Summary: "selective synaptic dampening (no training)",
		Run: runSSD, UsesForget: true, NoAugment: "it does not train on batches",
		Settings: []Setting{
			{Name: "ssd-alpha", Field: "SSD.Alpha", Default: 100.0, Help: "ssd's selection weighting: an element is " +
				"dampened when its forget-set importance exceeds this times its full-set importance"},
			{Name: "ssd-lambda", Field: "SSD.Lambda", Default: 1.0, Help: "ssd's dampening constant"}},
		Check: func(c Config) error {
			if c.SSD.Alpha <= 0 || c.SSD.Lambda <= 0 {
				return fmt.Errorf("%w: SSD settings %+v", ErrInput, c.SSD)
			}
			return nil
		}})
}

// SSDConfig holds Selective Synaptic Dampening's knobs (Foster et al., AAAI
// 2024; github.com/if-loops/selective-synaptic-dampening).
type SSDConfig struct {
	// Alpha is the selection weighting: an element is dampened when its
	// forget-set importance exceeds Alpha times its full-set importance
	// [100; SSD's paper uses 10, see the package documentation].
	Alpha float64
	// Lambda is the dampening constant: the element is multiplied by
	// min(1, Lambda·imp_D/imp_F) [1].
	Lambda float64
}

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
func runSSD(r *Runner) error {
	e, err := r.Engine(EngineOptions{BN: autodiff.BNInference})
	if err != nil {
		return err
	}
	defer e.Close()
	r.NoteMask()
	full := append(append([]int(nil), r.Input().Forget...), r.Input().Retain...)
	sort.Ints(full)
	impF, err := r.Importance(e, r.Input().Forget, "importance-forget")
	if err != nil {
		return err
	}
	impD, err := r.Importance(e, full, "importance-full")
	if err != nil {
		return err
	}
	alpha, lambda := float32(r.Config().SSD.Alpha), float32(r.Config().SSD.Lambda)
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
	if err := CheckFiniteData(e.Params()); err != nil {
		return err
	}
	r.Note("SSD: importances (mean squared batch gradients, inference mode) over %d forget and %d training examples in "+
		"batches of %d; %d masked elements with imp_F > %g·imp_D dampened by min(1, %g·imp_D/imp_F) (%d of them to 0)",
		len(r.Input().Forget), len(full), r.Config().BatchSize, dampened, r.Config().SSD.Alpha, r.Config().SSD.Lambda, zeroed)
	return r.WriteBack(e)
}
