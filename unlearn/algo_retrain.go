package unlearn

import (
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/internal/textio"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/schema"
	"github.com/unlearn-tool/unlearn/train"
)

func init() {
	mustRegister(Algorithm{Name: "retrain", Order: 100, Summary: "exact unlearning: re-initialise every parameter and " +
		"train from scratch on the retain set (the train command's recipe)",
		Run: runRetrain, UsesRetain: true, Epochs: true, Augments: true, FromScratch: true, EpochExamples: retainOnly,
		Defaults: func(c *Config) {
			fillInt(&c.Epochs, TrainEpochs)
			fillFloat(&c.LR, TrainLR)
			fillFloat(&c.WeightDecay, TrainWeightDecay)
		}})
}

// runRetrain is exact unlearning: every parameter is re-initialised as
// PyTorch initialises a fresh layer (train.ReinitModel, seeded;
// BatchNormalization statistics reset) and the model is trained from
// scratch on the retain set with the train command's recipe, through the
// same engine and training loop as Retrain (`unlearn train --exclude
// FORGET --from-scratch`): per-step cosine (or constant) schedule, SGD with
// momentum and weight decay, Dropout on, augmentation drawn from Fit's own
// stream. With the same seed, recipe, data and threads the two write the
// same parameters bit for bit. It trains a copy, so in.Model stays as it
// was when the run fails or is cancelled.
func runRetrain(r *Runner) error {
	c := r.Config()
	job := RetrainJob{FromScratch: true, Epochs: c.Epochs, BatchSize: c.BatchSize, LR: c.LR, Schedule: c.TrainSchedule,
		Momentum: c.Momentum, WeightDecay: c.WeightDecay, Seed: c.Seed, Augment: c.Augment, Runtime: c.Runtime}
	sched, err := TrainSchedule(job.Schedule, job.LR)
	if err != nil {
		return err
	}
	if job.Schedule == "" {
		job.Schedule = TrainCosine
	}
	work, err := onnxio.Clone(r.Input().Model)
	if err != nil {
		return err
	}
	e, err := job.engine(work)
	if err != nil {
		return err
	}
	defer e.Close()
	fo := job.fitOptions(sched)
	fo.Progress = func(p train.FitProgress) {
		r.Report(Progress{Phase: "train", Epoch: p.Epoch, Epochs: p.Epochs, Step: p.Step, Steps: p.Steps, Loss: p.Loss,
			LR: p.LR})
	}
	fo.EpochEnd = func(s schema.EpochStats) error {
		r.ReportEpoch(EpochEvent{Epochs: job.Epochs, Stats: &s})
		return nil
	}
	stats, err := train.Fit(r.Context(), e, r.Train(), r.Input().Retain, fo)
	if err != nil {
		return err
	}
	r.RecordEpochs(stats...)
	reset := 0
	for _, p := range e.Params() {
		reset += len(p.Data)
	}
	r.RecordReset(reset)
	aug := ""
	if job.Augment.On() {
		aug = ", augmentation " + job.Augment.Torchvision()
	}
	r.Note(exactNote+"every parameter (%d elements) re-initialised as PyTorch initialises a fresh layer (seed "+
		"%d; BatchNormalization statistics reset), then trained from scratch on the %d retain "+
		"examples (the training split without the forget set) for %s: SGD lr %g (%s per step), "+
		"momentum %g, weight decay %g, batch %d, Dropout on%s; the model never sees the forget set, "+
		"so it is an oracle of this recipe (`%s` with the same recipe writes the same parameters)",
		reset, job.Seed, len(r.Input().Retain), textio.Count(job.Epochs, "epoch"), job.LR, job.Schedule, job.Momentum,
		job.WeightDecay, job.BatchSize, aug,
		setting.Command("train", setting.Use("exclude", "FORGET"), setting.Of("from-scratch")))
	r.NoteBN(e)
	return r.WriteBack(e)
}

// exactNote begins retrain's note, which metrics.json's unlearning notes,
// the terminal and the report repeat beside the run's warnings.
const exactNote = "exact unlearning by retraining: "

// errRetrainMask refuses a mask for an algorithm that trains from scratch.
func errRetrainMask(algo string) error {
	return setting.Textf("%w: %s re-initialises and trains every parameter; it takes no mask (strategy full, no %s)",
		ErrInput, algo, setting.Of("mask"))
}
