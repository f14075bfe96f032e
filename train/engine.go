package train

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"sync"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/onnxrt"
	"github.com/unlearn-tool/unlearn/train/autodiff"
	"github.com/unlearn-tool/unlearn/train/lowering"
	"github.com/unlearn-tool/unlearn/train/lowering/cpu"
)

// EngineOptions configures an Engine.
type EngineOptions struct {
	Runtime onnxrt.Options
	// Spec selects the parameters to differentiate, the BatchNormalization
	// and Dropout modes and the loss (see autodiff.Spec). A nil
	// Spec.Lowering is the device's (EngineSpec); in a cpu.Lowering a zero
	// NCHWcBlock is filled in with the block size of ONNX Runtime's NCHWc
	// Conv kernels on this machine (onnxrt.NCHWcBlockSize; 0 where there
	// are none): Conv layers run on them wherever they apply. A negative
	// one keeps plain ai.onnx Conv. A zero Spec.Threads is filled in with Runtime's thread count. With
	// Spec.GradChannels the graph computes those weights' gradients for
	// the listed output channels only, and Step writes them into
	// Param.Grad with zeros in the other channels (see MaskChannels).
	Spec autodiff.Spec
}

// Engine runs one training graph on ONNX Runtime. Parameters live in ONNX
// Runtime tensors whose memory Go shares (Param.Data), so optimizers update
// them in place between steps; gradients are written by ONNX Runtime into
// preallocated tensors (Param.Grad), or on cuda copied there (OutputsVar).
// One session serves every step and batch size (on cuda, one session per
// batch size: see batchSession). In BNTraining mode, Step updates the
// running statistics as PyTorch's train() forward does.
//
// An Engine is not safe for concurrent use.
type Engine struct {
	art  *autodiff.Artifacts
	sess *onnxrt.Session
	g    *graph.Graph // the forward graph the artifacts were built from

	// Sessions of the training graph built for one batch size, by batch
	// size (batchSession), and what they are made with.
	perBatch           map[int]*batchRun
	m                  *graph.Model
	opts               onnxrt.Options
	inNames, outNames  []string
	fixedBatchSessions bool

	// ortOutputs: ONNX Runtime allocates each run's outputs and StepFilled
	// copies them into the engine's tensors (see OutputsVar).
	ortOutputs bool

	inputs  []autodiff.IO
	outputs []autodiff.IO

	params []*Param
	// fixed tensors bound on every run: parameters and state (by input
	// index), gradients and BN statistics (by output index)
	fixedIn  map[int]*onnxrt.Tensor
	fixedOut map[int]*onnxrt.Tensor
	// running statistics (Go-side values, updated after each BNTraining step)
	running map[string][]float32
	// per batch size: images, labels, weights, teacher logits, loss, logits
	bufs map[int]*batchBufs
	// partial: the gradients computed for some output channels only
	// (autodiff.Spec.GradChannels), scattered into Param.Grad after each run
	partial []partialGrad

	imageShape []int64 // [C, H, W]
	classes    int
	closed     bool
}

// partialGrad is a gradient output that holds only some output channels of
// its parameter (autodiff.ChannelGrad): after each run its slices are copied
// into the channels' places in p.Grad, and the rest of p.Grad is zero.
type partialGrad struct {
	p   *Param
	out []float32 // the graph's output, [outer, k, inner]
	cg  autodiff.ChannelGrad
	// outer and inner are the products of the parameter's dimensions
	// before and after cg.Axis; c its size on cg.Axis.
	outer, inner, c int
}

// scatter writes g.out into g.p.Grad, zero outside the channels.
func (g *partialGrad) scatter() {
	k := len(g.cg.Channels)
	dst := g.p.Grad
	for o := range g.outer {
		row := dst[o*g.c*g.inner : (o+1)*g.c*g.inner]
		next := 0 // the first channel not yet written
		for j, ch := range g.cg.Channels {
			c := int(ch)
			clear(row[next*g.inner : c*g.inner])
			copy(row[c*g.inner:(c+1)*g.inner], g.out[(o*k+j)*g.inner:(o*k+j+1)*g.inner])
			next = c + 1
		}
		clear(row[next*g.inner:])
	}
}

