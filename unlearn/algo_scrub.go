package unlearn

import (
	"fmt"
	"math"

	"github.com/unlearn-tool/unlearn/infer"
	"github.com/unlearn-tool/unlearn/train"
	"github.com/unlearn-tool/unlearn/train/autodiff"
)

func init() {
	mustRegister(Algorithm{Name: "scrub", Order: 70, Summary: "teacher–student: max-steps on the forget " +
		"set, min-steps " +
		"on the retain set",
		Run: runSCRUB, UsesForget: true, UsesRetain: true, Epochs: true,
		NoAugment: "it distils against teacher logits computed once per unaugmented example",
		Defaults: func(c *Config) {
			fillInt(&c.Epochs, 3)
			fillFloat(&c.LR, 5e-4)
			fillFloat(&c.WeightDecay, 5e-4)
		},
		Settings: []Setting{
			{Name: "scrub-max-steps", Field: "SCRUB.MaxSteps", Default: 1,
				Help: "scrub: the epochs, from the first, that begin with a max-step pass over the forget set"},
			{Name: "scrub-temperature", Field: "SCRUB.Temperature", Default: 4.0,
				Help: "scrub's distillation temperature"},
			{Name: "scrub-alpha", Field: "SCRUB.Alpha", Default: 0.001,
				Help: "scrub's weight of the KL to the teacher in the min-steps"},
			{Name: "scrub-gamma", Field: "SCRUB.Gamma", Default: 0.99,
				Help: "scrub's weight of the cross-entropy in the min-steps"},
			{Name: "scrub-forget-batch-size", Field: "SCRUB.ForgetBatchSize", Default: 32,
				Help: "scrub's batch size of the max-steps"}},
		Check: func(c Config) error {
			if s := c.SCRUB; s.MaxSteps < 0 || s.ForgetBatchSize < 1 || s.Temperature <= 0 {
				return fmt.Errorf("%w: SCRUB settings %+v", ErrInput, s)
			}
			return nil
		}})
}

// SCRUBConfig holds SCRUB's knobs (Kurmanji et al., "Towards Unbounded
// Machine Unlearning", NeurIPS 2023; github.com/meghdadk/SCRUB). Zero values
// take the defaults in brackets, SCRUB's own.
type SCRUBConfig struct {
	// MaxSteps is the number of epochs (from the first) that begin with a
	// max-step pass over the forget set (msteps) [1; SCRUB's is 2, see the
	// package documentation].
	MaxSteps int
	// Temperature of the distillation KL (kd_T) [4].
	Temperature float64
	// Alpha weighs the KL to the teacher in the min-steps [0.001]; Gamma the
	// cross-entropy [0.99].
	Alpha, Gamma float64
	// ForgetBatchSize is the batch size of the max-steps (del_batch_size)
	// [32]; the min-steps use Config.BatchSize.
	ForgetBatchSize int
}

