package unlearn

import (
	"fmt"
)

func init() {
	mustRegister(Algorithm{Name: "neggrad+", Order: 40, Summary: "β·retain loss − (1−β)·forget loss",
		Run: runNegGradPlus, UsesForget: true, UsesRetain: true, Epochs: true, Augments: true,
		Defaults: func(c *Config) { fillInt(&c.Epochs, 1); fillFloat(&c.LR, 0.01) },
		Settings: []Setting{{Name: "beta", Field: "Beta", Default: 0.99,
			Help: "neggrad+'s retain weight β in [0, 1]: loss = β·retain loss − (1−β)·forget loss"}},
		Check: func(c Config) error {
			if c.Beta < 0 || c.Beta > 1 {
				return fmt.Errorf("%w: neggrad+ beta %v outside [0, 1]", ErrInput, c.Beta)
			}
			return nil
		}})
}

// runNegGradPlus minimises β·L_retain − (1−β)·L_forget: each step pairs a
// retain batch with the next forget batch (the forget batches cycle, in one
// shuffled order per epoch, as zip(retain, cycle(forget)) in the
// references). The two batches run as two forward/backward passes, so
// BatchNormalization normalises each with its own statistics as PyTorch's
// two model() calls do; the gradients are combined in Go.
func runNegGradPlus(r *Runner) error {
	e, err := r.TrainingEngine()
	if err != nil {
		return err
	}
	defer e.Close()
	beta := float32(r.Config().Beta)
	fb := float32(1 - r.Config().Beta)
	r.Note("NegGrad+: loss %g·L_retain − %g·L_forget, one retain batch and one (cycled) forget batch per step, %d "+
		"epochs over %d retain examples: SGD lr %g (constant) momentum %g weight decay %g, batch %d",
		r.Config().Beta, 1-r.Config().Beta, r.Config().Epochs, len(r.Input().Retain), r.Config().LR, r.Config().Momentum,
		r.Config().WeightDecay, r.Config().BatchSize)
	acc := map[string][]float32{}
	for _, p := range e.Params() {
		if !p.Frozen {
			acc[p.Name] = make([]float32, len(p.Grad))
		}
	}
	rorder, forder := r.Rand(streamOrder), r.Rand(streamForget)
	rsel := make([]int, 0, r.Config().BatchSize)
	fsel := make([]int, 0, r.Config().BatchSize)
	err = r.Fit(Loop{
		Engine: e, Optimizer: r.Optimizer(), Epochs: r.Config().Epochs, LR: r.Constant(),
		Epoch: func(ep int) (int, StepFunc, error) {
			rb := TrainBatches(len(r.Input().Retain), r.Config().BatchSize, rorder)
			fbs := TrainBatches(len(r.Input().Forget), r.Config().BatchSize, forder)
			return len(rb), func(s int) (Step, error) {
				rsel = Pick(rsel, r.Input().Retain, rb[s])
				out, err := LossStep(e, r.Train(), rsel, r.Augmenter(), 1, "train")
				if err != nil {
					return out, err
				}
				for _, p := range e.Params() {
					if a := acc[p.Name]; a != nil {
						for i, g := range p.Grad {
							a[i] = beta * g
						}
					}
				}
				fsel = Pick(fsel, r.Input().Forget, fbs[s%len(fbs)])
				fout, err := LossStep(e, r.Train(), fsel, r.Augmenter(), 1, "train")
				if err != nil {
					return out, err
				}
				for _, p := range e.Params() {
					if a := acc[p.Name]; a != nil {
						for i, g := range p.Grad {
							p.Grad[i] = a[i] - fb*g
						}
					}
				}
				out.Loss = r.Config().Beta*out.Loss - (1-r.Config().Beta)*fout.Loss
				return out, nil
			}, nil
		},
	})
	if err != nil {
		return err
	}
	return r.WriteBack(e)
}