type batchBufs struct {
	in  map[int]*onnxrt.Tensor
	out map[int]*onnxrt.Tensor
}

// Batch is the input of one step. X holds N images (N·C·H·W floats),
// Labels N class indices, Weights N per-example loss weights (nil: all 1),
// Teacher N·classes teacher logits (KL loss only).
type Batch struct {
	X       []float32
	Labels  []int64
	Weights []float32
	Teacher []float32
}

// StepResult is what one step returns. Logits alias engine memory that the
// next step with the same batch size overwrites.
type StepResult struct {
	Loss   float64
	Logits []float32
}

// NewEngine builds the training graph of m (a copy of its graph is
// differentiated; m is not modified) and opens a session for it.
func NewEngine(m *graph.Model, opts EngineOptions) (*Engine, error) {
	art, err := autodiff.Build(m, EngineSpec(opts))
	if err != nil {
		return nil, err
	}
	return NewEngineFromArtifacts(m, art, opts.Runtime)
}

// EngineSpec returns the autodiff.Spec NewEngine builds the training graph
// with: opts.Spec, with the device's lowering where it names none (on the
// cpu device the forms of package lowering/cpu, chosen per shape) and the
// NCHWc block size and the thread count of opts.Runtime filled in where
// they are zero (see EngineOptions.Spec). A Lowering of another type is
// kept as it is. The NCHWc kernels are ONNX Runtime's own convolutions on a blocked layout
// (same sums, another order), on which a ResNet-18 training step (batch
// 128) takes less time (bench/RESULTS.md, section "What changed
// (commits)").
//
// On cuda the graph takes the plain forms (lowering.Plain, or those of a
// cpu.Lowering the caller gave where it leaves them open): the forward Conv as a Conv, dX as a ConvTranspose and dW by
// the convolution trick, all Conv nodes the CUDA provider runs on cuDNN,
// and no rewrite for ONNX Runtime's CPU thread pool (Threads 1). The forms
// chosen per shape on the CPU (Winograd, the windowed weight gradients)
// replace slow CPU kernels and are not measured on a GPU.
func EngineSpec(opts EngineOptions) autodiff.Spec {
	spec := opts.Spec
	forms, forced := spec.Lowering.(cpu.Lowering)
	switch {
	case opts.Runtime.Device == "cuda" && spec.Lowering == nil:
		spec.Lowering = lowering.Plain{}
	case opts.Runtime.Device == "cuda" && forced:
		// Forms a caller forced, the plain ones where it left them open.
		forms.Forward = cmp.Or(forms.Forward, cpu.ConvForwardDirect)
		forms.Input = cmp.Or(forms.Input, cpu.ConvInputTranspose)
		forms.Weight = cmp.Or(forms.Weight, cpu.ConvWeightTrick)
		spec.Lowering = forms
	case spec.Lowering == nil || forced:
		if forms.NCHWcBlock == 0 {
			forms.NCHWcBlock = onnxrt.NCHWcBlockSize(opts.Runtime)
		}
		spec.Lowering = forms
	}
	if opts.Runtime.Device == "cuda" {
		spec.Threads = cmp.Or(spec.Threads, 1)
	}
	if spec.Threads == 0 {
		spec.Threads = opts.Runtime.ThreadCount()
	}
	return spec
}

// ErrCUDATraining refuses a training step on cuda (see CUDATrainingVar).
var ErrCUDATraining error = &setting.Error{Name: "device", Flag: true, Msg: setting.Msgf(" cuda: training steps crash "+
	"inside ONNX Runtime's CUDA provider of the GPU build (`make ort-gpu`; bench/RESULTS.md, \"GPU check\"): unlearning "+
	"and training run on the CPU for now (%s); evaluation (`%s`) runs on the GPU",
	setting.Use("device", "cpu"), setting.Command("eval", setting.Use("device", "cuda")))}

// CUDATrainingVar, set to 1, lets training steps run on cuda anyway: for
// bench/gpu_check.sh, which finds out whether they still crash.
const CUDATrainingVar = "UNLEARN_CUDA_TRAINING"

