package unlearn

import (
	"strings"

	"github.com/unlearn-tool/unlearn/train/autodiff"
)

func init() {
	mustRegister(Algorithm{Name: "rft", Order: 10, Summary: "reset masked elements, finetune them and the classifier on " +
		"the retain set (DEL)",
		Run: runRFT, UsesRetain: true, Epochs: true, TrainsClassifier: true, Augments: true, EpochExamples: retainOnly,
		Defaults: func(c *Config) { fillInt(&c.Epochs, 10); fillFloat(&c.LR, 0.03) }})
}

// runRFT is Reset-and-Finetune, DEL's unlearning step: masked elements are
// re-initialised as PyTorch initialises a fresh layer, then the masked
// elements and the whole classifier layer are finetuned on the retain set.
func runRFT(r *Runner) error {
	cls, err := r.Neurons().Classifier(r.Input().Classifier)
	if err != nil {
		return err
	}
	whole := map[string]bool{}
	var names []string
	for _, m := range cls.Members {
		whole[m.Param.Name] = true
		names = append(names, m.Param.Name)
	}
	e, err := r.Engine(EngineOptions{BN: autodiff.BNTraining, Whole: whole})
	if err != nil {
		return err
	}
	defer e.Close()
	r.NoteMask()
	// The auto schedule trains until the test accuracy is back (or says
	// it is not); a fixed recipe is warned.
	if r.Config().Schedule != ScheduleAuto {
		if w := emptiedLayers(r.Neurons(), r.Input().Mask, cls); w != nil {
			r.Warn("%s", w)
		}
	}
	n, err := r.Reset(e)
	if err != nil {
		return err
	}
	r.RecordReset(n)
	r.Note("reset %d masked elements to a fresh PyTorch initialisation (Kaiming-uniform a=√5 weights, U(±1/√fan_in) "+
		"biases, normalization scale 1 and shift 0)", n)
	r.Note("classifier layer %s (%s) trained whole, inside the mask or not", cls.Name, strings.Join(names, ", "))
	r.NoteBN(e)
	r.NoteAfter(r.FinetuneNote)
	if err := r.Descend(e, r.Cosine(0.01), nil); err != nil {
		return err
	}
	return r.WriteBack(e)
}
