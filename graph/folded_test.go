package graph_test

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
)

// DetectFoldedBN: a Conv whose weight and bias are PyTorch's folded
// constants ("onnx::Conv_<n>") in a graph without BatchNormalization is a
// folded export; state_dict names, a missing bias, or any
// BatchNormalization node in the graph are not. (The real exports are
// checked in cmd/unlearn's TestInspectFoldedBatchNorm.)
func TestDetectFoldedBN(t *testing.T) {
	cnn := func(w, bias string, bn bool) *graph.Graph {
		b := newBuilder(t)
		x := b.input("input", -1, 1, 4, 4)
		in := vals(x, b.w(w, 2, 1, 3, 3))
		if bias != "" {
			in = append(in, b.w(bias, 2))
		}
		c := b.op("Conv", in, attrInts("pads", 1, 1, 1, 1))
		if bn {
			c = b.op("BatchNormalization", vals(c, b.w("bn.weight", 2), b.w("bn.bias", 2), b.w("bn.running_mean", 2), b.w("bn.running_var", 2)))
		}
		b.output(b.op("Gemm", vals(b.op("Flatten", vals(c), attrI("axis", 1)), b.w("fc.weight", 3, 32)), attrI("transB", 1)))
		return b.g
	}
	f := graph.DetectFoldedBN(cnn("onnx::Conv_26", "onnx::Conv_27", false))
	if f == nil || f.Convs != 1 || f.Example != "onnx::Conv_26" {
		t.Fatalf("folded export: %+v", f)
	}
	for _, want := range []string{"1 convolution(s)", "onnx::Conv_26", graph.ReexportAdvice} {
		if !strings.Contains(f.Note(), want) {
			t.Errorf("note %q lacks %q", f.Note(), want)
		}
	}
	for name, g := range map[string]*graph.Graph{
		"state_dict names":       cnn("conv.weight", "conv.bias", false),
		"no bias":                cnn("onnx::Conv_26", "", false),
		"BatchNormalization too": cnn("onnx::Conv_26", "onnx::Conv_27", true),
	} {
		if f := graph.DetectFoldedBN(g); f != nil {
			t.Errorf("%s: reported as folded: %+v", name, f)
		}
	}
}

// RestoreBN puts an identity BatchNormalization after each folded
// convolution, initialised from the given statistics (weight √(σ²+ε),
// bias μ), and FoldBackBN folds it again by PyTorch's formula: a channel
// whose normalization changed gets W·s and (b−μ)·s+β with s = γ/√(σ²+ε);
// a kept channel its weights bit for bit; the graph returns to its
// exported form.
func TestRestoreAndFoldBackBN(t *testing.T) {
	b := newBuilder(t)
	x := b.input("input", -1, 1, 4, 4)
	w, bias := b.w("onnx::Conv_26", 2, 1, 3, 3), b.w("onnx::Conv_27", 2)
	c := b.op("Conv", vals(x, w, bias), attrInts("pads", 1, 1, 1, 1))
	r := b.op("Relu", vals(c))
	b.output(b.op("Gemm", vals(b.op("Flatten", vals(r), attrI("axis", 1)), b.w("fc.weight", 3, 32)), attrI("transB", 1)))
	f := graph.DetectFoldedBN(b.g)
	if f == nil || len(f.Nodes) != 1 {
		t.Fatalf("DetectFoldedBN: %+v", f)
	}
	w0, _ := w.Init.Float32s()
	b0, _ := bias.Init.Float32s()
	mean, variance := [][]float64{{0.5, -1}}, [][]float64{{4, 0.25}}
	rs, err := graph.RestoreBN(b.g, f.Nodes, mean, variance)
	if err != nil {
		t.Fatal(err)
	}
	bn := rs[0].BN
	relu, _ := r.Producer()
	if bn.Input(0) != c || relu.Input(0) != bn.Output(0) {
		t.Fatalf("BatchNormalization not between Conv and Relu: %v → %v", bn.Input(0).Name, relu.Input(0).Name)
	}
	if graph.DetectFoldedBN(b.g) != nil {
		t.Error("a restored graph is still reported as folded")
	}
	gamma, _ := bn.Input(1).Init.Float32s()
	beta, _ := bn.Input(2).Init.Float32s()
	if want := float32(math.Sqrt(4 + graph.BNEpsilon)); gamma[0] != want || beta[0] != 0.5 || beta[1] != -1 {
		t.Errorf("weight %v bias %v, want √(σ²+ε) = %v and μ", gamma, beta, want)
	}
	// Channel 0 trained: its normalization now scales by 2 and shifts by 3.
	if err := bn.Input(1).Init.SetFloat32s([]float32{float32(2 * math.Sqrt(4+graph.BNEpsilon)), gamma[1]}); err != nil {
		t.Fatal(err)
	}
	if err := bn.Input(2).Init.SetFloat32s([]float32{3, beta[1]}); err != nil {
		t.Fatal(err)
	}
	if err := graph.FoldBackBN(b.g, rs, func(_ *graph.Node, k int) bool { return k == 1 }); err != nil {
		t.Fatal(err)
	}
	w1, _ := w.Init.Float32s()
	b1, _ := bias.Init.Float32s()
	for j := 0; j < 9; j++ {
		if got, want := w1[j], float32(2*float64(w0[j])); math.Abs(float64(got-want)) > 1e-6*math.Abs(float64(want))+1e-7 {
			t.Errorf("channel 0 weight %d: %v, want %v", j, got, want)
		}
		if w1[9+j] != w0[9+j] {
			t.Errorf("kept channel 1 weight %d changed: %v → %v", j, w0[9+j], w1[9+j])
		}
	}
	if want := (float64(b0[0])-0.5)*2 + 3; math.Abs(float64(b1[0])-want) > 1e-6 {
		t.Errorf("channel 0 bias %v, want %v", b1[0], want)
	}
	if b1[1] != b0[1] {
		t.Errorf("kept channel 1 bias changed: %v → %v", b0[1], b1[1])
	}
	for _, n := range b.g.Nodes() {
		if n.OpType == "BatchNormalization" {
			t.Errorf("BatchNormalization left after folding: %v", n)
		}
	}
	if relu.Input(0) != c || len(b.g.Initializers) != 3 {
		t.Errorf("graph not back in its exported form: Relu reads %q, %d initializers", relu.Input(0).Name, len(b.g.Initializers))
	}
}

