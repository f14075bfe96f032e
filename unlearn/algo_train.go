package unlearn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/train"
	"github.com/unlearn-tool/unlearn/train/autodiff"
)

// The training algorithms: rft, finetune, neggrad, neggrad+, random-label and
// l1-sparse. All run BatchNormalization in training mode (the references call
// model.train()), so running statistics are updated everywhere, and use
// PyTorch's SGD with the configured momentum and weight decay.

// cosine is the references' CosineAnnealingLR(T_max = epochs, eta_min =
// floor·lr) stepped once per epoch.
func (r *run) cosine(floor float64) func(ep int) float64 {
	s := train.Cosine{Base: r.cfg.LR, Floor: floor * r.cfg.LR}
	return func(ep int) float64 { return s.LR(ep, r.cfg.Epochs) }
}

func (r *run) constant() func(ep int) float64 {
	return func(int) float64 { return r.cfg.LR }
}

// trainBatches shuffles 0..n-1 into batches of bs like data.Batches, but
// merges a final batch of fewer than bs/2 examples into the one before it.
// The references keep such a batch (drop_last=False); in training-mode
// BatchNormalization a batch of a few examples has noisy statistics, and on
// the demo a last batch of 4 cost 5 points of test accuracy (finetuning on
// 900 retain examples: test 0.79, against 0.84 with 896).
func trainBatches(n, bs int, rng *rand.Rand) [][]int {
	b := data.Batches(n, bs, true, rng)
	if k := len(b); k >= 2 && 2*len(b[k-1]) < bs {
		b[k-2] = append(append([]int(nil), b[k-2]...), b[k-1]...)
		b = b[:k-1]
	}
	return b
}

// descend trains on the retain set: shuffled batches, cross-entropy.
func (r *run) descend(e *train.Engine, lr func(int) float64, hook func(int, []*train.Param) float64) error {
	idx := r.in.Retain
	order := r.rng(streamOrder)
	sel := make([]int, 0, r.cfg.BatchSize)
	return r.fit(loop{
		e: e, opt: r.optimizer(), epochs: r.cfg.Epochs, lr: lr, hook: hook,
		epoch: func(ep int) (int, stepFunc, error) {
			batches := trainBatches(len(idx), r.cfg.BatchSize, order)
			return len(batches), func(s int) (stepOut, error) {
				sel = pick(sel, idx, batches[s])
				return lossStep(e, r.split, sel, r.aug, 1, "train")
			}, nil
		},
	})
}

func (r *run) noteMask() {
	if r.in.Mask == nil {
		r.note("no mask: every parameter may change")
		return
	}
	sel, tensors := 0, 0
	for _, name := range r.params {
		n := 0
		for _, b := range r.in.Mask[name] {
			if b {
				n++
			}
		}
		if n > 0 {
			sel += n
			tensors++
		}
	}
	r.note("mask: %d of %d parameter elements in %d tensors may change", sel, r.nm.NumParams, tensors)
}

// noteBN notes how the engine trains: BatchNormalization in training
// mode, and the weight gradients it restricts to the selected output
// channels (Config.GradChannels).
func (r *run) noteBN(e *train.Engine) {
	if len(e.Running()) > 0 {
		r.note("BatchNormalization in training mode: batch statistics, running statistics of every BatchNormalization updated (momentum 0.1, as PyTorch's train())")
	}
	if n := len(e.Artifacts().GradChannels); n > 0 {
		r.note("weight gradients of %d tensors computed for their selected output channels only (the rest are never updated)", n)
	}
}

