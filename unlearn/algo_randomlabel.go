package unlearn

import (
	"fmt"

	"github.com/unlearn-tool/unlearn/train/autodiff"
)

func init() {
	mustRegister(Algorithm{Name: "random-label", Order: 50, Summary: "forget examples relabelled at random, trained " +
		"with the retain set (SalUn)",
		Run: runRandomLabel, UsesForget: true, UsesRetain: true, Epochs: true, Augments: true, EpochExamples: retainAndForget,
		Defaults: func(c *Config) { fillInt(&c.Epochs, 5); fillFloat(&c.LR, 0.01) },
		Settings: []Setting{{Name: "wrong-labels", Field: "WrongLabels", Default: false,
			Help: "random-label draws each forget example's label from the classes other than its own"}}})
}

// runRandomLabel trains on the retain set together with the forget set
// relabelled at random: SalUn's RL (github.com/OPTML-Group/Unlearn-Saliency,
// Classification/unlearn/RL.py, the ConcatDataset branch, which DEL's
// reference code also uses): every epoch the forget examples get fresh
// labels drawn uniformly from all classes (np.random.randint(0, num_classes),
// so the true label is possible; Config.WrongLabels excludes it), are joined
// with the retain set and shuffled into mixed batches. The learning rate
// follows DEL's reference for relabelling: cosine to 0.5·lr per epoch.
func runRandomLabel(r *Runner) error {
	e, err := r.Engine(EngineOptions{BN: autodiff.BNTraining})
	if err != nil {
		return err
	}
	defer e.Close()
	classes := e.Classes()
	if r.Input().Data.Classes > classes {
		return fmt.Errorf("%w: the data has %d classes, the model %d logits", ErrInput, r.Input().Data.Classes, classes)
	}
	if r.Input().Data.Classes > 0 {
		classes = r.Input().Data.Classes
	}
	if r.Config().WrongLabels && classes < 2 {
		return fmt.Errorf("%w: wrong labels need at least 2 classes", ErrInput)
	}
	r.NoteMask()
	r.NoteBN(e)
	how := fmt.Sprintf("uniform over the %d classes (the true label included, as SalUn's code draws them)", classes)
	if r.Config().WrongLabels {
		how = fmt.Sprintf("uniform over the %d classes other than the true one", classes-1)
	}
	r.NoteAfter(func() string {
		return fmt.Sprintf("random labels for %d forget examples, redrawn every epoch, %s; trained jointly with %d retain "+
			"examples in shuffled batches %s: SGD lr %.4g momentum %g weight decay %g, cosine to 0.5·lr per epoch, batch %d",
			len(r.Input().Forget), how, len(r.Input().Retain), r.TrainedFor(), r.Rate(), r.Config().Momentum,
			r.Config().WeightDecay, r.Config().BatchSize)
	})
	nf := len(r.Input().Forget)
	all := append(append([]int(nil), r.Input().Forget...), r.Input().Retain...)
	relabel := make([]int64, nf)
	order, lab := r.Rand(streamOrder), r.Rand(streamLabels)
	sel := make([]int, 0, r.Config().BatchSize)
	err = r.Fit(Loop{
		Engine: e, Optimizer: r.Optimizer(), Epochs: r.Config().Epochs, LR: r.Cosine(0.5),
		Epoch: func(ep int) (int, StepFunc, error) {
			for k, i := range r.Input().Forget {
				if r.Config().WrongLabels {
					y := lab.IntN(classes - 1)
					if y >= r.Train().Label(i) {
						y++
					}
					relabel[k] = int64(y)
				} else {
					relabel[k] = int64(lab.IntN(classes))
				}
			}
			batches := TrainBatches(len(all), r.Config().BatchSize, order)
			return len(batches), func(s int) (Step, error) {
				b := batches[s]
				sel = Pick(sel, all, b)
				if _, err := e.LoadAugmented(r.Train(), sel, r.Augmenter()); err != nil {
					return Step{}, err
				}
				_, labels, _, _, err := e.Inputs(len(sel))
				if err != nil {
					return Step{}, err
				}
				for k, j := range b {
					if j < nf {
						labels[k] = relabel[j]
					}
				}
				res, err := e.StepFilled(len(sel))
				if err != nil {
					return Step{}, err
				}
				return Step{Loss: res.Loss, Correct: CountCorrect(res.Logits, labels, e.Classes()), Seen: len(sel), Phase: "train",
					Stat: true}, nil
			}, nil
		},
	})
	if err != nil {
		return err
	}
	return r.WriteBack(e)
}