// DetectFoldedBN counts a folded convolution whose bias PyTorch's exporter
// shares with another's behind Identity nodes: in an untrained model every
// folded bias is zero, the exporter keeps one copy and feeds the others
// through Identity (a ResNet-18 was reported folded into 4 convolutions by
// inspect and the first note, and 20 by the note after untying). The count
// is the same before and after UntieIdentityInitializers; an Identity
// whose source is also a graph input, which untying leaves alone, is not
// counted.
func TestDetectFoldedBNSharedBiases(t *testing.T) {
	b := newBuilder(t)
	x := b.input("input", -1, 1, 4, 4)
	zero, err := b.g.AddInitializer(graph.NewFloat32("onnx::Conv_11", []int64{1}, []float32{0}))
	if err != nil {
		t.Fatal(err)
	}
	identity := func(in *graph.Value, out string) *graph.Value {
		n, err := b.g.AddNode("Identity", "", "Identity_"+out, vals(in), []string{out})
		if err != nil {
			t.Fatal(err)
		}
		return n.Output(0)
	}
	// conv 1 reads the zero bias itself, conv 2 through one Identity,
	// conv 3 through two.
	h := x
	for i, bias := range []*graph.Value{
		zero,
		identity(zero, "onnx::Conv_14"),
		identity(identity(zero, "shared_zero"), "onnx::Conv_17"),
	} {
		w := b.w("onnx::Conv_"+strconv.Itoa(10+3*i), 1, 1, 3, 3)
		h = b.op("Relu", vals(b.op("Conv", vals(h, w, bias), attrInts("pads", 1, 1, 1, 1))))
	}
	b.output(b.op("Gemm", vals(b.op("Flatten", vals(h), attrI("axis", 1)), b.w("fc.weight", 3, 16)), attrI("transB", 1)))

	f := graph.DetectFoldedBN(b.g)
	if f == nil || f.Convs != 3 || len(f.Nodes) != 3 || !strings.Contains(f.Note(), "into 3 convolution(s)") {
		t.Fatalf("before untying: %+v; want 3 folded convolutions", f)
	}
	if n, err := graph.UntieIdentityInitializers(b.g); err != nil || n != 3 {
		t.Fatalf("untie: %d, %v; want 3 Identity nodes removed", n, err)
	}
	if f := graph.DetectFoldedBN(b.g); f == nil || f.Convs != 3 {
		t.Fatalf("after untying: %+v; want the same 3", f)
	}

	// A bias behind an Identity of a graph input (IR < 4: the initializer
	// may be overridden at run time) stays behind it, and is not counted.
	c := newBuilder(t)
	y := c.input("input", -1, 1, 4, 4)
	if _, err := c.g.AddInput("onnx::Conv_21", &graph.Type{DType: graph.Float, Shape: graph.DimsOf([]int64{1})}); err != nil {
		t.Fatal(err)
	}
	src, err := c.g.AddInitializer(graph.NewFloat32("onnx::Conv_21", []int64{1}, []float32{0}))
	if err != nil {
		t.Fatal(err)
	}
	n, err := c.g.AddNode("Identity", "", "Identity_1", vals(src), []string{"onnx::Conv_22"})
	if err != nil {
		t.Fatal(err)
	}
	conv := c.op("Conv", vals(y, c.w("onnx::Conv_20", 1, 1, 3, 3), n.Output(0)), attrInts("pads", 1, 1, 1, 1))
	c.output(c.op("Gemm", vals(c.op("Flatten", vals(conv), attrI("axis", 1)), c.w("fc.weight", 3, 16)), attrI("transB", 1)))
	if f := graph.DetectFoldedBN(c.g); f != nil {
		t.Errorf("bias behind an Identity of a graph input: %+v; want none", f)
	}
}