// runRFT is Reset-and-Finetune, DEL's unlearning step: masked elements are
// re-initialised as PyTorch initialises a fresh layer, then the masked
// elements and the whole classifier layer are finetuned on the retain set.
func runRFT(r *run) error {
	cls, err := r.nm.Classifier(r.in.Classifier)
	if err != nil {
		return err
	}
	whole := map[string]bool{}
	var names []string
	for _, m := range cls.Members {
		whole[m.Param.Name] = true
		names = append(names, m.Param.Name)
	}
	e, err := r.engine(engineOpts{bn: autodiff.BNTraining, whole: whole})
	if err != nil {
		return err
	}
	defer e.Close()
	r.noteMask()
	// The auto schedule trains until the test accuracy is back (or says
	// it is not); a fixed recipe is warned.
	if r.cfg.Schedule != ScheduleAuto {
		if w := emptiedLayers(r.nm, r.in.Mask, cls); w != "" {
			r.note("%s", w)
		}
	}
	n, err := r.reset(e)
	if err != nil {
		return err
	}
	r.res.Reset = n
	r.note("reset %d masked elements to a fresh PyTorch initialisation (Kaiming-uniform a=√5 weights, U(±1/√fan_in) biases, normalization scale 1 and shift 0)", n)
	r.note("classifier layer %s (%s) trained whole, inside the mask or not", cls.Name, strings.Join(names, ", "))
	r.noteBN(e)
	r.noteAfter(func() string {
		return fmt.Sprintf("finetuned on %d retain examples %s: SGD lr %.4g momentum %g weight decay %g, cosine to 0.01·lr per epoch, batch %d",
			len(r.in.Retain), r.trainedFor(), r.rate(), r.cfg.Momentum, r.cfg.WeightDecay, r.cfg.BatchSize)
	})
	if err := r.descend(e, r.cosine(0.01), nil); err != nil {
		return err
	}
	return r.writeBack(e)
}

// reset re-initialises the masked elements of the engine's parameters (every
// element without a mask) and returns how many.
func (r *run) reset(e *train.Engine) (int, error) {
	params := map[string][]float32{}
	mask := map[string][]bool{}
	for _, p := range e.Params() {
		var m []bool
		if r.in.Mask == nil {
			m = make([]bool, len(p.Data))
			for i := range m {
				m[i] = true
			}
		} else {
			m = r.in.Mask[p.Name]
		}
		if !anyTrue(m) {
			continue
		}
		params[p.Name] = p.Data
		mask[p.Name] = m
	}
	return train.ResetNeurons(r.nm, params, mask, r.rng(streamReset))
}

// runFinetune trains the masked elements on the retain set only.
func runFinetune(r *run) error {
	e, err := r.engine(engineOpts{bn: autodiff.BNTraining})
	if err != nil {
		return err
	}
	defer e.Close()
	r.noteMask()
	r.noteBN(e)
	r.noteAfter(func() string {
		return fmt.Sprintf("finetuned on %d retain examples %s: SGD lr %.4g momentum %g weight decay %g, cosine to 0.01·lr per epoch, batch %d",
			len(r.in.Retain), r.trainedFor(), r.rate(), r.cfg.Momentum, r.cfg.WeightDecay, r.cfg.BatchSize)
	})
	if err := r.descend(e, r.cosine(0.01), nil); err != nil {
		return err
	}
	return r.writeBack(e)
}

// runNegGrad is gradient ascent on the forget set: per-example weights −1,
// one pass over the forget set per epoch (SalUn's GA), constant learning
// rate.
func runNegGrad(r *run) error {
	e, err := r.engine(engineOpts{bn: autodiff.BNTraining})
	if err != nil {
		return err
	}
	defer e.Close()
	r.noteMask()
	r.noteBN(e)
	r.noteAfter(func() string {
		return fmt.Sprintf("gradient ascent on %d forget examples %s: SGD lr %.4g (constant) momentum %g weight decay %g, batch %d",
			len(r.in.Forget), r.trainedFor(), r.rate(), r.cfg.Momentum, r.cfg.WeightDecay, r.cfg.BatchSize)
	})
	idx := r.in.Forget
	order := r.rng(streamForget)
	sel := make([]int, 0, r.cfg.BatchSize)
	err = r.fit(loop{
		e: e, opt: r.optimizer(), epochs: r.cfg.Epochs, lr: r.constant(),
		epoch: func(ep int) (int, stepFunc, error) {
			batches := trainBatches(len(idx), r.cfg.BatchSize, order)
			return len(batches), func(s int) (stepOut, error) {
				sel = pick(sel, idx, batches[s])
				return lossStep(e, r.split, sel, r.aug, -1, "ascent")
			}, nil
		},
	})
	if err != nil {
		return err
	}
	return r.writeBack(e)
}