// CheckCUDATraining refuses training on cuda (ErrCUDATraining) unless
// $UNLEARN_CUDA_TRAINING=1; the commands call it before any work.
func CheckCUDATraining(device string) error {
	if device == "cuda" && os.Getenv(CUDATrainingVar) != "1" {
		return ErrCUDATraining
	}
	return nil
}

// NewEngineFromArtifacts opens a session for artifacts built from m.
func NewEngineFromArtifacts(m *graph.Model, art *autodiff.Artifacts, opts onnxrt.Options) (e *Engine, err error) {
	if err := CheckCUDATraining(opts.Device); err != nil {
		return nil, err
	}
	e = &Engine{
		art: art, g: m.Graph, inputs: art.Inputs, outputs: art.Outputs,
		fixedIn: map[int]*onnxrt.Tensor{}, fixedOut: map[int]*onnxrt.Tensor{},
		running: map[string][]float32{}, bufs: map[int]*batchBufs{},
	}
	// Close through a copy: `return nil, err` sets e to nil before this runs.
	built := e
	defer func() {
		if err != nil {
			built.Close()
		}
	}()
	inNames := make([]string, len(art.Inputs))
	for i, io := range art.Inputs {
		inNames[i] = io.Name
	}
	outNames := make([]string, len(art.Outputs))
	for i, io := range art.Outputs {
		outNames[i] = io.Name
	}
	e.m, e.opts, e.inNames, e.outNames, e.perBatch = m, opts, inNames, outNames, map[int]*batchRun{}
	if e.ortOutputs, err = ortOutputs(opts); err != nil {
		return nil, err
	}
	// With sessions per batch size, the dynamic graph never runs: no
	// session for it.
	if e.fixedBatchSessions = fixedBatchSessions(opts); !e.fixedBatchSessions {
		if e.sess, err = onnxrt.NewSessionForModel(art.Model, inNames, outNames, opts); err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
	}
	byName := map[string]*Param{}
	for i, io := range art.Inputs {
		switch io.Role {
		case "param", "state":
			v := m.Graph.LocalValue(io.Name)
			if v == nil || v.Init == nil {
				return nil, fmt.Errorf("train: training-graph input %q is not an initializer of the model", io.Name)
			}
			vals, err := v.Init.Float32s()
			if err != nil {
				return nil, fmt.Errorf("train: %s %q: %w", io.Role, io.Name, err)
			}
			t, err := onnxrt.NewFloat32(append([]int64{}, v.Init.Shape...), append([]float32{}, vals...))
			if err != nil {
				return nil, fmt.Errorf("train: %w", err)
			}
			e.fixedIn[i] = t
			if io.Role == "param" {
				p := &Param{Name: io.Name, Data: t.Float32s()}
				e.params = append(e.params, p)
				byName[io.Name] = p
			} else {
				e.running[io.Name] = t.Float32s()
			}
		case "images":
			if len(io.Shape) != 4 || io.Shape[1] < 0 || io.Shape[2] < 0 || io.Shape[3] < 0 {
				return nil, fmt.Errorf("train: image input %q has shape %v; want [N, C, H, W] with static C, H, W",
					io.Name, io.Shape)
			}
			e.imageShape = append([]int64{}, io.Shape[1:]...)
		}
	}
	// Running statistics that are not graph inputs (BNTraining does not read
	// them) are still kept and updated.
	for _, st := range art.BN {
		for _, name := range []string{st.RunningMean, st.RunningVar} {
			if name == "" || e.running[name] != nil {
				continue
			}
			v := m.Graph.LocalValue(name)
			if v == nil || v.Init == nil {
				return nil, fmt.Errorf("train: running statistic %q of %s is not an initializer", name, st.Node)
			}
			vals, err := v.Init.Float32s()
			if err != nil {
				return nil, fmt.Errorf("train: %q: %w", name, err)
			}
			e.running[name] = append([]float32{}, vals...)
		}
	}
	for i, io := range art.Outputs {
		switch io.Role {
		case "grad":
			p := byName[io.Of]
			if p == nil {
				return nil, fmt.Errorf("train: gradient output %q has no parameter input", io.Name)
			}
			shape := shapeOf(m.Graph, io.Of)
			cg, part := art.GradChannels[io.Of]
			if !part {
				t, err := onnxrt.NewFloat32(shape, make([]float32, len(p.Data)))
				if err != nil {
					return nil, fmt.Errorf("train: %w", err)
				}
				e.fixedOut[i] = t
				p.Grad = t.Float32s()
				break
			}
			pg, err := newPartialGrad(p, shape, cg)
			if err != nil {
				return nil, err
			}
			t, err := onnxrt.NewFloat32(pg.shape(shape), make([]float32, pg.outer*len(cg.Channels)*pg.inner))
			if err != nil {
				return nil, fmt.Errorf("train: %w", err)
			}
			e.fixedOut[i] = t
			pg.out = t.Float32s()
			p.Grad = make([]float32, len(p.Data))
			e.partial = append(e.partial, pg)
		case "bn_mean", "bn_var":
			if len(io.Shape) != 1 || io.Shape[0] < 0 {
				return nil, fmt.Errorf("train: BN statistic %q has shape %v", io.Name, io.Shape)
			}
			t, err := onnxrt.NewFloat32([]int64{io.Shape[0]}, make([]float32, io.Shape[0]))
			if err != nil {
				return nil, fmt.Errorf("train: %w", err)
			}
			e.fixedOut[i] = t
		case "logits":
			if len(io.Shape) == 2 && io.Shape[1] > 0 {
				e.classes = int(io.Shape[1])
			}
		}
	}
	if len(e.params) == 0 {
		return nil, errors.New("train: the training graph has no parameters")
	}
	if e.imageShape == nil {
		return nil, errors.New("train: the training graph has no image input")
	}
	if e.classes == 0 {
		return nil, errors.New("train: the number of classes (logits dimension 1) is not static")
	}
	return e, nil
}

