package unlearn

import (
	"fmt"
)

func init() {
	mustRegister(Algorithm{Name: "neggrad", Order: 30, Summary: "ascent on the forget set",
		Run: runNegGrad, UsesForget: true, Epochs: true, Augments: true,
		Defaults: func(c *Config) { fillInt(&c.Epochs, 1); fillFloat(&c.LR, 1e-3) }})
}

// runNegGrad is gradient ascent on the forget set: per-example weights −1,
// one pass over the forget set per epoch (SalUn's GA), constant learning
// rate.
func runNegGrad(r *Runner) error {
	e, err := r.TrainingEngine()
	if err != nil {
		return err
	}
	defer e.Close()
	r.NoteAfter(func() string {
		return fmt.Sprintf("gradient ascent on %d forget examples %s: SGD lr %.4g (constant) momentum %g weight decay %g, "+
			"batch %d",
			len(r.Input().Forget), r.TrainedFor(), r.Rate(), r.Config().Momentum, r.Config().WeightDecay, r.Config().BatchSize)
	})
	idx := r.Input().Forget
	order := r.Rand(streamForget)
	sel := make([]int, 0, r.Config().BatchSize)
	err = r.Fit(Loop{
		Engine: e, Optimizer: r.Optimizer(), Epochs: r.Config().Epochs, LR: r.Constant(),
		Epoch: func(ep int) (int, StepFunc, error) {
			batches := TrainBatches(len(idx), r.Config().BatchSize, order)
			return len(batches), func(s int) (Step, error) {
				sel = Pick(sel, idx, batches[s])
				return LossStep(e, r.Train(), sel, r.Augmenter(), -1, "ascent")
			}, nil
		},
	})
	if err != nil {
		return err
	}
	return r.WriteBack(e)
}
