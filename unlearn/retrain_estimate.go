package unlearn

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/schema"
	"github.com/unlearn-tool/unlearn/train"
)

// RetrainTiming is the speed of retraining from scratch: of full training
// steps (every parameter trainable, the backward pass through the whole
// network, SGD on every parameter), the step `unlearn train --from-scratch`
// and the retrain method take, at the run's batch size and threads on its
// training data. An unlearning step trains fewer parameters and stops its
// backward pass at the mask's shallowest layer, so its speed is not this
// one.
type RetrainTiming struct {
	// Basis is schema.RetrainBasisTimed (steps timed by TimeRetrain) or
	// schema.RetrainBasisRun (the run retrained: its own epochs).
	Basis string
	// Steps is the number of steps timed, StepS their mean seconds.
	// WarmupS is the untimed first step's seconds (TimeRetrain; 0 for
	// RetrainBasisRun, whose first epoch includes its first step).
	Steps   int
	StepS   float64
	WarmupS float64
	// BatchSize is the batch of the timed steps.
	BatchSize int
	// CostS is what measuring took: loading the model, building the
	// training engine, the warm-up and the timed steps (0 for
	// RetrainBasisRun, which measured nothing extra).
	CostS float64
}

// TimeRetrain's bounds: at most RetrainTimingSteps timed steps, and no
// step begun once the timed ones have taken RetrainTimingSeconds (two are
// always timed).
const (
	RetrainTimingSteps   = 8
	RetrainTimingSeconds = 3.0
)

// Seconds estimates retraining from scratch on n examples for epochs:
// ⌈n ÷ batch⌉ steps an epoch at StepS each (a last, partial batch counted
// as a full one), plus what the first step takes beyond the others
// (WarmupS − StepS), once.
func (t *RetrainTiming) Seconds(n, epochs int) float64 {
	if t == nil || t.BatchSize <= 0 || n <= 0 || epochs <= 0 {
		return 0
	}
	steps := (n + t.BatchSize - 1) / t.BatchSize
	return t.StepS*float64(steps*epochs) + max(t.WarmupS-t.StepS, 0)
}

// TimeRetrain times full training steps of job.ModelPath's model, trained
// from scratch as Retrain trains it (job.FromScratch is implied; the
// engine, the loop and the optimizer are Retrain's), on examples idx of
// job.Data.Train with job.BatchSize (at most len(idx)), job.Augment and
// job.Runtime: one untimed warm-up step, then steps until maxSteps are
// timed or the timed ones have taken maxS seconds, at least two. It loads
// a copy of the model and trains it on an engine of its own, so no other
// model, engine or random stream is touched; it writes nothing.
// job.Epochs, job.LR and job.Out are not used.
func TimeRetrain(ctx context.Context, job RetrainJob, idx []int, maxSteps int, maxS float64) (*RetrainTiming, error) {
	start := time.Now()
	switch {
	case job.Data == nil || job.Data.Train == nil || len(idx) == 0:
		return nil, fmt.Errorf("%w: no training examples to time", ErrInput)
	case job.BatchSize <= 0:
		return nil, fmt.Errorf("%w: batch size %d: must be positive", ErrInput, job.BatchSize)
	}
	maxSteps = max(maxSteps, 2)
	m := job.Model
	if m == nil {
		var err error
		if m, err = onnxio.Load(job.ModelPath); err != nil {
			return nil, err
		}
	}
	work, _, err := untiedCopy(m, job.ModelPath)
	if err != nil {
		return nil, err
	}
	job.FromScratch = true
	e, err := job.engine(work)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", job.ModelPath, err)
	}
	defer e.Close()
	b := min(job.BatchSize, len(idx))
	// One epoch of 1 + maxSteps full batches: idx repeated as often as
	// that takes (Fit shuffles them).
	sub := make([]int, (1+maxSteps)*b)
	for i := range sub {
		sub[i] = idx[i%len(idx)]
	}
	fo := job.fitOptions(train.Constant{Base: TrainLR})
	fo.Epochs, fo.BatchSize = 1, b
	stop, cancel := context.WithCancel(ctx)
	defer cancel()
	var ends []time.Time // when each step ended
	stepStart := time.Now()
	fo.Progress = func(train.FitProgress) {
		ends = append(ends, time.Now())
		if n := len(ends); n >= 3 && ends[n-1].Sub(ends[0]).Seconds() >= maxS {
			cancel()
		}
	}
	if _, err := train.Fit(stop, e, job.Data.Train, sub, fo); err != nil &&
		!(errors.Is(err, context.Canceled) && ctx.Err() == nil) {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if len(ends) < 3 {
		return nil, fmt.Errorf("timed %d training steps, want at least 2 after the warm-up", max(len(ends)-1, 0))
	}
	n := len(ends) - 1
	return &RetrainTiming{Basis: schema.RetrainBasisTimed, Steps: n, BatchSize: b,
		StepS:   ends[n].Sub(ends[0]).Seconds() / float64(n),
		WarmupS: ends[0].Sub(stepStart).Seconds(),
		CostS:   time.Since(start).Seconds()}, nil
}
