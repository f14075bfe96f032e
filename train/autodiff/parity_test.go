package autodiff

import (
	"math"
	"os"
	"testing"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/onnxrt"
	"github.com/unlearn-tool/unlearn/train/lowering/cpu"
)

// parityTol is the acceptance bound: max relative error per tensor.
const parityTol = 1e-4

var parityModels = []string{"resnet_small_fused", "resnet_small_train", "vgg_small", "vit_small", "vit_small_op13"}

func loadNPZ(t *testing.T, name string) map[string]*data.Array {
	t.Helper()
	p := testutil.Testdata(t, "ref", name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("reference %s not generated yet", name)
	}
	m, err := data.ReadNPZ(p)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func loadModel(t *testing.T, name string) *graph.Model {
	t.Helper()
	p := testutil.Testdata(t, name+".onnx")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("model %s not generated yet", name)
	}
	m, err := onnxio.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	// Identity-merged initializers tie parameters that PyTorch keeps apart.
	if _, err := graph.UntieIdentityInitializers(m.Graph); err != nil {
		t.Fatal(err)
	}
	return m
}

func f32Tensor(name string, a *data.Array) *graph.Tensor {
	shape := make([]int64, len(a.Shape))
	for i, d := range a.Shape {
		shape[i] = int64(d)
	}
	return graph.NewFloat32(name, shape, a.Float32s())
}

// feedsFor builds the inputs of a training graph from the reference batch
// and the model's initializers.
func feedsFor(t *testing.T, m *graph.Model, art *Artifacts) map[string]*graph.Tensor {
	t.Helper()
	batch := loadNPZ(t, "batch.npz")
	x := batch["x"]
	ys, err := batch["y"].Int64s()
	if err != nil {
		t.Fatal(err)
	}
	n := int64(len(ys))
	w := make([]float32, n)
	for i := range w {
		w[i] = 1
	}
	feeds := map[string]*graph.Tensor{
		"labels":  graph.NewInt64("labels", []int64{n}, ys),
		"weights": graph.NewFloat32("weights", []int64{n}, w),
	}
	for _, io := range art.Inputs {
		switch io.Role {
		case "images":
			feeds[io.Name] = f32Tensor(io.Name, x)
		case "param", "state":
			feeds[io.Name] = m.Graph.LocalValue(io.Name).Init
		}
	}
	return feeds
}

func TestParityPyTorch(t *testing.T) {
	// Also with the Conv nodes on ONNX Runtime's NCHWc kernels (lower_nchwc.go,
	// opt-in) where this machine has them.
	blocks := []int64{0}
	if onnxrt.Setup(onnxrt.Options{LibPath: testutil.LibPath()}) == nil {
		if B := onnxrt.NCHWcBlockSize(onnxrt.Options{}); B > 0 {
			blocks = append(blocks, B)
		}
	}
	for _, name := range parityModels {
		for _, mode := range []BNMode{BNInference, BNTraining} {
			for _, block := range blocks {
				sub := name + "/" + mode.String()
				if block > 0 {
					sub += "/nchwc"
				}
				t.Run(sub, func(t *testing.T) { parityCase(t, name, mode, block, 0) })
			}
			// The lowering for many threads (per-channel Mul and Add).
			t.Run(name+"/"+mode.String()+"/threads16", func(t *testing.T) { parityCase(t, name, mode, 0, 16) })
		}
	}
}

func parityCase(t *testing.T, name string, mode BNMode, block int64, threads int) {
	m := loadModel(t, name)
	suffix := "eval"
	if mode == BNTraining {
		suffix = "train"
	}
	ref := loadNPZ(t, name+"_grads_"+suffix+".npz")
	art, err := Build(m, Spec{BN: mode, Lowering: cpu.Lowering{NCHWcBlock: block}, Threads: threads})
	if err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, art)
	out := r.run(t, feedsFor(t, m, art))
	if mode == BNInference {
		lref := loadNPZ(t, name+"_logits.npz")["logits"].Float32s()
		logits, _ := out[m.Graph.Outputs[0].Name].Float32s()
		if e := testutil.MaxRelErr(logits, lref); e > parityTol {
			t.Errorf("logits: max rel err %.3g", e)
		}
	}
	have := map[string]bool{}
	worst := 0.0
	// Some gradients are zero in exact arithmetic (a conv bias
	// before a training-mode BatchNormalization, attention key
	// biases: softmax ignores a shift); their float64 reference
	// is ~1e-8 of the largest gradient, and a relative error
	// against it means nothing. A tensor whose reference is
	// below zeroBelow × the model's largest reference entry is
	// measured against zeroFloor × that entry instead; every
	// other tensor against its own largest entry.
	const zeroBelow, zeroFloor = 1e-5, 1e-2
	gmax := 0.0
	for _, w := range ref {
		for _, v := range w.Float32s() {
			gmax = max(gmax, math.Abs(float64(v)))
		}
	}
	for _, p := range art.Params {
		have[p] = true
		want, ok := ref[p]
		if !ok {
			t.Errorf("parameter %q has no PyTorch reference gradient", p)
			continue
		}
		got, _ := out["grad/"+p].Float32s()
		floor := 0.0
		if maxAbs(want.Float32s()) < zeroBelow*gmax {
			floor = zeroFloor * gmax
		}
		e := maxRelErrFloor(got, want.Float32s(), floor)
		worst = max(worst, e)
		if e > parityTol {
			t.Errorf("grad/%s: max rel err %.3g > %g", p, e, parityTol)
		}
	}
	for k := range ref {
		if !have[k] {
			t.Errorf("PyTorch has a gradient for %q, the training graph does not", k)
		}
	}
	t.Logf("%d parameters, worst max rel err %.3g, %d nodes", len(art.Params), worst, len(art.Model.Graph.Nodes()))
}

// maxRelErrFloor is max|a−b| / max(max|b|, floor).
func maxRelErrFloor(a, b []float32, floor float64) float64 {
	var d, r float64
	for i := range a {
		d = max(d, math.Abs(float64(a[i])-float64(b[i])))
		if math.IsNaN(float64(a[i])) {
			return math.Inf(1)
		}
		r = max(r, math.Abs(float64(b[i])))
	}
	return d / max(r, floor, 1e-30)
}

func maxAbs(a []float32) float64 {
	m := 0.0
	for _, v := range a {
		m = max(m, math.Abs(float64(v)))
	}
	return m
}