// runSCRUB is SCRUB (Kurmanji et al., NeurIPS 2023), following its code
// (github.com/meghdadk/SCRUB, thirdparty/repdistiller/helper/loops.py
// train_distill and the notebooks' settings): the student starts as the
// model, the teacher is the original model in inference mode. Each epoch
// e = 1..E begins, while e ≤ MaxSteps, with a max pass over the forget set
// (loss −KL_T(teacher ‖ student), batches of ForgetBatchSize) and then makes
// a min pass over the retain set (loss γ·CE + α·KL_T). KL_T is the
// distillation loss F.kl_div(log_softmax(s/T), softmax(t/T), sum)·T²/N. The
// learning rate is SCRUB's sgda_adjust_learning_rate: lr·0.1^k with k the
// number of decay epochs (3, 5, 9) before epoch e. Smoothing (SWA) is off
// and no gradient clipping is applied, as in SCRUB's defaults.
//
// The engine computes one loss per pass, so a min step runs the batch twice,
// through a cross-entropy engine and a KL engine holding the same
// parameters, and adds the gradients γ·g_CE + α·g_KL in Go; both passes see
// the same batch statistics, and the running statistics are updated once.
func runSCRUB(r *Runner) error {
	sc := r.Config().SCRUB
	tF, tR, err := r.teacherLogits()
	if err != nil {
		return err
	}
	ce, err := r.Engine(EngineOptions{BN: autodiff.BNTraining})
	if err != nil {
		return err
	}
	defer ce.Close()
	kl, err := r.Engine(EngineOptions{BN: autodiff.BNTraining, Loss: autodiff.Loss{Kind: autodiff.LossKL,
		Temperature: float32(sc.Temperature)}})
	if err != nil {
		return err
	}
	defer kl.Close()
	cp, kp := ce.Params(), kl.Params()
	if len(cp) != len(kp) {
		return fmt.Errorf("scrub: the two engines hold %d and %d parameters", len(cp), len(kp))
	}
	for i := range cp {
		if cp[i].Name != kp[i].Name {
			return fmt.Errorf("scrub: parameter %d is %q in one engine and %q in the other", i, cp[i].Name, kp[i].Name)
		}
		kp[i].Frozen = true // the KL engine only computes gradients
	}
	classes := ce.Classes()
	if kl.Classes() != classes || len(tF) != len(r.Input().Forget)*classes || len(tR) != len(r.Input().Retain)*classes {
		return fmt.Errorf("scrub: the teacher's logits do not match the model's %d classes", classes)
	}
	r.NoteMask()
	r.NoteBN(ce)
	r.Note("SCRUB: %d epochs, max-steps (forget, −KL at T=%g, batch %d) in the first %d, min-steps (retain, %g·CE + "+
		"%g·KL, batch %d); teacher = the original model in inference mode; SGD lr %g momentum %g weight decay %g, ×0.1 "+
		"after epochs 3, 5, 9",
		r.Config().Epochs, sc.Temperature, sc.ForgetBatchSize, min(sc.MaxSteps, r.Config().Epochs), sc.Gamma, sc.Alpha,
		r.Config().BatchSize, r.Config().LR, r.Config().Momentum, r.Config().WeightDecay)

	sync := func(running bool) {
		for i, p := range cp {
			if !p.Frozen {
				copy(kp[i].Data, p.Data)
			}
		}
		if running {
			copyRunning(kl.Running(), ce.Running())
		}
	}
	// klStep runs the KL engine on examples sel (positions pos into a
	// teacher table) with weight w.
	klStep := func(sel, pos []int, teacher []float32, w float32) (train.StepResult, error) {
		weights, err := kl.LoadBatch(r.Train(), sel)
		if err != nil {
			return train.StepResult{}, err
		}
		for i := range weights {
			weights[i] = w
		}
		_, _, _, tb, err := kl.Inputs(len(sel))
		if err != nil {
			return train.StepResult{}, err
		}
		for k, j := range pos {
			copy(tb[k*classes:(k+1)*classes], teacher[j*classes:(j+1)*classes])
		}
		return kl.StepFilled(len(sel))
	}
	gamma, alpha := float32(sc.Gamma), float32(sc.Alpha)
	order, forder := r.Rand(streamOrder), r.Rand(streamForget)
	sel := make([]int, 0, r.Config().BatchSize)
	var maxLoss float64
	var maxSteps int
	err = r.Fit(Loop{
		Engine: ce, Optimizer: r.Optimizer(), Epochs: r.Config().Epochs,
		LR: func(ep int) float64 {
			k := 0
			for _, d := range []int{3, 5, 9} {
				if ep+1 > d {
					k++
				}
			}
			return r.Config().LR * math.Pow(0.1, float64(k))
		},
		Epoch: func(ep int) (int, StepFunc, error) {
			if ep == 0 { // the auto schedule's range test runs epoch 0 first
				maxLoss, maxSteps = 0, 0
			}
			var fb [][]int
			if ep < sc.MaxSteps {
				fb = TrainBatches(len(r.Input().Forget), sc.ForgetBatchSize, forder)
			}
			rb := TrainBatches(len(r.Input().Retain), r.Config().BatchSize, order)
			return len(fb) + len(rb), func(s int) (Step, error) {
				if s < len(fb) {
					// max-step: ascend the KL to the teacher on the forget set
					sel = Pick(sel, r.Input().Forget, fb[s])
					sync(true)
					res, err := klStep(sel, fb[s], tF, -1)
					if err != nil {
						return Step{}, err
					}
					copyRunning(ce.Running(), kl.Running())
					for i, p := range cp {
						if !p.Frozen {
							copy(p.Grad, kp[i].Grad)
						}
					}
					maxLoss += res.Loss
					maxSteps++
					return Step{Loss: res.Loss, Phase: "max"}, nil
				}
				// min-step: γ·CE + α·KL on the retain set
				b := rb[s-len(fb)]
				sel = Pick(sel, r.Input().Retain, b)
				out, err := LossStep(ce, r.Train(), sel, nil, 1, "min")
				if err != nil {
					return out, err
				}
				sync(false)
				res, err := klStep(sel, b, tR, 1)
				if err != nil {
					return out, err
				}
				for i, p := range cp {
					if p.Frozen {
						continue
					}
					g := kp[i].Grad
					for j := range p.Grad {
						p.Grad[j] = gamma*p.Grad[j] + alpha*g[j]
					}
				}
				out.Loss = sc.Gamma*out.Loss + sc.Alpha*res.Loss
				return out, nil
			}, nil
		},
	})
	if err != nil {
		return err
	}
	if maxSteps > 0 {
		r.Note("max-steps: %d, mean loss (−KL) %.4g", maxSteps, maxLoss/float64(maxSteps))
	}
	return r.WriteBack(ce)
}

// copyRunning copies running statistics from src to dst (same names).
func copyRunning(dst, src map[string][]float32) {
	for name, v := range src {
		if d := dst[name]; d != nil {
			copy(d, v)
		}
	}
}

// teacherLogits returns the original model's logits (inference mode) for
// the forget and the retain examples, in their order.
func (r *Runner) teacherLogits() (forget, retain []float32, err error) {
	c, err := infer.NewClassifier(r.Input().Model, r.Config().Runtime, r.Config().BatchSize)
	if err != nil {
		return nil, nil, err
	}
	defer c.Close()
	forget, err = c.Logits(r.Train(), r.Input().Forget, nil)
	if err != nil {
		return nil, nil, err
	}
	if err := r.Context().Err(); err != nil {
		return nil, nil, err
	}
	retain, err = c.Logits(r.Train(), r.Input().Retain, nil)
	if err != nil {
		return nil, nil, err
	}
	return forget, retain, r.Context().Err()
}
