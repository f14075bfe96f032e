package unlearn

func init() {
	mustRegister(Algorithm{Name: "finetune", Order: 20, Summary: "descent on the retain set",
		Run: runFinetune, UsesRetain: true, Epochs: true, Augments: true, EpochExamples: retainOnly,
		Defaults: func(c *Config) { fillInt(&c.Epochs, 5); fillFloat(&c.LR, 0.01) }})
}

// runFinetune trains the masked elements on the retain set only.
func runFinetune(r *Runner) error {
	e, err := r.TrainingEngine()
	if err != nil {
		return err
	}
	defer e.Close()
	r.NoteAfter(r.FinetuneNote)
	if err := r.Descend(e, r.Cosine(0.01), nil); err != nil {
		return err
	}
	return r.WriteBack(e)
}
