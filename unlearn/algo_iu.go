package unlearn

import (
	"fmt"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/train"
	"github.com/unlearn-tool/unlearn/train/autodiff"
)

// runIU is influence unlearning as SalUn's Wfisher computes it
// (github.com/OPTML-Group/Unlearn-Saliency, Classification/unlearn/
// Wfisher.py; DEL's reference utils.py has the same code), with the model in
// inference mode and no training:
//
//  1. g_F = Σ_{i∈F} ∇ℓ_i / (n_F + n_R) and g_R = Σ_{i∈R} ∇ℓ_i · n_F /
//     ((n_F + n_R)·n_R), accumulated from batch-mean gradients times the
//     batch size (batches of Config.BatchSize in the given order);
//  2. v = g_F − g_R, the change of the retain-weighted loss gradient when
//     the forget set is dropped;
//  3. k ≈ H⁻¹v from the reference's WoodFisher-style recursion over
//     per-example retain gradients g (batch size 1, the retain set in its
//     given order): o ← g for the first example, then
//     t = o·g; k ← k − (k·g)/(N + t)·o; o ← o − t/(N + t)·o, with N =
//     IU.Damping; the reference stops after N+2 examples (IU.Samples);
//  4. θ ← θ + Alpha·k on the masked elements (SalUn's apply_perturb with
//     a mask).
//
// Gradients cover every trainable parameter, masked or not, as in SalUn
// (the dot products run over the whole parameter vector); only masked
// elements change. Vectors are float32 like the reference's; dot products
// accumulate in float64.
func runIU(r *run) error {
	e, err := r.engine(engineOpts{bn: autodiff.BNInference, all: true})
	if err != nil {
		return err
	}
	defer e.Close()
	r.noteMask()
	params := e.Params()
	nF, nR := len(r.in.Forget), len(r.in.Retain)
	gF, err := r.gradSum(e, r.in.Forget, "gradients-forget")
	if err != nil {
		return err
	}
	gR, err := r.gradSum(e, r.in.Retain, "gradients-retain")
	if err != nil {
		return err
	}
	// k = v = g_F − g_R, stored in gF.
	sr := float32(float64(nF) / (float64(nF+nR) * float64(nR)))
	sf := float32(nF + nR)
	for j := range gF {
		for i := range gF[j] {
			gF[j][i] = gF[j][i]/sf - gR[j][i]*sr
		}
	}
	k := gF
	o := gR // reused as the o vector
	samples := min(r.cfg.IU.Samples, nR)
	N := r.cfg.IU.Damping
	one := []int{0}
	for s := 0; s < samples; s++ {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		one[0] = r.in.Retain[s]
		out, err := lossStep(e, r.split, one, nil, 1, "woodfisher")
		if err != nil {
			return fmt.Errorf("woodfisher example %d: %w", s+1, err)
		}
		if err := train.CheckFinite(params); err != nil {
			return fmt.Errorf("woodfisher example %d: %w", s+1, err)
		}
		if s == 0 {
			for j, p := range params {
				copy(o[j], p.Grad)
			}
		} else {
			var t, kg float64
			for j, p := range params {
				for i, g := range p.Grad {
					t += float64(o[j][i]) * float64(g)
					kg += float64(k[j][i]) * float64(g)
				}
			}
			ck := float32(kg / (N + t))
			co := float32(t / (N + t))
			for j := range params {
				kj, oj := k[j], o[j]
				for i := range kj {
					kj[i] -= ck * oj[i]
					oj[i] -= co * oj[i]
				}
			}
		}
		r.progress(Progress{Phase: "woodfisher", Step: s + 1, Steps: samples, Loss: out.loss})
	}
	alpha := float32(r.cfg.IU.Alpha)
	changed := 0
	for j, p := range params {
		if p.Frozen {
			continue
		}
		for i := range p.Data {
			if p.Mask != nil && !p.Mask[i] {
				continue
			}
			p.Data[i] += alpha * k[j][i]
			changed++
		}
	}
	if err := checkFiniteData(params); err != nil {
		return fmt.Errorf("%w (lower IU alpha)", err)
	}
	r.note("IU (WoodFisher): gradients over %d forget and %d retain examples (inference mode, batches of %d); inverse-Fisher recursion over %d retain examples one at a time, damping N = %g; step θ += %g·H⁻¹(g_F − g_R) on %d masked elements",
		nF, nR, r.cfg.BatchSize, samples, N, r.cfg.IU.Alpha, changed)
	return r.writeBack(e)
}

// gradSum returns, per engine parameter (in e.Params() order), Σ over
// batches of idx (in order) of the batch-mean gradient times the batch size,
// i.e. the sum of the per-example gradients.
func (r *run) gradSum(e *train.Engine, idx []int, phase string) ([][]float32, error) {
	params := e.Params()
	sum := make([][]float32, len(params))
	for j, p := range params {
		sum[j] = make([]float32, len(p.Data))
	}
	err := r.gradBatches(e, idx, phase, func(n int) {
		for j, p := range params {
			for i, g := range p.Grad {
				sum[j][i] += g * float32(n)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return sum, nil
}

// gradBatches runs forward and backward on the batches of idx in order
// (batch-mean cross-entropy, the model as the engine was built), checks the
// gradients are finite, reports progress, and calls use with the batch size
// while the engine's gradients hold that batch's.
func (r *run) gradBatches(e *train.Engine, idx []int, phase string, use func(n int)) error {
	batches := data.Batches(len(idx), r.cfg.BatchSize, false, nil)
	sel := make([]int, 0, r.cfg.BatchSize)
	for s, b := range batches {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		sel = pick(sel, idx, b)
		out, err := lossStep(e, r.split, sel, nil, 1, phase)
		if err != nil {
			return fmt.Errorf("%s batch %d: %w", phase, s+1, err)
		}
		if err := train.CheckFinite(e.Params()); err != nil {
			return fmt.Errorf("%s batch %d: %w", phase, s+1, err)
		}
		use(len(sel))
		r.progress(Progress{Phase: phase, Step: s + 1, Steps: len(batches), Loss: out.loss})
	}
	return nil
}
