package unlearn

import (
	"context"
	"fmt"
	"time"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/infer"
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/internal/textio"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/onnxrt"
	"github.com/unlearn-tool/unlearn/schema"
	"github.com/unlearn-tool/unlearn/train"
	"github.com/unlearn-tool/unlearn/train/autodiff"
)

// Training schedules (RetrainJob.Schedule, Config.TrainSchedule).
const (
	TrainCosine   = "cosine"
	TrainConstant = "constant"
)

// The train command's recipe defaults, which the retrain algorithm
// (--method retrain) shares, so that retraining through the main command
// without a recipe is `unlearn train --exclude FORGET --from-scratch`
// without one. Batch 128 and momentum 0.9 are every algorithm's defaults.
const (
	TrainEpochs      = 3
	TrainLR          = 0.05
	TrainWeightDecay = 5e-4
)

// RetrainJob trains a model on the training split, all of it or without
// some examples: with the forget set excluded and FromScratch, it retrains
// the oracle an unlearned model is measured against. It lives here, not in
// package train, because it checks the model against the data and measures
// the result with package eval, which imports train.
type RetrainJob struct {
	// ModelPath is the model whose graph (and, unless FromScratch, whose
	// weights) is trained; it is never written.
	ModelPath string
	// Model is ModelPath decoded, when the caller has it (TimeRetrain
	// trains a clone and leaves it as it is; nil: decoded from ModelPath).
	Model *graph.Model
	// Data is the dataset: training on Data.Train, the accuracies reported
	// on Data.Train and Data.Test.
	Data *data.Dataset
	// Exclude lists training examples (indices into Data.Train) to leave
	// out, e.g. the forget set; nil trains on every example.
	Exclude []int
	// FromScratch re-initialises every parameter PyTorch-style and resets
	// BatchNormalization statistics first (train.ReinitModel).
	FromScratch bool
	// Epochs, BatchSize and LR (the peak rate) must be positive; Schedule
	// is TrainCosine (to 0 over all steps; "" too) or TrainConstant.
	Epochs, BatchSize int
	LR                float64
	Schedule          string
	// Momentum in [0, 1) and WeightDecay ≥ 0 configure SGD.
	Momentum, WeightDecay float64
	// Seed drives initialisation, example order, dropout and augmentation.
	Seed uint64
	// Augment is applied to every training batch (torchvision's
	// RandomCrop(padding) and RandomHorizontalFlip, see data.Augment), so
	// that a model trained with them can be retrained with the same recipe;
	// its draws come from a stream of their own (train.FitOptions.Augment).
	// The zero value is off.
	Augment data.Augment
	// Runtime configures ONNX Runtime (the library must be set up).
	Runtime onnxrt.Options
	// Out is where the trained model is written (atomically), in inference
	// form with the input's graph, names and opset.
	Out string
	// Info, when set, receives the steps ("train", "epoch"): an event name,
	// a line of text and key, value pairs.
	Info func(event, text string, fields ...any)
	// Progress, when set, is called after every step with the steps done
	// and the total over all epochs.
	Progress func(done, total int)
}

// RetrainResult is what Retrain did.
type RetrainResult struct {
	// Examples is the number of training examples trained on.
	Examples int
	// Epochs holds each epoch's mean loss, accuracy and seconds.
	Epochs []schema.EpochStats
	// TrainS is the training time in seconds (the epochs alone: no
	// loading, writing or evaluation).
	TrainS float64
	// TrainAccuracy and TestAccuracy are the written model's, evaluated as
	// users will load it.
	TrainAccuracy, TestAccuracy float64
}

// Check refuses settings no training can run with, before any work (Retrain
// checks them too).
func (job *RetrainJob) Check() error {
	if err := job.check(); err != nil {
		return err
	}
	_, err := TrainSchedule(job.Schedule, job.LR)
	return err
}

// Validate checks job's recipe, before any work: positive epochs, rate and
// batch, momentum in [0, 1), weight decay ≥ 0, and a schedule of
// TrainSchedule's. Its errors name the field at fault by its path
// (setting.FieldErrorf); the model, the data and the augmentation are
// checked when the job runs (Check).
func (job *RetrainJob) Validate() error {
	switch {
	case job.Epochs <= 0:
		return setting.FieldErrorf("Epochs", " %d: must be positive", job.Epochs)
	case !(job.LR > 0):
		return setting.FieldErrorf("LR", " %g: must be positive", job.LR)
	case job.BatchSize <= 0:
		return setting.FieldErrorf("BatchSize", " %d: must be positive", job.BatchSize)
	case !(job.Momentum >= 0 && job.Momentum < 1):
		return setting.FieldErrorf("Momentum", " %g: must be in [0, 1)", job.Momentum)
	case !(job.WeightDecay >= 0):
		return setting.FieldErrorf("WeightDecay", " %g: must be ≥ 0", job.WeightDecay)
	case job.Schedule != TrainCosine && job.Schedule != TrainConstant && job.Schedule != "":
		return setting.FieldErrorf("Schedule", " %q: must be %s or %s", job.Schedule, TrainCosine, TrainConstant)
	}
	return nil
}