// runNegGradPlus minimises β·L_retain − (1−β)·L_forget: each step pairs a
// retain batch with the next forget batch (the forget batches cycle, in one
// shuffled order per epoch, as zip(retain, cycle(forget)) in the
// references). The two batches run as two forward/backward passes, so
// BatchNormalization normalises each with its own statistics as PyTorch's
// two model() calls do; the gradients are combined in Go.
func runNegGradPlus(r *run) error {
	e, err := r.engine(engineOpts{bn: autodiff.BNTraining})
	if err != nil {
		return err
	}
	defer e.Close()
	r.noteMask()
	r.noteBN(e)
	beta := float32(r.cfg.Beta)
	fb := float32(1 - r.cfg.Beta)
	r.note("NegGrad+: loss %g·L_retain − %g·L_forget, one retain batch and one (cycled) forget batch per step, %d epochs over %d retain examples: SGD lr %g (constant) momentum %g weight decay %g, batch %d",
		r.cfg.Beta, 1-r.cfg.Beta, r.cfg.Epochs, len(r.in.Retain), r.cfg.LR, r.cfg.Momentum, r.cfg.WeightDecay, r.cfg.BatchSize)
	acc := map[string][]float32{}
	for _, p := range e.Params() {
		if !p.Frozen {
			acc[p.Name] = make([]float32, len(p.Grad))
		}
	}
	rorder, forder := r.rng(streamOrder), r.rng(streamForget)
	rsel := make([]int, 0, r.cfg.BatchSize)
	fsel := make([]int, 0, r.cfg.BatchSize)
	err = r.fit(loop{
		e: e, opt: r.optimizer(), epochs: r.cfg.Epochs, lr: r.constant(),
		epoch: func(ep int) (int, stepFunc, error) {
			rb := trainBatches(len(r.in.Retain), r.cfg.BatchSize, rorder)
			fbs := trainBatches(len(r.in.Forget), r.cfg.BatchSize, forder)
			return len(rb), func(s int) (stepOut, error) {
				rsel = pick(rsel, r.in.Retain, rb[s])
				out, err := lossStep(e, r.split, rsel, r.aug, 1, "train")
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
				fsel = pick(fsel, r.in.Forget, fbs[s%len(fbs)])
				fout, err := lossStep(e, r.split, fsel, r.aug, 1, "train")
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
				out.loss = r.cfg.Beta*out.loss - (1-r.cfg.Beta)*fout.loss
				return out, nil
			}, nil
		},
	})
	if err != nil {
		return err
	}
	return r.writeBack(e)
}

