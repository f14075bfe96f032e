package train

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/schema"
)

// FitOptions configures Fit. Zero values: 1 epoch, batch 128, SGD with
// momentum 0.9, a constant learning rate of 0.01.
type FitOptions struct {
	Epochs    int
	BatchSize int
	Optimizer Optimizer
	Schedule  Schedule // learning rate per step (t of total steps over all epochs)
	// Seed drives the order of examples (PCG(Seed, 0x5eed)).
	Seed uint64
	// Augment is applied to every training batch (torchvision's RandomCrop
	// and RandomHorizontalFlip, see data.Augment), its random choices drawn
	// from PCG(Seed, 0xa06), a stream of its own: the order of examples is
	// the same with augmentation on or off. The zero value is off.
	Augment data.Augment
	// ClipNorm > 0 clips the global gradient norm before each update.
	ClipNorm float64
	// Weights, if set, gives the loss weight of an example (by its index in
	// the split); nil weighs every example 1.
	Weights func(i int) float32
	// Progress is called after every step.
	Progress func(FitProgress)
	// EpochEnd is called after every epoch; a non-nil error stops Fit.
	EpochEnd func(schema.EpochStats) error
}

// StreamAugment is the PCG stream Fit draws augmentation from (with
// FitOptions.Seed).
const StreamAugment = 0xa06

// FitProgress reports one step.
type FitProgress struct {
	Epoch, Epochs int
	Step, Steps   int // within the epoch
	Loss          float64
	LR            float64
}

// Fit trains e's parameters on the examples idx of split for the given
// epochs: shuffled mini-batches, forward and backward on ONNX Runtime, the
// optimizer on the parameters (honouring Param.Mask and Frozen). It stops at
// the first non-finite loss or gradient (ErrNonFinite) and when ctx is done
// (returning ctx.Err() after the step in flight).
func Fit(ctx context.Context, e *Engine, split *data.Split, idx []int, o FitOptions) ([]schema.EpochStats, error) {
	if len(idx) == 0 {
		return nil, errors.New("train: no training examples")
	}
	if o.Epochs <= 0 {
		o.Epochs = 1
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 128
	}
	if o.Optimizer == nil {
		o.Optimizer = &SGD{Momentum: 0.9}
	}
	if o.Schedule == nil {
		o.Schedule = Constant{Base: 0.01}
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	aug, err := data.NewAugmenter(o.Augment, rand.New(rand.NewPCG(o.Seed, StreamAugment)))
	if err != nil {
		return nil, err
	}
	perEpoch := (len(idx) + o.BatchSize - 1) / o.BatchSize
	total := perEpoch * o.Epochs
	classes := e.Classes()
	var stats []schema.EpochStats
	t := 0
	sel := make([]int, 0, o.BatchSize)
	for ep := 0; ep < o.Epochs; ep++ {
		start := time.Now()
		var lossSum float64
		var correct, seen int
		for si, b := range data.Batches(len(idx), o.BatchSize, true, rng) {
			if err := ctx.Err(); err != nil {
				return stats, err
			}
			sel = sel[:0]
			for _, j := range b {
				sel = append(sel, idx[j])
			}
			w, err := e.LoadAugmented(split, sel, aug)
			if err != nil {
				return stats, err
			}
			if o.Weights != nil {
				for k, i := range sel {
					w[k] = o.Weights(i)
				}
			}
			res, err := e.StepFilled(len(sel))
			if err != nil {
				return stats, fmt.Errorf("epoch %d step %d: %w", ep+1, si+1, err)
			}
			if err := CheckFinite(e.Params()); err != nil {
				return stats, fmt.Errorf("epoch %d step %d: %w", ep+1, si+1, err)
			}
			if o.ClipNorm > 0 {
				ClipGradNorm(e.Params(), o.ClipNorm)
			}
			lr := o.Schedule.LR(t, total)
			if err := o.Optimizer.Step(e.Params(), lr); err != nil {
				return stats, err
			}
			t++
			lossSum += res.Loss * float64(len(sel))
			for k, i := range sel {
				if Argmax(res.Logits[k*classes:(k+1)*classes]) == split.Label(i) {
					correct++
				}
			}
			seen += len(sel)
			if o.Progress != nil {
				o.Progress(FitProgress{Epoch: ep + 1, Epochs: o.Epochs, Step: si + 1, Steps: perEpoch, Loss: res.Loss, LR: lr})
			}
		}
		st := schema.EpochStats{Epoch: ep + 1, Loss: lossSum / float64(seen), Accuracy: float64(correct) / float64(seen),
			Seconds: time.Since(start).Seconds()}
		stats = append(stats, st)
		if o.EpochEnd != nil {
			if err := o.EpochEnd(st); err != nil {
				return stats, err
			}
		}
	}
	return stats, nil
}

// Argmax is the index of the largest value (the first one on ties).
func Argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}