// check refuses settings no training can run with.
func (job *RetrainJob) check() error {
	switch {
	case job.Data == nil || job.Data.Train == nil:
		return fmt.Errorf("%w: the training job has no data", ErrInput)
	case job.ModelPath == "" || job.Out == "":
		return fmt.Errorf("%w: the training job needs a model and an output path", ErrInput)
	}
	if err := job.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInput, err)
	}
	if err := job.Augment.Check(); err != nil {
		return fmt.Errorf("%w: %v", ErrInput, err)
	}
	sh := job.Data.Train.Shape()
	if err := job.Augment.CheckImage(sh[1], sh[2]); err != nil {
		return fmt.Errorf("%w: %w", ErrSettings, err)
	}
	return nil
}

// TrainSchedule returns the learning-rate schedule named name (TrainCosine
// or "", TrainConstant) with peak rate lr.
func TrainSchedule(name string, lr float64) (train.Schedule, error) {
	switch name {
	case TrainCosine, "":
		return train.Cosine{Base: lr}, nil
	case TrainConstant:
		return train.Constant{Base: lr}, nil
	}
	return nil, fmt.Errorf("%w: schedule %q: must be %s or %s", ErrInput, name, TrainCosine, TrainConstant)
}

// Retrain runs job: SGD on ONNX Runtime through the generated training
// graph, BatchNormalization in training mode (batch statistics, PyTorch's
// running-statistics update), on an untied working copy of the model; the
// result is written back into the original graph (into the untied one when
// untying changed something), in inference form, saved to Out and
// evaluated from the file. Cancelling ctx stops at the next step with
// ErrInterrupted and nothing written.
func Retrain(ctx context.Context, job RetrainJob) (*RetrainResult, error) {
	if err := job.check(); err != nil {
		return nil, err
	}
	sched, err := TrainSchedule(job.Schedule, job.LR)
	if err != nil {
		return nil, err
	}
	info := job.Info
	if info == nil {
		info = func(string, string, ...any) {}
	}
	ds, path := job.Data, job.ModelPath
	m, idx, err := job.inputs(info)
	if err != nil {
		return nil, err
	}
	// Train on an untied copy; write back into the original graph when
	// untying changed nothing, else into the untied one.
	work, untied, err := untiedCopy(m, path)
	if err != nil {
		return nil, err
	}
	e, err := job.engine(work)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer e.Close()
	fo := job.announce(info, sched, len(idx))
	start := time.Now()
	stats, err := train.Fit(ctx, e, ds.Train, idx, fo)
	if ctx.Err() != nil {
		return nil, ErrInterrupted
	}
	if err != nil {
		return nil, err
	}
	res := &RetrainResult{Examples: len(idx), Epochs: stats, TrainS: time.Since(start).Seconds()}
	dst := m
	if untied > 0 {
		dst = work
		graph.RestoreDeclaredShapes(work.Graph, m.Graph)
	}
	if err := job.write(e, dst); err != nil {
		return nil, err
	}
	// Evaluate what was written, as users will load it.
	if res.TrainAccuracy, res.TestAccuracy, err = accuracies(job.Out, ds, job.Runtime, job.BatchSize); err != nil {
		return nil, fmt.Errorf("evaluating %s: %w", job.Out, err)
	}
	return res, nil
}

// inputs loads the job's model, checks it against the data, says what its
// form means for training (info), and returns it with the training
// examples (the split without the excluded ids).
func (job *RetrainJob) inputs(info func(string, string, ...any)) (*graph.Model, []int, error) {
	ds, path := job.Data, job.ModelPath
	m, err := onnxio.Load(path)
	if err != nil {
		return nil, nil, err
	}
	if err := infer.CheckModelData(m, path, ds); err != nil {
		return nil, nil, err
	}
	for _, n := range infer.InputNotes(m, true) {
		info("note", "note: "+n, "note", n)
	}
	idx := data.Range(ds.Train.Len())
	if job.Exclude != nil {
		_, idx = data.ForgetRetain(ds.Train.Len(), job.Exclude)
		if len(idx) == 0 {
			return nil, nil, fmt.Errorf("%w: the excluded ids cover the whole training split; nothing left to train on",
				ErrInput)
		}
	}
	return m, idx, nil
}

