package unlearn

import (
	"fmt"
	"math"
	"math/rand/v2"

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
	s := &scrub{r: r, sc: sc, ce: ce, kl: kl, cp: ce.Params(), kp: kl.Params(), tF: tF, tR: tR,
		gamma: float32(sc.Gamma), alpha: float32(sc.Alpha)}
	if err := s.pair(); err != nil {
		return err
	}
	r.NoteMask()
	r.NoteBN(ce)
	r.Note("SCRUB: %d epochs, max-steps (forget, −KL at T=%g, batch %d) in the first %d, min-steps (retain, %g·CE + "+
		"%g·KL, batch %d); teacher = the original model in inference mode; SGD lr %g momentum %g weight decay %g, ×0.1 "+
		"after epochs 3, 5, 9",
		r.Config().Epochs, sc.Temperature, sc.ForgetBatchSize, min(sc.MaxSteps, r.Config().Epochs), sc.Gamma, sc.Alpha,
		r.Config().BatchSize, r.Config().LR, r.Config().Momentum, r.Config().WeightDecay)
	s.order, s.forder = r.Rand(streamOrder), r.Rand(streamForget)
	s.sel = make([]int, 0, r.Config().BatchSize)
	err = r.Fit(Loop{Engine: ce, Optimizer: r.Optimizer(), Epochs: r.Config().Epochs, LR: s.lr, Epoch: s.epoch})
	if err != nil {
		return err
	}
	if s.maxSteps > 0 {
		r.Note("max-steps: %d, mean loss (−KL) %.4g", s.maxSteps, s.maxLoss/float64(s.maxSteps))
	}
	return r.WriteBack(ce)
}

// scrub is one run of SCRUB: the cross-entropy engine ce that trains and
// the KL engine kl that computes gradients on the same parameters (cp and
// kp, in the same order), the teacher's logits of the forget (tF) and the
// retain examples (tR), and the max-steps' loss so far.
type scrub struct {
	r             *Runner
	sc            SCRUBConfig
	ce, kl        *train.Engine
	cp, kp        []*train.Param
	tF, tR        []float32
	classes       int
	gamma, alpha  float32
	order, forder *rand.Rand
	sel           []int
	maxLoss       float64
	maxSteps      int
}

// pair checks that the two engines hold the same parameters and the
// teacher's logits the model's classes, and freezes the KL engine's
// parameters (it only computes gradients).
func (s *scrub) pair() error {
	cp, kp := s.cp, s.kp
	if len(cp) != len(kp) {
		return fmt.Errorf("scrub: the two engines hold %d and %d parameters", len(cp), len(kp))
	}
	for i := range cp {
		if cp[i].Name != kp[i].Name {
			return fmt.Errorf("scrub: parameter %d is %q in one engine and %q in the other", i, cp[i].Name, kp[i].Name)
		}
		kp[i].Frozen = true // the KL engine only computes gradients
	}
	s.classes = s.ce.Classes()
	in := s.r.Input()
	if s.kl.Classes() != s.classes || len(s.tF) != len(in.Forget)*s.classes || len(s.tR) != len(in.Retain)*s.classes {
		return fmt.Errorf("scrub: the teacher's logits do not match the model's %d classes", s.classes)
	}
	return nil
}

// lr is SCRUB's sgda_adjust_learning_rate: the rate × 0.1 per decay epoch
// (3, 5, 9) before epoch ep (from 0).
func (s *scrub) lr(ep int) float64 {
	k := 0
	for _, d := range []int{3, 5, 9} {
		if ep+1 > d {
			k++
		}
	}
	return s.r.Config().LR * math.Pow(0.1, float64(k))
}

// epoch is epoch ep's steps: the max-steps' forget batches (while ep <
// MaxSteps), then the min-steps' retain batches.
func (s *scrub) epoch(ep int) (int, StepFunc, error) {
	if ep == 0 { // the auto schedule's range test runs epoch 0 first
		s.maxLoss, s.maxSteps = 0, 0
	}
	var fb [][]int
	if ep < s.sc.MaxSteps {
		fb = TrainBatches(len(s.r.Input().Forget), s.sc.ForgetBatchSize, s.forder)
	}
	rb := TrainBatches(len(s.r.Input().Retain), s.r.Config().BatchSize, s.order)
	return len(fb) + len(rb), func(i int) (Step, error) {
		if i < len(fb) {
			return s.maxStep(fb[i])
		}
		return s.minStep(rb[i-len(fb)])
	}, nil
}

// maxStep ascends the KL to the teacher on forget batch b (positions in
// the forget set).
func (s *scrub) maxStep(b []int) (Step, error) {
	s.sel = Pick(s.sel, s.r.Input().Forget, b)
	s.sync(true)
	res, err := s.klStep(s.sel, b, s.tF, -1)
	if err != nil {
		return Step{}, err
	}
	copyRunning(s.ce.Running(), s.kl.Running())
	for i, p := range s.cp {
		if !p.Frozen {
			copy(p.Grad, s.kp[i].Grad)
		}
	}
	s.maxLoss += res.Loss
	s.maxSteps++
	return Step{Loss: res.Loss, Phase: "max"}, nil
}

// minStep descends γ·CE + α·KL on retain batch b (positions in the retain
// set).
func (s *scrub) minStep(b []int) (Step, error) {
	s.sel = Pick(s.sel, s.r.Input().Retain, b)
	out, err := LossStep(s.ce, s.r.Train(), s.sel, nil, 1, "min")
	if err != nil {
		return out, err
	}
	s.sync(false)
	res, err := s.klStep(s.sel, b, s.tR, 1)
	if err != nil {
		return out, err
	}
	for i, p := range s.cp {
		if p.Frozen {
			continue
		}
		g := s.kp[i].Grad
		for j := range p.Grad {
			p.Grad[j] = s.gamma*p.Grad[j] + s.alpha*g[j]
		}
	}
	out.Loss = s.sc.Gamma*out.Loss + s.sc.Alpha*res.Loss
	return out, nil
}

// sync copies the trained parameters (and, with running, the running
// statistics) from the cross-entropy engine into the KL engine.
func (s *scrub) sync(running bool) {
	for i, p := range s.cp {
		if !p.Frozen {
			copy(s.kp[i].Data, p.Data)
		}
	}
	if running {
		copyRunning(s.kl.Running(), s.ce.Running())
	}
}

// klStep runs the KL engine on examples sel (positions pos into a teacher
// table) with weight w.
func (s *scrub) klStep(sel, pos []int, teacher []float32, w float32) (train.StepResult, error) {
	kl, classes := s.kl, s.classes
	weights, err := kl.LoadBatch(s.r.Train(), sel)
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