// newPartialGrad checks a channel gradient's description against its
// parameter's shape.
func newPartialGrad(p *Param, shape []int64, cg autodiff.ChannelGrad) (partialGrad, error) {
	if cg.Axis < 0 || cg.Axis >= len(shape) {
		return partialGrad{}, fmt.Errorf("train: channel gradient of %q on axis %d of a rank-%d tensor",
			p.Name, cg.Axis, len(shape))
	}
	g := partialGrad{p: p, cg: cg, outer: 1, inner: 1, c: int(shape[cg.Axis])}
	for _, d := range shape[:cg.Axis] {
		g.outer *= int(d)
	}
	for _, d := range shape[cg.Axis+1:] {
		g.inner *= int(d)
	}
	for j, ch := range cg.Channels {
		if ch < 0 || int(ch) >= g.c || (j > 0 && ch <= cg.Channels[j-1]) {
			return partialGrad{}, fmt.Errorf("train: channel gradient of %q: channels %v not ascending within [0, %d)",
				p.Name, cg.Channels, g.c)
		}
	}
	return g, nil
}

// shape is the gradient output's shape: the parameter's with the channel
// axis shortened to the selected channels.
func (g *partialGrad) shape(param []int64) []int64 {
	s := append([]int64{}, param...)
	s[g.cg.Axis] = int64(len(g.cg.Channels))
	return s
}

func shapeOf(g *graph.Graph, name string) []int64 {
	return append([]int64{}, g.LocalValue(name).Init.Shape...)
}

// Params returns the trainable parameters in training-graph order. Data and
// Grad alias ONNX Runtime memory (Grad is Go memory for a gradient computed
// for some output channels only, autodiff.Spec.GradChannels: those
// channels' values, zero elsewhere); set Mask or Frozen to restrict updates.
func (e *Engine) Params() []*Param { return e.params }