// announce says (info) what the job trains on n examples and with which
// recipe, and returns the fit options for schedule sched that report each
// epoch to info and the steps to job.Progress.
func (job *RetrainJob) announce(info func(string, string, ...any), sched train.Schedule, n int) train.FitOptions {
	path, ds := job.ModelPath, job.Data
	schedName := job.Schedule
	if schedName == "" {
		schedName = TrainCosine
	}
	fields := []any{"model", path, "examples", n, "epochs", job.Epochs, "batch_size", job.BatchSize, "lr", job.LR,
		"seed", job.Seed}
	augText := ""
	if job.Augment.On() {
		augText = ", augmentation " + job.Augment.Torchvision()
		fields = append(fields, "augment", job.Augment.String())
	}
	info("train", fmt.Sprintf("training %s on %d examples of %s: %s, batch %d, lr %g (%s), momentum %g, weight decay "+
		"%g, seed %d%s",
		path, n, ds.Path, textio.Count(job.Epochs, "epoch"), job.BatchSize, job.LR, schedName, job.Momentum,
		job.WeightDecay, job.Seed, augText),
		fields...)
	fo := job.fitOptions(sched)
	fo.EpochEnd = func(s schema.EpochStats) error {
		info("epoch", fmt.Sprintf("epoch %d/%d  loss %.4f  train acc %.2f%%  %.1fs", s.Epoch, job.Epochs, s.Loss,
			100*s.Accuracy, s.Seconds),
			"epoch", s.Epoch, "epochs", job.Epochs, "loss", s.Loss, "accuracy", s.Accuracy, "seconds", s.Seconds)
		return nil
	}
	if job.Progress != nil {
		fo.Progress = func(p train.FitProgress) { job.Progress((p.Epoch-1)*p.Steps+p.Step, p.Epochs*p.Steps) }
	}
	return fo
}

// write writes e's trained parameters into dst, puts it in inference form
// and saves it to job.Out (never over the input model).
func (job *RetrainJob) write(e *train.Engine, dst *graph.Model) error {
	if _, err := e.WriteBack(dst.Graph); err != nil {
		return err
	}
	if _, err := graph.InferenceForm(dst.Graph); err != nil {
		return err
	}
	return onnxio.Save(dst, job.Out, &onnxio.SaveOptions{Protect: []string{job.ModelPath}})
}

// engine re-initialises m when job.FromScratch (train.ReinitModel, seeded)
// and builds the engine that trains it: BatchNormalization in training
// mode, Dropout on with the job's seed. Retrain and the retrain algorithm
// train through it and fitOptions, so that both make the same model.
func (job *RetrainJob) engine(m *graph.Model) (*train.Engine, error) {
	if job.FromScratch {
		if err := train.ReinitModel(m, job.Seed); err != nil {
			return nil, err
		}
	}
	return train.NewEngine(m, train.EngineOptions{Runtime: job.Runtime, Spec: autodiff.Spec{
		BN: autodiff.BNTraining, Dropout: true, DropoutSeed: int64(job.Seed),
	}})
}

// fitOptions is the job's recipe for train.Fit with schedule sched.
func (job *RetrainJob) fitOptions(sched train.Schedule) train.FitOptions {
	return train.FitOptions{
		Epochs: job.Epochs, BatchSize: job.BatchSize, Seed: job.Seed, Schedule: sched, Augment: job.Augment,
		Optimizer: &train.SGD{Momentum: job.Momentum, WeightDecay: job.WeightDecay},
	}
}

// accuracies returns the train and test accuracy of the model at path.
func accuracies(path string, ds *data.Dataset, opts onnxrt.Options, batch int) (trainAcc, testAcc float64, err error) {
	m, err := onnxio.Load(path)
	if err != nil {
		return 0, 0, err
	}
	cl, err := infer.NewClassifier(m, opts, batch)
	if err != nil {
		return 0, 0, err
	}
	defer cl.Close()
	acc := func(s *data.Split) (float64, error) {
		idx := data.Range(s.Len())
		logits, err := cl.Logits(s, idx, nil)
		if err != nil {
			return 0, err
		}
		return infer.Accuracy(infer.Argmax(logits, cl.Classes()), s.Labels(idx)), nil
	}
	if trainAcc, err = acc(ds.Train); err != nil {
		return 0, 0, err
	}
	if testAcc, err = acc(ds.Test); err != nil {
		return 0, 0, err
	}
	return trainAcc, testAcc, nil
}
