package unlearn

import (
	"fmt"
	"math"

	"github.com/unlearn-tool/unlearn/train"
	"github.com/unlearn-tool/unlearn/train/autodiff"
)

func init() {
	mustRegister(Algorithm{Name: "iu", Order: 90, Summary: "influence unlearning: one WoodFisher Newton step " +
		"(no training)",
		Run: runIU, UsesForget: true, UsesRetain: true, NoAugment: "it does not train on batches",
		Settings: []Setting{
			{Name: "iu-alpha", Field: "IU.Alpha", Default: 3e-4, Help: "iu's step scale"},
			{Name: "iu-damping", Field: "IU.Damping", Default: 1000.0, Help: "iu's WoodFisher damping N"},
			{Name: "iu-samples", Field: "IU.Samples", Default: 0, Help: "retain examples that build iu's " +
				"inverse-Fisher approximation (0: the damping + 2)"}},
		Check: func(c Config) error {
			if u := c.IU; u.Damping <= 0 || u.Samples < 0 || !(u.Alpha > 0) || math.IsInf(u.Alpha, 0) {
				return fmt.Errorf("%w: IU settings %+v", ErrInput, u)
			}
			return nil
		}})
}

// IUConfig holds influence unlearning's knobs (SalUn's wfisher, after Jia et
// al., "Model Sparsity Can Simplify Machine Unlearning", NeurIPS 2023).
type IUConfig struct {
	// Alpha scales the Newton-style step θ ← θ + Alpha·H⁻¹v [3e-4; it
	// depends on the model's gradient scale, see the package documentation].
	Alpha float64
	// Damping is the N of the WoodFisher recursion (1/(N + gᵀo)) [1000].
	Damping float64
	// Samples is the number of retain examples (taken in order, one at a
	// time) that build the inverse-Fisher approximation [Damping+2: the
	// reference loop stops after index N+1].
	Samples int
}

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
func runIU(r *Runner) error {
	e, err := r.Engine(EngineOptions{BN: autodiff.BNInference, All: true})
	if err != nil {
		return err
	}
	defer e.Close()
	r.NoteMask()
	params := e.Params()
	nF, nR := len(r.Input().Forget), len(r.Input().Retain)
	gF, err := r.GradSum(e, r.Input().Forget, "gradients-forget")
	if err != nil {
		return err
	}
	gR, err := r.GradSum(e, r.Input().Retain, "gradients-retain")
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
	samples := r.Config().IU.Samples
	if samples == 0 {
		samples = int(r.Config().IU.Damping) + 2 // the reference stops after index N+1
	}
	samples = min(samples, nR)
	k := gF
	if err := woodFisher(r, e, k, gR, samples); err != nil { // gR is reused as the o vector
		return err
	}
	changed := applyStep(params, k, float32(r.Config().IU.Alpha))
	if err := CheckFiniteData(params); err != nil {
		return fmt.Errorf("%w (lower IU alpha)", err)
	}
	r.Note("IU (WoodFisher): gradients over %d forget and %d retain examples (inference mode, batches of %d); "+
		"inverse-Fisher recursion over %d retain examples one at a time, damping N = %g; step θ += "+
		"%g·H⁻¹(g_F − g_R) on %d "+
		"masked elements",
		nF, nR, r.Config().BatchSize, samples, r.Config().IU.Damping, r.Config().IU.Alpha, changed)
	return r.WriteBack(e)
}

// woodFisher turns k = v into k ≈ H⁻¹v by the reference's recursion (step
// 3 of runIU) over the first samples retain examples, one at a time, with
// o (as long as k) as its second vector.
func woodFisher(r *Runner, e *train.Engine, k, o [][]float32, samples int) error {
	params := e.Params()
	N := r.Config().IU.Damping
	one := []int{0}
	for s := 0; s < samples; s++ {
		if err := r.Context().Err(); err != nil {
			return err
		}
		one[0] = r.Input().Retain[s]
		out, err := LossStep(e, r.Train(), one, nil, 1, "woodfisher")
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
		r.Report(Progress{Phase: "woodfisher", Step: s + 1, Steps: samples, Loss: out.Loss})
	}
	return nil
}

// applyStep adds alpha·k to the masked elements of the parameters that are
// not frozen (step 4 of runIU) and returns how many it changed.
func applyStep(params []*train.Param, k [][]float32, alpha float32) int {
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
	return changed
}
