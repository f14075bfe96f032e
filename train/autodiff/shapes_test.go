package autodiff

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxio"
)

// loadShapes loads a model of testdata/shapes (make_shapes.py).
func loadShapes(t *testing.T, name string) *graph.Model {
	t.Helper()
	m, err := onnxio.Load(testutil.Testdata(t, "shapes", name))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// forgetDeclaredShapes drops the shapes the file declares for values other
// than the graph inputs, so that only the shape inference can give them.
func forgetDeclaredShapes(g *graph.Graph) {
	for _, v := range append(slices.Clone(g.ValueInfo), g.Outputs...) {
		if v.Type != nil {
			v.Type = &graph.Type{DType: v.Type.DType}
		}
	}
}

// trainStep runs one step of art, the training graph of m, in ONNX Runtime
// on a batch of n examples of the given image shape and returns its
// outputs.
func trainStep(t *testing.T, m *graph.Model, art *Artifacts, n int64, image []int64) map[string]*graph.Tensor {
	t.Helper()
	r := newRunner(t, art)
	feeds := map[string]*graph.Tensor{}
	for _, io := range art.Inputs {
		switch io.Role {
		case "images":
			shape := append([]int64{n}, image...)
			v := make([]float32, graph.NumElements(shape))
			for i := range v {
				v[i] = float32(math.Sin(float64(i)))
			}
			feeds[io.Name] = graph.NewFloat32(io.Name, shape, v)
		case "labels":
			l := make([]int64, n)
			for i := range l {
				l[i] = int64(i % 10)
			}
			feeds[io.Name] = graph.NewInt64(io.Name, []int64{n}, l)
		case "weights":
			w := make([]float32, n)
			for i := range w {
				w[i] = 1
			}
			feeds[io.Name] = graph.NewFloat32(io.Name, []int64{n}, w)
		case "param", "state":
			feeds[io.Name] = m.Graph.LocalValue(io.Name).Init
		}
	}
	return r.run(t, feeds)
}

// TestWindowPadShapes: the padded window partition of swin_t, as PyTorch
// exports it (testdata/shapes/window_pad.onnx), with every declared shape
// but the input's removed. The inference must follow the pads through
// Shape, Gather, Mod, Sub, Concat, Reshape, Slice with step −1 and
// Transpose (Pad's gradient needs them as constants) and the window sizes
// through the Reshapes whose targets Shape nodes compute, to logits of
// rank 2; swin_t failed there with "got rank -1". One step then runs.
func TestWindowPadShapes(t *testing.T) {
	m := loadShapes(t, "window_pad.onnx")
	forgetDeclaredShapes(m.Graph)
	if err := CheckSupported(m); err != nil {
		t.Fatalf("CheckSupported: %v", err)
	}
	art, err := Build(m, Spec{})
	if err != nil {
		t.Fatal(err)
	}
	out := trainStep(t, m, art, 3, []int64{3, 32, 32})
	if l := out["loss"]; l == nil || math.IsNaN(vals(t, l)[0]) || vals(t, l)[0] <= 0 {
		t.Errorf("loss %v", out["loss"])
	}
	if lg := out["logits"]; lg == nil || !slices.Equal(lg.Shape, []int64{3, 10}) {
		t.Errorf("logits %v, want shape [3 10]", lg)
	}
	if g := out["grad/stem.weight"]; g == nil || !slices.Equal(g.Shape, []int64{8, 3, 4, 4}) {
		t.Errorf("grad/stem.weight %v", g)
	}
}

// TestDeclaredLogitsShape: a Reshape whose target's length no shape rule
// can tell (testdata/shapes/lost_rank.onnx: Unique has no rule) loses the
// rank; the logits' declared [batch, 10] gives it back, so CheckSupported
// and Build accept the model and a step runs. Without the declaration the
// refusal names the logits and the node where the rank was first lost, the
// Unique.
func TestDeclaredLogitsShape(t *testing.T) {
	m := loadShapes(t, "lost_rank.onnx")
	if err := CheckSupported(m); err != nil {
		t.Fatalf("CheckSupported with the declared logits: %v", err)
	}
	art, err := Build(m, Spec{})
	if err != nil {
		t.Fatal(err)
	}
	out := trainStep(t, m, art, 2, []int64{4, 6})
	if lg := out["logits"]; lg == nil || !slices.Equal(lg.Shape, []int64{2, 10}) {
		t.Errorf("logits %v, want shape [2 10]", lg)
	}
	if g := out["grad/fc.weight"]; g == nil || !slices.Equal(g.Shape, []int64{24, 10}) {
		t.Errorf("grad/fc.weight %v", g)
	}

	forgetDeclaredShapes(m.Graph)
	err = CheckSupported(m)
	if !errors.Is(err, ErrModel) || !strings.Contains(err.Error(), `"logits"`) ||
		!strings.Contains(err.Error(), `Unique node "unique"`) || !strings.Contains(err.Error(), "rank 2") {
		t.Errorf("CheckSupported without the declaration: %v; want ErrModel naming the logits and the Unique node", err)
	}
	if _, err := Build(m, Spec{}); !errors.Is(err, ErrModel) {
		t.Errorf("Build without the declaration: %v", err)
	}
}

// TestPadUnknownPadsKeepsRank: Pad keeps its input's rank even when its
// pads are not known, so the rank survives to the logits; the gradient
// rule then refuses the node by name, since it needs the pads.
func TestPadUnknownPadsKeepsRank(t *testing.T) {
	f := newFG(t, graph.Float, 1)
	x := f.param("x", 2, 5)
	pads := f.op("Unique", []*graph.Value{f.i1(0, 1, 0, 1)}) // [0 1], unknown to the inference
	pads = f.op("Concat", []*graph.Value{pads, pads}, aI("axis", 0))
	y := f.op("Pad", []*graph.Value{x, pads})
	m := f.model(y)
	b := newBuilder(m.Graph, 17, Spec{})
	for _, n := range m.Graph.Nodes() {
		b.infer(n)
	}
	if r := b.rank(y); r != 2 {
		t.Errorf("rank of Pad's output %d, want 2", r)
	}
	_, err := Build(m, Spec{})
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "Pad needs constant pads") {
		t.Errorf("Build: %v; want the Pad rule's refusal", err)
	}
}