// runRandomLabel trains on the retain set together with the forget set
// relabelled at random: SalUn's RL (github.com/OPTML-Group/Unlearn-Saliency,
// Classification/unlearn/RL.py, the ConcatDataset branch, which DEL's
// reference code also uses): every epoch the forget examples get fresh
// labels drawn uniformly from all classes (np.random.randint(0, num_classes),
// so the true label is possible; Config.WrongLabels excludes it), are joined
// with the retain set and shuffled into mixed batches. The learning rate
// follows DEL's reference for relabelling: cosine to 0.5·lr per epoch.
func runRandomLabel(r *run) error {
	e, err := r.engine(engineOpts{bn: autodiff.BNTraining})
	if err != nil {
		return err
	}
	defer e.Close()
	classes := e.Classes()
	if r.in.Data.Classes > classes {
		return fmt.Errorf("%w: the data has %d classes, the model %d logits", ErrInput, r.in.Data.Classes, classes)
	}
	if r.in.Data.Classes > 0 {
		classes = r.in.Data.Classes
	}
	if r.cfg.WrongLabels && classes < 2 {
		return fmt.Errorf("%w: wrong labels need at least 2 classes", ErrInput)
	}
	r.noteMask()
	r.noteBN(e)
	how := fmt.Sprintf("uniform over the %d classes (the true label included, as SalUn's code draws them)", classes)
	if r.cfg.WrongLabels {
		how = fmt.Sprintf("uniform over the %d classes other than the true one", classes-1)
	}
	r.noteAfter(func() string {
		return fmt.Sprintf("random labels for %d forget examples, redrawn every epoch, %s; trained jointly with %d retain examples in shuffled batches %s: SGD lr %.4g momentum %g weight decay %g, cosine to 0.5·lr per epoch, batch %d",
			len(r.in.Forget), how, len(r.in.Retain), r.trainedFor(), r.rate(), r.cfg.Momentum, r.cfg.WeightDecay, r.cfg.BatchSize)
	})
	nf := len(r.in.Forget)
	all := append(append([]int(nil), r.in.Forget...), r.in.Retain...)
	relabel := make([]int64, nf)
	order, lab := r.rng(streamOrder), r.rng(streamLabels)
	sel := make([]int, 0, r.cfg.BatchSize)
	err = r.fit(loop{
		e: e, opt: r.optimizer(), epochs: r.cfg.Epochs, lr: r.cosine(0.5),
		epoch: func(ep int) (int, stepFunc, error) {
			for k, i := range r.in.Forget {
				if r.cfg.WrongLabels {
					y := lab.IntN(classes - 1)
					if y >= r.split.Label(i) {
						y++
					}
					relabel[k] = int64(y)
				} else {
					relabel[k] = int64(lab.IntN(classes))
				}
			}
			batches := trainBatches(len(all), r.cfg.BatchSize, order)
			return len(batches), func(s int) (stepOut, error) {
				b := batches[s]
				sel = pick(sel, all, b)
				if _, err := e.LoadAugmented(r.split, sel, r.aug); err != nil {
					return stepOut{}, err
				}
				_, labels, _, _, err := e.Inputs(len(sel))
				if err != nil {
					return stepOut{}, err
				}
				for k, j := range b {
					if j < nf {
						labels[k] = relabel[j]
					}
				}
				res, err := e.StepFilled(len(sel))
				if err != nil {
					return stepOut{}, err
				}
				return stepOut{loss: res.Loss, correct: countCorrect(res.Logits, labels, e.Classes()), seen: len(sel), phase: "train", stat: true}, nil
			}, nil
		},
	})
	if err != nil {
		return err
	}
	return r.writeBack(e)
}

// runL1Sparse is finetuning with an L1 penalty α_e·‖θ‖₁ whose weight decays
// linearly, α_e = L1·(1 − e/E) for epoch e = 0..E−1 (SalUn's FT_l1 and DEL's
// reference). The penalty covers every trainable parameter as in the
// references; its subgradient α_e·sign(θ) (0 at 0, as PyTorch's abs) is
// added in Go, and only masked elements move.
func runL1Sparse(r *run) error {
	e, err := r.engine(engineOpts{bn: autodiff.BNTraining})
	if err != nil {
		return err
	}
	defer e.Close()
	r.noteMask()
	r.noteBN(e)
	r.noteAfter(func() string {
		return fmt.Sprintf("finetuned on %d retain examples with an L1 penalty %g·(1 − epoch/%d)·‖θ‖₁ %s: SGD lr %.4g momentum %g weight decay %g, cosine to 0.01·lr per epoch, batch %d",
			len(r.in.Retain), r.cfg.L1, r.cfg.Epochs, r.trainedFor(), r.rate(), r.cfg.Momentum, r.cfg.WeightDecay, r.cfg.BatchSize)
	})
	// ‖θ‖₁ of the parameters outside the engine (frozen, constant).
	inEngine := map[string]bool{}
	for _, p := range e.Params() {
		inEngine[p.Name] = true
	}
	var rest float64
	for _, name := range r.params {
		if inEngine[name] {
			continue
		}
		v, _ := r.in.Model.Graph.LocalValue(name).Init.Float32s()
		for _, x := range v {
			rest += math.Abs(float64(x))
		}
	}
	hook := func(ep int, params []*train.Param) float64 {
		a := r.cfg.L1 * (1 - float64(ep)/float64(r.cfg.Epochs))
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
	if err := r.descend(e, r.cosine(0.01), hook); err != nil {
		return err
	}
	return r.writeBack(e)
}
