package train

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/onnxrt"
	"github.com/unlearn-tool/unlearn/train/autodiff"
	"github.com/unlearn-tool/unlearn/train/lowering"
	"github.com/unlearn-tool/unlearn/train/lowering/cpu"
)

func loadModel(t *testing.T, name string) *graph.Model {
	t.Helper()
	m, err := onnxio.Load(testutil.Testdata(t, name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := graph.UntieIdentityInitializers(m.Graph); err != nil {
		t.Fatal(err)
	}
	return m
}

func refBatch(t *testing.T) Batch {
	t.Helper()
	z, err := data.ReadNPZ(testutil.Testdata(t, "ref", "batch.npz"))
	if err != nil {
		t.Fatal(err)
	}
	y, err := z["y"].Int64s()
	if err != nil {
		t.Fatal(err)
	}
	return Batch{X: z["x"].Float32s(), Labels: y}
}

func newEngine(t *testing.T, m *graph.Model, spec autodiff.Spec) *Engine {
	t.Helper()
	testutil.RequireORT(t)
	if err := onnxrt.Setup(onnxrt.Options{}); err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(m, EngineOptions{Runtime: onnxrt.Options{Threads: 2}, Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// The engine's gradients are the autodiff graph's: compare with PyTorch's
// reference gradients (computed in float64) on the reference batch.
func TestEngineGradientsMatchPyTorch(t *testing.T) {
	m := loadModel(t, "resnet_small_train.onnx")
	ref, err := data.ReadNPZ(testutil.Testdata(t, "ref", "resnet_small_train_grads_train.npz"))
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, m, autodiff.Spec{BN: autodiff.BNTraining})
	if _, err := e.Step(refBatch(t)); err != nil {
		t.Fatal(err)
	}
	for _, p := range e.Params() {
		want := ref[p.Name]
		if want == nil {
			t.Fatalf("no reference for %s", p.Name)
		}
		// This model has no conv biases before BN: no gradient is zero.
		if err := testutil.MaxRelErr(p.Grad, want.Float32s()); err > 1e-4 {
			t.Errorf("%s: max rel err %.3g", p.Name, err)
		}
	}
}

// One BNTraining step updates the running statistics as one PyTorch train()
// forward does (momentum 0.1, unbiased variance).
func TestEngineRunningStatistics(t *testing.T) {
	m := loadModel(t, "resnet_small_train.onnx")
	ref, err := data.ReadNPZ(testutil.Testdata(t, "ref", "resnet_small_train_bnstats.npz"))
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, m, autodiff.Spec{BN: autodiff.BNTraining})
	if _, err := e.Step(refBatch(t)); err != nil {
		t.Fatal(err)
	}
	if len(e.Running()) != len(ref) {
		t.Fatalf("%d running tensors, reference has %d", len(e.Running()), len(ref))
	}
	for name, got := range e.Running() {
		want := ref[name]
		if want == nil {
			t.Fatalf("no reference for %s", name)
		}
		if err := testutil.MaxRelErr(got, want.Float32s()); err > 1e-5 {
			t.Errorf("%s: max rel err %.3g", name, err)
		}
	}
	// Inference mode leaves them alone.
	m2 := loadModel(t, "resnet_small_train.onnx")
	e2 := newEngine(t, m2, autodiff.Spec{BN: autodiff.BNInference})
	before := map[string][]float32{}
	for _, name := range []string{"bn1.running_mean", "bn1.running_var"} {
		v, _ := m2.Graph.LocalValue(name).Init.Float32s()
		before[name] = v
	}
	if _, err := e2.Step(refBatch(t)); err != nil {
		t.Fatal(err)
	}
	for name, v := range before {
		after, _ := m2.Graph.LocalValue(name).Init.Float32s()
		for i := range v {
			if v[i] != after[i] {
				t.Fatalf("%s changed in inference mode", name)
			}
		}
	}
}

// SGD with momentum and weight decay through the engine: the loss goes
// down, masked-out elements keep every bit, and WriteBack puts the result
// into a model that evaluates to the engine's logits.
func TestEngineTrainMaskWriteBack(t *testing.T) {
	m := loadModel(t, "resnet_small_train.onnx")
	e := newEngine(t, m, autodiff.Spec{BN: autodiff.BNInference})
	b := refBatch(t)
	rng := rand.New(rand.NewPCG(1, 2))
	orig := map[string][]float32{}
	for _, p := range e.Params() {
		p.Mask = make([]bool, len(p.Data))
		for i := range p.Mask {
			p.Mask[i] = rng.IntN(2) == 0
		}
		orig[p.Name] = append([]float32{}, p.Data...)
	}
	opt := &SGD{Momentum: 0.9, WeightDecay: 5e-4}
	first := math.NaN()
	var last float64
	for step := 0; step < 10; step++ {
		r, err := e.Step(b)
		if err != nil {
			t.Fatal(err)
		}
		if step == 0 {
			first = r.Loss
		}
		last = r.Loss
		if err := opt.Step(e.Params(), 5e-4); err != nil { // |g|² ≈ 90 here: larger steps diverge
			t.Fatal(err)
		}
	}
	if !(last < first*0.7) {
		t.Errorf("loss %.4f → %.4f: did not go down", first, last)
	}
	changed := 0
	for _, p := range e.Params() {
		for i, keep := range p.Mask {
			if !keep && math.Float32bits(p.Data[i]) != math.Float32bits(orig[p.Name][i]) {
				t.Fatalf("%s[%d] outside the mask changed", p.Name, i)
			}
			if keep && p.Data[i] != orig[p.Name][i] {
				changed++
			}
		}
	}
	if changed == 0 {
		t.Fatal("nothing inside the mask changed")
	}
	// Write back into a fresh copy and compare logits with the engine's.
	r, err := e.Step(b)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]float32{}, r.Logits...)
	dst := loadModel(t, "resnet_small_train.onnx")
	if n, err := e.WriteBack(dst.Graph); err != nil || n != len(e.Params())+len(e.Running()) {
		t.Fatalf("WriteBack: %d, %v", n, err)
	}
	e2 := newEngine(t, dst, autodiff.Spec{BN: autodiff.BNInference})
	r2, err := e2.Step(b)
	if err != nil {
		t.Fatal(err)
	}
	if d := testutil.MaxRelErr(r2.Logits, want); d > 1e-6 {
		t.Errorf("logits after write back differ: %.3g", d)
	}
}

func TestEngineErrors(t *testing.T) {
	m := loadModel(t, "resnet_small_train.onnx")
	e := newEngine(t, m, autodiff.Spec{BN: autodiff.BNInference})
	b := refBatch(t)
	if _, err := e.Step(Batch{X: b.X[:10], Labels: b.Labels}); err == nil {
		t.Error("short image buffer accepted")
	}
	if _, err := e.Step(Batch{X: b.X, Labels: b.Labels, Weights: []float32{1}}); err == nil {
		t.Error("wrong weight count accepted")
	}
	// Non-finite parameters stop the step with ErrNonFinite.
	e.Params()[0].Data[0] = float32(math.NaN())
	if _, err := e.Step(b); err == nil {
		t.Error("NaN loss not reported")
	}
}

// With a training graph built for each batch size (what cuda uses;
// fixedBatchSessions), the gradients are the dynamic graph's: PyTorch's on
// the reference batch, and the same as the dynamic graph's on a smaller
// batch, which gets a graph and session of its own; and the fixed graphs
// compute no shapes.
func TestEngineFixedBatchSessions(t *testing.T) {
	old := fixedBatchSessions
	fixedBatchSessions = func(onnxrt.Options) bool { return true }
	t.Cleanup(func() { fixedBatchSessions = old })
	ref, err := data.ReadNPZ(testutil.Testdata(t, "ref", "resnet_small_train_grads_train.npz"))
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, loadModel(t, "resnet_small_train.onnx"), autodiff.Spec{BN: autodiff.BNTraining})
	b := refBatch(t)
	if _, err := e.Step(b); err != nil {
		t.Fatal(err)
	}
	for _, p := range e.Params() {
		if err := testutil.MaxRelErr(p.Grad, ref[p.Name].Float32s()); err > 1e-4 {
			t.Errorf("%s: max rel err %.3g against PyTorch", p.Name, err)
		}
	}
	// A batch of 5: a second fixed session, the dynamic session's numbers.
	n := 5
	small := Batch{X: b.X[:n*len(b.X)/len(b.Labels)], Labels: b.Labels[:n]}
	fixedBatchSessions = old
	d := newEngine(t, loadModel(t, "resnet_small_train.onnx"), autodiff.Spec{BN: autodiff.BNTraining})
	fixedBatchSessions = func(onnxrt.Options) bool { return true }
	e2 := newEngine(t, loadModel(t, "resnet_small_train.onnx"), autodiff.Spec{BN: autodiff.BNTraining})
	if _, err := e2.Step(b); err != nil {
		t.Fatal(err)
	}
	rd, err := d.Step(small)
	if err != nil {
		t.Fatal(err)
	}
	re, err := e2.Step(small)
	if err != nil {
		t.Fatal(err)
	}
	if len(e2.perBatch) != 2 || len(d.perBatch) != 0 {
		t.Fatalf("sessions by batch size: %d fixed (want 2), %d on the dynamic engine (want 0)", len(e2.perBatch), len(d.perBatch))
	}
	// Built with the batch fixed, the graph computes no shape at run time:
	// no node that ONNX Runtime would run on the host beside a GPU.
	for size, r := range e2.perBatch {
		for _, nd := range r.art.Model.Graph.Nodes() {
			switch nd.OpType {
			case "Shape", "Size":
				t.Errorf("the training graph for batches of %d has %s node %q", size, nd.OpType, nd.Name)
			}
		}
	}
	dynamicShapes := 0
	for _, nd := range d.art.Model.Graph.Nodes() {
		if nd.OpType == "Shape" || nd.OpType == "Size" {
			dynamicShapes++
		}
	}
	if dynamicShapes == 0 {
		t.Error("the dynamic training graph has no Shape or Size node: the check above shows nothing")
	}
	if math.Abs(rd.Loss-re.Loss) > 1e-6*math.Abs(rd.Loss) {
		t.Errorf("loss on %d examples: fixed %v, dynamic %v", n, re.Loss, rd.Loss)
	}
	for i, p := range e2.Params() {
		if err := testutil.MaxRelErr(p.Grad, d.Params()[i].Grad); err > 1e-5 {
			t.Errorf("%s on %d examples: max rel err %.3g, fixed against dynamic", p.Name, n, err)
		}
	}
}

