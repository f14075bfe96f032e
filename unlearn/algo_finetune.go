package unlearn

import (
	"fmt"

	"github.com/unlearn-tool/unlearn/train/autodiff"
)

func init() {
	mustRegister(Algorithm{Name: "finetune", Order: 20, Summary: "descent on the retain set",
		Run: runFinetune, UsesRetain: true, Epochs: true, Augments: true, EpochExamples: retainOnly,
		Defaults: func(c *Config) { fillInt(&c.Epochs, 5); fillFloat(&c.LR, 0.01) }})
}

// runFinetune trains the masked elements on the retain set only.
func runFinetune(r *Runner) error {
	e, err := r.Engine(EngineOptions{BN: autodiff.BNTraining})
	if err != nil {
		return err
	}
	defer e.Close()
	r.NoteMask()
	r.NoteBN(e)
	r.NoteAfter(func() string {
		return fmt.Sprintf("finetuned on %d retain examples %s: SGD lr %.4g momentum %g weight decay %g, cosine to 0.01·lr per epoch, batch %d",
			len(r.Input().Retain), r.TrainedFor(), r.Rate(), r.Config().Momentum, r.Config().WeightDecay, r.Config().BatchSize)
	})
	if err := r.Descend(e, r.Cosine(0.01), nil); err != nil {
		return err
	}
	return r.WriteBack(e)
}
