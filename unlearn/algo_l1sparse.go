package unlearn

import (
	"fmt"
	"math"

	"github.com/unlearn-tool/unlearn/train"
)

func init() {
	mustRegister(Algorithm{Name: "l1-sparse", Order: 60, Summary: "finetune with a decaying L1 penalty",
		Run: runL1Sparse, UsesRetain: true, Epochs: true, Augments: true, EpochExamples: retainOnly,
		Defaults: func(c *Config) { fillInt(&c.Epochs, 5); fillFloat(&c.LR, 0.01) },
		Settings: []Setting{{Name: "l1", Field: "L1", Default: 7e-5,
			Help: "l1-sparse's initial L1 weight, decayed linearly to 0 over the epochs"}}})
}

// runL1Sparse is finetuning with an L1 penalty α_e·‖θ‖₁ whose weight decays
// linearly, α_e = L1·(1 − e/E) for epoch e = 0..E−1 (SalUn's FT_l1 and DEL's
// reference). The penalty covers every trainable parameter as in the
// references; its subgradient α_e·sign(θ) (0 at 0, as PyTorch's abs) is
// added in Go, and only masked elements move.
func runL1Sparse(r *Runner) error {
	e, err := r.TrainingEngine()
	if err != nil {
		return err
	}
	defer e.Close()
	r.NoteAfter(func() string {
		return fmt.Sprintf("finetuned on %d retain examples with an L1 penalty %g·(1 − "+
			"epoch/%d)·‖θ‖₁ %s: SGD lr %.4g "+
			"momentum %g weight decay %g, cosine to 0.01·lr per epoch, batch %d",
			len(r.Input().Retain), r.Config().L1, r.Config().Epochs, r.TrainedFor(), r.Rate(), r.Config().Momentum,
			r.Config().WeightDecay, r.Config().BatchSize)
	})
	// ‖θ‖₁ of the parameters outside the engine (frozen, constant).
	inEngine := map[string]bool{}
	for _, p := range e.Params() {
		inEngine[p.Name] = true
	}
	var rest float64
	for _, name := range r.Params() {
		if inEngine[name] {
			continue
		}
		v, _ := r.Input().Model.Graph.LocalValue(name).Init.Float32s()
		for _, x := range v {
			rest += math.Abs(float64(x))
		}
	}
	hook := func(ep int, params []*train.Param) float64 {
		a := r.Config().L1 * (1 - float64(ep)/float64(r.Config().Epochs))
		a32 := float32(a)
		norm := rest
		for _, p := range params {
			for i, x := range p.Data {
				norm += math.Abs(float64(x))
				if p.Frozen || a32 == 0 {
					continue
				}
				switch {
				case x > 0:
					p.Grad[i] += a32
				case x < 0:
					p.Grad[i] -= a32
				}
			}
		}
		return a * norm
	}
	if err := r.Descend(e, r.Cosine(0.01), hook); err != nil {
		return err
	}
	return r.WriteBack(e)
}