// TestEngineSpecCUDA: on cuda the training graph takes the plain Conv
// forms (Conv, ConvTranspose, the convolution trick) and none of the CPU
// provider's: no Winograd transforms, no com.microsoft.nchwc nodes, no
// thread-pool rewrites; a form the caller forces stays.
func TestEngineSpecCUDA(t *testing.T) {
	spec := EngineSpec(EngineOptions{Runtime: onnxrt.Options{Device: "cuda", Threads: 16}})
	if spec.Lowering != (lowering.Plain{}) || spec.Threads != 1 {
		t.Errorf("cuda spec: lowering %#v, threads %d; want lowering.Plain, threads 1", spec.Lowering, spec.Threads)
	}
	forced := EngineSpec(EngineOptions{Runtime: onnxrt.Options{Device: "cuda"}, Spec: autodiff.Spec{Lowering: cpu.Lowering{Weight: cpu.ConvWeightGemm}}})
	want := cpu.Lowering{Forward: cpu.ConvForwardDirect, Input: cpu.ConvInputTranspose, Weight: cpu.ConvWeightGemm}
	if forced.Lowering != want {
		t.Errorf("forced forms on cuda: %#v, want %#v", forced.Lowering, want)
	}
	if got := EngineSpec(EngineOptions{Runtime: onnxrt.Options{Threads: 2}}); got.Lowering == nil {
		t.Errorf("cpu spec without a lowering")
	} else if _, ok := got.Lowering.(cpu.Lowering); !ok {
		t.Errorf("cpu spec: lowering %#v, want a cpu.Lowering", got.Lowering)
	}
	art, err := autodiff.Build(loadModel(t, "resnet_small_train.onnx"), spec)
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]int{}
	for _, n := range art.Model.Graph.Nodes() {
		ops[n.Domain+":"+n.OpType]++
	}
	if ops[":Conv"] == 0 || ops[":ConvTranspose"] == 0 {
		t.Errorf("no plain Conv or ConvTranspose nodes: %v", ops)
	}
	for op := range ops {
		if op[0] != ':' {
			t.Errorf("a node outside ai.onnx on cuda: %s", op)
		}
	}
	// The CPU graph of the same model uses other forms, so the check above
	// has something to tell apart.
	onCPU, err := autodiff.Build(loadModel(t, "resnet_small_train.onnx"), autodiff.Spec{Threads: 2, Lowering: cpu.Lowering{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(onCPU.Model.Graph.Nodes()) == len(art.Model.Graph.Nodes()) {
		t.Errorf("the cuda graph has as many nodes as the CPU one (%d): the forms did not change", len(onCPU.Model.Graph.Nodes()))
	}
}

// TestEngineORTOutputs: with the outputs ONNX Runtime allocates and the
// engine copies (OutputsVar=ort, cuda's default), a step gives the same
// loss, logits, gradients (whole and channel-restricted) and running
// statistics, bit for bit, as with the outputs bound to the engine's
// tensors, over two steps and two batch sizes; an unknown value is refused,
// naming the variable.
func TestEngineORTOutputs(t *testing.T) {
	m := loadModel(t, "resnet_small_train.onnx")
	nm, mask := channelMask(t, m, 0.1, 31)
	var names []string
	for _, p := range nm.Params {
		if mask[p.Value.Name] != nil {
			names = append(names, p.Value.Name)
		}
	}
	b := refBatch(t)
	n := 5
	small := Batch{X: b.X[:n*len(b.X)/len(b.Labels)], Labels: b.Labels[:n]}
	for _, spec := range []autodiff.Spec{
		{BN: autodiff.BNTraining},
		{BN: autodiff.BNTraining, Params: names, GradChannels: MaskChannels(nm, mask)},
	} {
		engines := map[string]*Engine{}
		for _, mode := range []string{"bound", "ort"} {
			t.Setenv(OutputsVar, mode)
			engines[mode] = newEngine(t, m, spec)
		}
		bound, ort := engines["bound"], engines["ort"]
		if bound.ortOutputs || !ort.ortOutputs {
			t.Fatalf("%s: ortOutputs bound %v, ort %v", OutputsVar, bound.ortOutputs, ort.ortOutputs)
		}
		for step, bt := range []Batch{b, small} {
			rb, err := bound.Step(bt)
			if err != nil {
				t.Fatal(err)
			}
			ro, err := ort.Step(bt)
			if err != nil {
				t.Fatal(err)
			}
			if rb.Loss != ro.Loss || !slices.Equal(rb.Logits, ro.Logits) || len(ro.Logits) != len(bt.Labels)*10 {
				t.Errorf("step %d (restricted %v): loss %v and %v, %d and %d logits", step, spec.GradChannels != nil, rb.Loss, ro.Loss, len(rb.Logits), len(ro.Logits))
			}
			for i, p := range bound.Params() {
				if q := ort.Params()[i]; !slices.Equal(p.Grad, q.Grad) {
					t.Errorf("step %d: %s: gradients differ", step, p.Name)
				}
			}
			for name, rm := range bound.running {
				if !slices.Equal(rm, ort.running[name]) {
					t.Errorf("step %d: running statistic %s differs", step, name)
				}
			}
		}
	}
	t.Setenv(OutputsVar, "gpu")
	if _, err := NewEngine(m, EngineOptions{Runtime: onnxrt.Options{Threads: 2}}); err == nil || !strings.Contains(err.Error(), OutputsVar) {
		t.Errorf("%s=gpu: %v", OutputsVar, err)
	}
}