// Param returns the parameter with the given initializer name, or nil.
func (e *Engine) Param(name string) *Param {
	for _, p := range e.params {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Artifacts returns the training graph and its description.
func (e *Engine) Artifacts() *autodiff.Artifacts { return e.art }

// ImageShape is [C, H, W] of one input image.
func (e *Engine) ImageShape() []int64 { return e.imageShape }

// Classes is the number of logits per example.
func (e *Engine) Classes() int { return e.classes }

// Running returns the running statistics (BatchNormalization mean and
// variance by initializer name); the slices are live.
func (e *Engine) Running() map[string][]float32 { return e.running }

func (e *Engine) buffers(n int) (*batchBufs, error) {
	if b := e.bufs[n]; b != nil {
		return b, nil
	}
	b := &batchBufs{in: map[int]*onnxrt.Tensor{}, out: map[int]*onnxrt.Tensor{}}
	var err error
	for i, io := range e.inputs {
		var t *onnxrt.Tensor
		switch io.Role {
		case "images":
			sh := append([]int64{int64(n)}, e.imageShape...)
			t, err = onnxrt.NewFloat32(sh, make([]float32, graph.NumElements(sh)))
		case "labels":
			t, err = onnxrt.NewInt64([]int64{int64(n)}, make([]int64, n))
		case "weights":
			t, err = onnxrt.NewFloat32([]int64{int64(n)}, make([]float32, n))
		case "teacher_logits":
			t, err = onnxrt.NewFloat32([]int64{int64(n), int64(e.classes)}, make([]float32, n*e.classes))
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
		b.in[i] = t
	}
	for i, io := range e.outputs {
		var t *onnxrt.Tensor
		switch io.Role {
		case "loss":
			t, err = onnxrt.NewFloat32([]int64{1}, make([]float32, 1))
		case "logits":
			t, err = onnxrt.NewFloat32([]int64{int64(n), int64(e.classes)}, make([]float32, n*e.classes))
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
		b.out[i] = t
	}
	e.bufs[n] = b
	return b, nil
}

// Inputs returns the batch input buffers for batch size n, to be filled in
// place before StepFilled: images (n·C·H·W), labels, weights (all 1 unless
// changed) and teacher logits (nil unless the loss is KL).
func (e *Engine) Inputs(n int) (x []float32, labels []int64, weights []float32, teacher []float32, err error) {
	b, err := e.buffers(n)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	for i, io := range e.inputs {
		t := b.in[i]
		switch io.Role {
		case "images":
			x = t.Float32s()
		case "labels":
			labels = t.Int64s()
		case "weights":
			weights = t.Float32s()
		case "teacher_logits":
			teacher = t.Float32s()
		}
	}
	return
}

// Step copies a batch into the engine and runs StepFilled.
func (e *Engine) Step(bt Batch) (StepResult, error) {
	n := len(bt.Labels)
	if n == 0 {
		return StepResult{}, errors.New("train: empty batch")
	}
	per := int(graph.NumElements(e.imageShape))
	if len(bt.X) != n*per {
		return StepResult{}, fmt.Errorf("train: batch of %d labels has %d image values, want %d", n, len(bt.X), n*per)
	}
	x, labels, weights, teacher, err := e.Inputs(n)
	if err != nil {
		return StepResult{}, err
	}
	copy(x, bt.X)
	copy(labels, bt.Labels)
	if weights != nil {
		if bt.Weights == nil {
			for i := range weights {
				weights[i] = 1
			}
		} else if len(bt.Weights) != n {
			return StepResult{}, fmt.Errorf("train: %d weights for %d labels", len(bt.Weights), n)
		} else {
			copy(weights, bt.Weights)
		}
	}
	if teacher != nil {
		if len(bt.Teacher) != n*e.classes {
			return StepResult{}, fmt.Errorf("train: %d teacher logits for %d examples of %d classes",
				len(bt.Teacher), n, e.classes)
		}
		copy(teacher, bt.Teacher)
	}
	return e.StepFilled(n)
}

// LoadBatch fills the input buffers for len(idx) examples of split (images,
// labels; weights set to 1) and returns the weights buffer for the caller to
// change.
func (e *Engine) LoadBatch(s *data.Split, idx []int) (weights []float32, err error) {
	x, labels, weights, _, err := e.Inputs(len(idx))
	if err != nil {
		return nil, err
	}
	if err := s.Batch(x, idx); err != nil {
		return nil, err
	}
	if err := s.BatchLabels(labels, idx); err != nil {
		return nil, err
	}
	for i := range weights {
		weights[i] = 1
	}
	return weights, nil
}

// LoadAugmented is LoadBatch followed by aug.Apply on the images: a
// training batch with augmentation. A nil aug makes it LoadBatch exactly.
func (e *Engine) LoadAugmented(s *data.Split, idx []int, aug *data.Augmenter) (weights []float32, err error) {
	weights, err = e.LoadBatch(s, idx)
	if err != nil || aug == nil {
		return weights, err
	}
	x, _, _, _, err := e.Inputs(len(idx))
	if err != nil {
		return nil, err
	}
	if err := aug.Apply(s, x, len(idx)); err != nil {
		return nil, err
	}
	return weights, nil
}

// StepFilled runs forward and backward on the n examples already in the
// input buffers: Param.Grad receives the gradients of the loss, and in
// BNTraining mode the running statistics are updated.
func (e *Engine) StepFilled(n int) (StepResult, error) {
	if e.closed {
		return StepResult{}, errors.New("train: engine closed")
	}
	b, err := e.buffers(n)
	if err != nil {
		return StepResult{}, err
	}
	ins := make([]*onnxrt.Tensor, len(e.inputs))
	for i := range e.inputs {
		if t := e.fixedIn[i]; t != nil {
			ins[i] = t
		} else {
			ins[i] = b.in[i]
		}
		if ins[i] == nil {
			return StepResult{}, fmt.Errorf("train: no tensor for training-graph input %q (role %s)",
				e.inputs[i].Name, e.inputs[i].Role)
		}
	}
	outs := make([]*onnxrt.Tensor, len(e.outputs))
	for i := range e.outputs {
		if t := e.fixedOut[i]; t != nil {
			outs[i] = t
		} else {
			outs[i] = b.out[i]
		}
		if outs[i] == nil {
			return StepResult{}, fmt.Errorf("train: no tensor for training-graph output %q", e.outputs[i].Name)
		}
	}
	sess, err := e.batchSession(n)
	if err != nil {
		return StepResult{}, err
	}
	if !e.ortOutputs {
		if err := sess.Run(ins, outs); err != nil {
			return StepResult{}, fmt.Errorf("train: %w", err)
		}
	} else if err := e.runCopying(sess, ins, outs); err != nil {
		return StepResult{}, err
	}
	for i := range e.partial {
		e.partial[i].scatter()
	}
	var res StepResult
	for i, io := range e.outputs {
		switch io.Role {
		case "loss":
			res.Loss = float64(outs[i].Float32s()[0])
		case "logits":
			res.Logits = outs[i].Float32s()
		}
	}
	if math.IsNaN(res.Loss) || math.IsInf(res.Loss, 0) {
		return res, fmt.Errorf("%w: loss is %v", ErrNonFinite, res.Loss)
	}
	if len(e.art.BN) > 0 {
		if err := e.updateRunning(n, outs); err != nil {
			return res, err
		}
	}
	return res, nil
}

// runCopying runs sess with outputs that ONNX Runtime allocates (host
// memory, copied from the device where a node ran elsewhere, as every
// forward pass of the tool gets its logits) and copies each into the
// engine's tensor of that output (outs), which must have its size.
func (e *Engine) runCopying(sess *onnxrt.Session, ins, outs []*onnxrt.Tensor) error {
	got := make([]*onnxrt.Tensor, len(outs))
	defer func() {
		for _, t := range got {
			if t != nil {
				t.Close()
			}
		}
	}()
	if err := sess.Run(ins, got); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	for i, t := range got {
		dst, src := outs[i].Float32s(), t.Float32s()
		if len(dst) != len(src) || src == nil {
			return fmt.Errorf("train: training-graph output %q: ONNX Runtime returned %v (%s), the engine holds %d values",
				e.outputs[i].Name, t.Shape(), t.DType(), len(dst))
		}
		copy(dst, src)
	}
	return nil
}

// updateRunning applies PyTorch's running-statistics update:
// rm ← (1−μ)·rm + μ·mean, rv ← (1−μ)·rv + μ·var·M/(M−1), M = N·∏spatial.
func (e *Engine) updateRunning(n int, outs []*onnxrt.Tensor) error {
	outIdx := map[string]int{}
	for i, io := range e.outputs {
		outIdx[io.Name] = i
	}
	for _, st := range e.art.BN {
		mu := float64(st.Momentum)
		m := float64(n) * float64(st.PerExample)
		if st.PerExample < 0 {
			return fmt.Errorf("train: %s: spatial size not static; cannot update running variance", st.Node)
		}
		corr := 1.0
		if m > 1 {
			corr = m / (m - 1)
		}
		if rm := e.running[st.RunningMean]; rm != nil {
			mean := outs[outIdx[st.MeanOut]].Float32s()
			for c := range rm {
				rm[c] = float32((1-mu)*float64(rm[c]) + mu*float64(mean[c]))
			}
		}
		if rv := e.running[st.RunningVar]; rv != nil {
			v := outs[outIdx[st.VarOut]].Float32s()
			for c := range rv {
				rv[c] = float32((1-mu)*float64(rv[c]) + mu*float64(v[c])*corr)
			}
		}
	}
	return nil
}

// WriteBack copies the engine's parameters and running statistics into the
// initializers of the same name in g (typically a clone of the model the
// engine was built from). It returns the number of tensors written.
func (e *Engine) WriteBack(g *graph.Graph) (int, error) {
	n := 0
	set := func(name string, vals []float32) error {
		v := g.LocalValue(name)
		if v == nil || v.Init == nil {
			return fmt.Errorf("train: write back: %q is not an initializer of the target graph", name)
		}
		if v.Init.Len() != int64(len(vals)) {
			return fmt.Errorf("train: write back: %q has %d elements, the engine %d", name, v.Init.Len(), len(vals))
		}
		if err := v.Init.SetFloat32s(vals); err != nil {
			return fmt.Errorf("train: write back %q: %w", name, err)
		}
		n++
		return nil
	}
	for _, p := range e.params {
		if err := set(p.Name, p.Data); err != nil {
			return n, err
		}
	}
	for name, vals := range e.running {
		if err := set(name, vals); err != nil {
			return n, err
		}
	}
	return n, nil
}

// Close releases the session and every tensor. Param.Data and Param.Grad
// must not be used afterwards.
func (e *Engine) Close() error {
	if e.closed {
		return nil
	}
	e.closed = true
	if e.sess != nil {
		e.sess.Close()
	}
	for _, r := range e.perBatch {
		r.sess.Close()
	}
	for _, t := range e.fixedIn {
		t.Close()
	}
	for _, t := range e.fixedOut {
		t.Close()
	}
	for _, b := range e.bufs {
		for _, t := range b.in {
			t.Close()
		}
		for _, t := range b.out {
			t.Close()
		}
	}
	return nil
}

// fixedBatchSessions says whether an engine runs each batch size in a
// session of its own, on a training graph built with the batch fixed: on
// cuda. With a symbolic batch, the graph computes shapes and counts at run
// time (Shape, Size, Gather, Cast, Div: a mean's 1/N, the batch
// statistics' counts), ONNX Runtime places them on the CPU provider and
// copies their results to the GPU at every step (11 MemcpyFromHost nodes
// for the demo model's graph in ONNX Runtime's verbose log on an H200),
// and the CUDA provider of the GPU build (a plugin execution provider)
// is suspected of crashing on such host-side values (bench/RESULTS.md,
// "GPU check"). Built for a fixed batch, every shape is static and the
// builder writes those values as constants. A test sets it on the CPU to
// compare both ways.
var fixedBatchSessions = func(o onnxrt.Options) bool { return o.Device == "cuda" }

// OutputsVar chooses how a training run returns its outputs: "bound",
// into the engine's own tensors (Param.Grad and the batch buffers), which
// ONNX Runtime writes directly; "ort", into tensors ONNX Runtime allocates,
// which the engine then copies into its own. The default is "bound" on the
// CPU and "ort" on cuda: the CUDA provider of the GPU build ran every
// forward pass (outputs ONNX Runtime allocates) and crashed on every
// training run (outputs bound), the plainest difference in how the two call
// ONNX Runtime (bench/RESULTS.md, "GPU check"). The copy costs one pass over
// the gradients per step.
const OutputsVar = "UNLEARN_ORT_OUTPUTS"

// ortOutputs reads OutputsVar for opts' device.
func ortOutputs(o onnxrt.Options) (bool, error) {
	switch v := os.Getenv(OutputsVar); v {
	case "":
		return o.Device == "cuda", nil
	case "ort":
		return true, nil
	case "bound":
		return false, nil
	default:
		return false, fmt.Errorf("train: $%s=%q: want ort or bound", OutputsVar, v)
	}
}

// batchRun is a session for one batch size and the artifacts it runs.
type batchRun struct {
	sess *onnxrt.Session
	art  *autodiff.Artifacts
}

// fixMu serializes building from a forward model whose batch dimension is
// fixed for the while (engines may share a model).
var fixMu sync.Mutex

// batchSession returns the session that runs batches of n examples: the
// engine's own, or, with fixedBatchSessions, one made on first use from
// the training graph built again (same spec) with the images' batch fixed
// at n. It must have the engine's inputs and outputs, in order. A run has
// at most two batch sizes (the batch and the last, partial one).
func (e *Engine) batchSession(n int) (*onnxrt.Session, error) {
	if !e.fixedBatchSessions {
		return e.sess, nil
	}
	if r := e.perBatch[n]; r != nil {
		return r.sess, nil
	}
	image := ""
	for _, io := range e.inputs {
		if io.Role == "images" {
			image = io.Name
		}
	}
	fixMu.Lock()
	restore := fixBatchDims(e.m.Graph, image, int64(n))
	art, err := autodiff.Build(e.m, e.art.Spec)
	restore()
	fixMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("train: the training graph for batches of %d: %w", n, err)
	}
	if !sameIO(art.Inputs, e.inputs) || !sameIO(art.Outputs, e.outputs) {
		return nil, fmt.Errorf("train: the training graph for batches of %d has other inputs or outputs than the engine's", n)
	}
	s, err := onnxrt.NewSessionForModel(art.Model, e.inNames, e.outNames, e.opts)
	if err != nil {
		return nil, fmt.Errorf("train: the training graph for batches of %d: %w", n, err)
	}
	e.perBatch[n] = &batchRun{sess: s, art: art}
	return s, nil
}

func sameIO(a, b []autodiff.IO) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Role != b[i].Role {
			return false
		}
	}
	return true
}

// fixBatchDims sets, in g's declared types (inputs, outputs, value_info),
// every dimension that carries the symbolic batch of input image (its
// first dimension) to n, and image's first dimension itself when it is
// unknown; it returns the function that puts the old types back.
func fixBatchDims(g *graph.Graph, image string, n int64) (restore func()) {
	param := ""
	if v := g.LocalValue(image); v != nil && v.Type != nil && len(v.Type.Shape) > 0 {
		param = v.Type.Shape[0].Param
	}
	type saved struct {
		v *graph.Value
		t *graph.Type
	}
	var undo []saved
	for _, list := range [][]*graph.Value{g.Inputs, g.Outputs, g.ValueInfo} {
		for _, v := range list {
			if v.Type == nil || len(v.Type.Shape) == 0 {
				continue
			}
			var c *graph.Type
			for i, d := range v.Type.Shape {
				if (param != "" && d.Param == param) || (i == 0 && v.Name == image && !d.Known()) {
					if c == nil {
						c = &graph.Type{DType: v.Type.DType, Shape: append([]graph.Dim{}, v.Type.Shape...)}
					}
					c.Shape[i] = graph.Dim{Size: n}
				}
			}
			if c != nil {
				undo = append(undo, saved{v, v.Type})
				v.Type = c
			}
		}
	}
	return func() {
		for _, u := range undo {
			u.v.Type = u.t
		}
	}
}
