package graph_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
)

// summary renders a layer as "name op ch=C d=D: member@axis(role) …"; a
// standalone layer's op is marked with a "*".
func summary(l *graph.Layer) string {
	op := l.Op.OpType
	if l.Standalone {
		op += "*"
	}
	var ms []string
	for _, m := range l.Members {
		s := fmt.Sprintf("%s@%d(%s)", m.Param.Name, m.Axis, m.Role)
		if m.Groups > 1 {
			s += fmt.Sprintf("g%d", m.Groups)
		}
		ms = append(ms, s)
	}
	return fmt.Sprintf("%s %s ch=%d d=%d: %s", l.Name, op, l.Channels, l.Depth, strings.Join(ms, " "))
}

func checkLayers(t *testing.T, nm *graph.NeuronMap, want []string) {
	t.Helper()
	var got []string
	for _, l := range nm.Layers {
		got = append(got, summary(l))
	}
	if !slices.Equal(got, want) {
		t.Errorf("layers:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

func paramNames(ps []*graph.Param) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Value.Name+":"+p.Kind)
	}
	return out
}

func checkParams(t *testing.T, g *graph.Graph, want []string) {
	t.Helper()
	if got := paramNames(graph.Parameters(g)); !slices.Equal(got, want) {
		t.Errorf("parameters:\n got %v\nwant %v", got, want)
	}
}

func checkClassifier(t *testing.T, nm *graph.NeuronMap, want string) {
	t.Helper()
	l, err := nm.Classifier("")
	if err != nil {
		t.Fatalf("Classifier: %v", err)
	}
	if l.Name != want {
		t.Errorf("classifier %q, want %q", l.Name, want)
	}
}

// head appends GlobalAveragePool → Flatten → Gemm(transB=1) and marks the
// logits as graph output 0.
func (b *builder) head(x *graph.Value, in, classes int64) {
	x = b.op("GlobalAveragePool", vals(x))
	x = b.op("Flatten", vals(x), attrI("axis", 1))
	y := b.op("Gemm", vals(x, b.w("fc.weight", classes, in), b.w("fc.bias", classes)), attrI("transB", 1))
	b.output(y)
}

func (b *builder) bn(x *graph.Value, prefix string, c int64) *graph.Value {
	return b.op("BatchNormalization", vals(x, b.w(prefix+".weight", c), b.w(prefix+".bias", c),
		b.w(prefix+".running_mean", c), b.w(prefix+".running_var", c)), attrF("epsilon", 1e-5))
}

func TestConvBNRelu(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", 2, 3, 8, 8)
	y := b.op("Conv", vals(x, b.w("conv1.weight", 4, 3, 3, 3)), attrInts("pads", 1, 1, 1, 1))
	y = b.op("Relu", vals(b.bn(y, "bn1", 4)))
	y = b.op("Conv", vals(y, b.w("conv2.weight", 6, 4, 3, 3)))
	y = b.op("Relu", vals(b.bn(y, "bn2", 6)))
	b.head(y, 6, 10)
	checkParams(t, b.g, []string{
		"conv1.weight:weight", "bn1.weight:norm_scale", "bn1.bias:norm_bias",
		"conv2.weight:weight", "bn2.weight:norm_scale", "bn2.bias:norm_bias",
		"fc.weight:weight", "fc.bias:bias",
	})
	nm := analyse(t, b.g)
	checkLayers(t, nm, []string{
		"conv1.weight Conv ch=4 d=0: conv1.weight@0(weight) bn1.weight@0(norm_scale) bn1.bias@0(norm_bias)",
		"conv2.weight Conv ch=6 d=1: conv2.weight@0(weight) bn2.weight@0(norm_scale) bn2.bias@0(norm_bias)",
		"fc.weight Gemm ch=10 d=2: fc.weight@0(weight) fc.bias@0(bias)",
	})
	checkClassifier(t, nm, "fc.weight")
	if want := int64(4*27 + 8 + 6*36 + 12 + 60 + 10); nm.NumParams != want {
		t.Errorf("NumParams %d, want %d", nm.NumParams, want)
	}
	if n := nm.Neuron(nm.Layers[0], 1); n.NumParams != 27+2 {
		t.Errorf("conv1 neuron size %d, want 29", n.NumParams)
	}
	// conv1 channel 1 owns W[1,:,:,:] (flat 27..53) and element 1 of scale and shift.
	s := nm.ElementsOf(nm.Layers[0], 1)
	if len(s) != 3 || s[0].Flat[0] != 27 || s[0].Flat[26] != 53 || len(s[0].Flat) != 27 || !slices.Equal(s[1].Flat, []int{1}) {
		t.Errorf("ElementsOf(conv1, 1) = %+v", s)
	}
	if nm.MaxDepth != 2 {
		t.Errorf("MaxDepth %d, want 2", nm.MaxDepth)
	}
}

// The default (eval) PyTorch export: BN folded into Conv, weights renamed.
func TestFusedConvBias(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", 2, 3, 8, 8)
	y := b.op("Relu", vals(b.op("Conv", vals(x, b.w("onnx::Conv_21", 4, 3, 3, 3), b.w("onnx::Conv_22", 4)))))
	y = b.op("Relu", vals(b.op("Conv", vals(y, b.w("onnx::Conv_24", 5, 4, 1, 1), b.w("onnx::Conv_25", 5)))))
	b.head(y, 5, 3)
	nm := analyse(t, b.g)
	checkLayers(t, nm, []string{
		"onnx::Conv_21 Conv ch=4 d=0: onnx::Conv_21@0(weight) onnx::Conv_22@0(bias)",
		"onnx::Conv_24 Conv ch=5 d=1: onnx::Conv_24@0(weight) onnx::Conv_25@0(bias)",
		"fc.weight Gemm ch=3 d=2: fc.weight@0(weight) fc.bias@0(bias)",
	})
	checkClassifier(t, nm, "fc.weight")
}

func TestGemmTransB(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", 2, 5)
	y := b.op("Gemm", vals(x, b.w("l1.weight", 5, 3), b.w("l1.bias", 3))) // transB=0: W[K,N]
	y = b.op("Relu", vals(y))
	y = b.op("Gemm", vals(y, b.w("l2.weight", 4, 3), b.w("l2.bias", 1, 4)), attrI("transB", 1))
	// Gemm with the initializer as A: Y[M,N] = A[M,K]·X[K,N]; A's rows are the channels.
	z := b.op("Gemm", vals(b.w("l3.weight", 6, 2), y), attrI("transB", 0))
	b.output(y)
	b.output(z)
	nm := analyse(t, b.g)
	checkLayers(t, nm, []string{
		"l1.weight Gemm ch=3 d=0: l1.weight@1(weight) l1.bias@0(bias)",
		"l2.weight Gemm ch=4 d=1: l2.weight@0(weight) l2.bias@1(bias)",
		"l3.weight Gemm ch=6 d=2: l3.weight@0(weight)",
	})
	checkClassifier(t, nm, "l2.weight")
	if l, err := nm.Classifier("l1.bias"); err != nil || l.Name != "l1.weight" {
		t.Errorf("Classifier(l1.bias) = %v, %v", l, err)
	}
	_, err := nm.Classifier("nope")
	if !errors.Is(err, graph.ErrUnknownLayer) || !strings.Contains(err.Error(), "l1.weight, l2.weight, l3.weight") {
		t.Errorf("Classifier(nope) error %v, want ErrUnknownLayer listing the layers", err)
	}
}

// nn.Linear on 3-D input: MatMul with the transposed weight, then Add(bias);
// followed by a LayerNorm that belongs to the same channels.
func TestMatMulAddLayerNorm(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", 2, 7, 8)
	y := b.op("MatMul", vals(x, b.w("onnx::MatMul_40", 8, 16)))
	y = b.op("Add", vals(b.w("fc1.bias", 16), y))
	y = b.op("LayerNormalization", vals(y, b.w("ln.weight", 16), b.w("ln.bias", 16)), attrI("axis", -1))
	y = b.op("MatMul", vals(y, b.w("onnx::MatMul_41", 16, 4)))
	y = b.op("Add", vals(y, b.w("fc2.bias", 4)))
	y = b.op("ReduceMean", vals(y, b.i64("axes", 1)), attrI("keepdims", 0))
	b.output(y)
	checkParams(t, b.g, []string{
		"onnx::MatMul_40:weight", "fc1.bias:bias", "ln.weight:norm_scale", "ln.bias:norm_bias",
		"onnx::MatMul_41:weight", "fc2.bias:bias",
	})
	nm := analyse(t, b.g)
	checkLayers(t, nm, []string{
		"onnx::MatMul_40 MatMul ch=16 d=0: onnx::MatMul_40@1(weight) fc1.bias@0(bias) ln.weight@0(norm_scale) ln.bias@0(norm_bias)",
		"onnx::MatMul_41 MatMul ch=4 d=1: onnx::MatMul_41@1(weight) fc2.bias@0(bias)",
	})
	checkClassifier(t, nm, "onnx::MatMul_41")
}

func TestDepthwiseConv(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", 1, 6, 8, 8)
	y := b.op("Conv", vals(x, b.w("dw.weight", 6, 1, 3, 3), b.w("dw.bias", 6)), attrI("group", 6))
	y = b.op("Conv", vals(y, b.w("pw.weight", 4, 6, 1, 1)))
	y = b.bn(y, "bn", 4)
	b.head(y, 4, 2)
	nm := analyse(t, b.g)
	checkLayers(t, nm, []string{
		"dw.weight Conv ch=6 d=0: dw.weight@0(weight) dw.bias@0(bias)",
		"pw.weight Conv ch=4 d=1: pw.weight@0(weight) bn.weight@0(norm_scale) bn.bias@0(norm_bias)",
		"fc.weight Gemm ch=2 d=2: fc.weight@0(weight) fc.bias@0(bias)",
	})
}

func TestConvTranspose(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", 1, 4, 5, 5)
	y := b.op("ConvTranspose", vals(x, b.w("up.weight", 4, 6, 3, 3), b.w("up.bias", 6)))
	y = b.bn(y, "bn", 6)
	// Grouped: W[Ci=6, Co/g=2, 2, 2] with group 3 → 6 output channels.
	y = b.op("ConvTranspose", vals(y, b.w("gup.weight", 6, 2, 2, 2), b.w("gup.bias", 6)), attrI("group", 3))
	b.head(y, 6, 2)
	nm := analyse(t, b.g)
	checkLayers(t, nm, []string{
		"up.weight ConvTranspose ch=6 d=0: up.weight@1(weight) up.bias@0(bias) bn.weight@0(norm_scale) bn.bias@0(norm_bias)",
		"gup.weight ConvTranspose ch=6 d=1: gup.weight@1(weight)g3 gup.bias@0(bias)",
		"fc.weight Gemm ch=2 d=2: fc.weight@0(weight) fc.bias@0(bias)",
	})
	// Output channel 3 = group 1, j 1: W[2:4, 1, :, :] → flat (i0·2+1)·4 + k for i0 in {2,3}.
	gup := nm.Layer("gup.weight")
	got := nm.ElementsOf(gup, 3)[0].Flat
	want := []int{20, 21, 22, 23, 28, 29, 30, 31}
	if !slices.Equal(got, want) {
		t.Errorf("grouped ConvTranspose channel 3 owns %v, want %v", got, want)
	}
}

// PyTorch's exporter ties equal-valued initializers behind Identity nodes.
func TestUntieIdentityInitializers(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", 1, 4, 6, 6)
	ones := b.w("onnx::BatchNormalization_7", 4)
	zeros := b.w("onnx::BatchNormalization_8", 4)
	idn := func(v *graph.Value, name string) *graph.Value {
		n, err := b.g.AddNode("Identity", "", "Identity_"+name, vals(v), []string{name})
		if err != nil {
			t.Fatal(err)
		}
		return n.Outputs()[0]
	}
	y := b.op("Conv", vals(x, b.w("conv1.weight", 4, 4, 3, 3)))
	y = b.op("BatchNormalization", vals(y, idn(ones, "bn1.weight"), idn(zeros, "bn1.bias"), b.w("bn1.running_mean", 4), b.w("bn1.running_var", 4)))
	y = b.op("Conv", vals(y, b.w("conv2.weight", 4, 4, 3, 3)))
	y = b.op("BatchNormalization", vals(y, idn(ones, "bn2.weight"), idn(idn(zeros, "tmp"), "bn2.bias"), b.w("bn2.running_mean", 4), b.w("bn2.running_var", 4)))
	b.head(y, 4, 3)

	// Tied: one parameter with two consumers; the partition still holds.
	checkParams(t, b.g, []string{
		"onnx::BatchNormalization_7:norm_scale", "onnx::BatchNormalization_8:norm_bias",
		"conv1.weight:weight", "conv2.weight:weight", "fc.weight:weight", "fc.bias:bias",
	})
	for _, p := range graph.Parameters(b.g) {
		if p.Value.Name == "onnx::BatchNormalization_7" && len(p.Consumers) != 2 {
			t.Errorf("tied scale has %d consumers, want 2", len(p.Consumers))
		}
	}
	analyse(t, b.g)

	n, err := graph.UntieIdentityInitializers(b.g)
	if err != nil || n != 5 {
		t.Fatalf("Untie = %d, %v; want 5 Identity nodes untied", n, err)
	}
	checkParams(t, b.g, []string{
		"bn1.weight:norm_scale", "bn2.weight:norm_scale", "bn1.bias:norm_bias", "bn2.bias:norm_bias",
		"conv1.weight:weight", "conv2.weight:weight", "fc.weight:weight", "fc.bias:bias",
	})
	if b.g.Value("onnx::BatchNormalization_7") != nil || b.g.Value("tmp") != nil {
		t.Errorf("merged initializers or intermediate Identity outputs survive")
	}
	for _, nd := range b.g.Nodes() {
		if nd.OpType == "Identity" {
			t.Errorf("%v survives", nd)
		}
	}
	nm := analyse(t, b.g)
	checkLayers(t, nm, []string{
		"conv1.weight Conv ch=4 d=0: conv1.weight@0(weight) bn1.weight@0(norm_scale) bn1.bias@0(norm_bias)",
		"conv2.weight Conv ch=4 d=1: conv2.weight@0(weight) bn2.weight@0(norm_scale) bn2.bias@0(norm_bias)",
		"fc.weight Gemm ch=3 d=2: fc.weight@0(weight) fc.bias@0(bias)",
	})
	// The copies are independent.
	w1, _ := b.g.Value("bn1.weight").Init.Float32s()
	w2, _ := b.g.Value("bn2.weight").Init.Float32s()
	if !slices.Equal(w1, w2) {
		t.Fatalf("untied copies differ")
	}
	w1[0] += 1
	if w2, _ := b.g.Value("bn2.weight").Init.Float32s(); w2[0] == w1[0] {
		t.Errorf("untied copies share data")
	}
	if b.g.Value("bn1.weight").Init.Name != "bn1.weight" {
		t.Errorf("tensor name not updated")
	}
	if n, err := graph.UntieIdentityInitializers(b.g); err != nil || n != 0 {
		t.Errorf("second Untie = %d, %v; want 0 (idempotent)", n, err)
	}
}

// A ViT-style front end: patch embedding, cls token, positional embedding,
// LayerNorm that follows no layer, head on the cls token.
func TestViTStandaloneParams(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", 2, 3, 8, 8)
	y := b.op("Conv", vals(x, b.w("patch.weight", 16, 3, 4, 4), b.w("patch.bias", 16)), attrInts("strides", 4, 4))
	y = b.op("Reshape", vals(y, b.i64("shape_a", 2, 16, 4)))
	y = b.op("Transpose", vals(y), attrInts("perm", 0, 2, 1))
	cls := b.op("Expand", vals(b.w("cls_token", 1, 1, 16), b.i64("shape_b", 2, 1, 16)))
	y = b.op("Concat", vals(cls, y), attrI("axis", 1))
	y = b.op("Add", vals(y, b.w("pos_embedding", 1, 5, 16)))
	y = b.op("LayerNormalization", vals(y, b.w("norm.weight", 16), b.w("norm.bias", 16)), attrI("axis", -1))
	y = b.op("Gather", vals(y, b.i64("zero", 0)), attrI("axis", 1))
	y = b.op("Reshape", vals(y, b.i64("shape_c", 2, 16)))
	y = b.op("Gemm", vals(y, b.w("head.weight", 10, 16), b.w("head.bias", 10)), attrI("transB", 1))
	b.output(y)
	checkParams(t, b.g, []string{
		"patch.weight:weight", "patch.bias:bias", "cls_token:other", "pos_embedding:other",
		"norm.weight:norm_scale", "norm.bias:norm_bias", "head.weight:weight", "head.bias:bias",
	})
	nm := analyse(t, b.g)
	checkLayers(t, nm, []string{
		"patch.weight Conv ch=16 d=0: patch.weight@0(weight) patch.bias@0(bias)",
		"cls_token Expand* ch=16 d=0: cls_token@2(other)",
		"pos_embedding Add* ch=16 d=1: pos_embedding@2(other)",
		"norm.weight LayerNormalization* ch=16 d=2: norm.weight@0(norm_scale) norm.bias@0(norm_bias)",
		"head.weight Gemm ch=10 d=3: head.weight@0(weight) head.bias@0(bias)",
	})
	checkClassifier(t, nm, "head.weight")
	// pos_embedding channel 3 owns [0, t, 3] for t in 0..4.
	if got := nm.ElementsOf(nm.Layer("pos_embedding"), 3)[0].Flat; !slices.Equal(got, []int{3, 19, 35, 51, 67}) {
		t.Errorf("pos_embedding channel 3 owns %v", got)
	}
	byDepth := nm.LayersByDepth()
	if byDepth[0].Name != "patch.weight" || byDepth[1].Name != "cls_token" || byDepth[len(byDepth)-1].Name != "head.weight" {
		t.Errorf("LayersByDepth order wrong")
	}
}

// Initializers that only serve as shapes, exponents, clip bounds, conditions
// or shape arithmetic are not parameters.
func TestNonParameters(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", 2, 4)
	y := b.op("Gemm", vals(x, b.w("fc.weight", 3, 4), b.w("fc.bias", 3)), attrI("transB", 1))
	y = b.op("Pow", vals(y, b.scalar("exponent", 2)))
	y = b.op("Clip", vals(y, b.scalar("clip_min", 0), b.scalar("clip_max", 6)))
	cond := b.op("Greater", vals(y, b.scalar("threshold", 0.5)))
	y = b.op("Where", vals(cond, y, b.scalar("fill", 0)))
	// Shape arithmetic in float: Shape → Cast(float) → Div(const) → Cast(int64) → Reshape's shape.
	s := b.op("Shape", vals(y))
	s = b.op("Cast", vals(s), attrI("to", int64(graph.Float)))
	s = b.op("Div", vals(s, b.scalar("divisor", 1)))
	s = b.op("Cast", vals(s), attrI("to", int64(graph.Int64)))
	y = b.op("Reshape", vals(y, s))
	y = b.op("Reshape", vals(y, b.i64("shape", 2, 3)))
	y = b.op("Mul", vals(y, b.w("scale", 3)))
	b.w("unused", 3)
	b.output(y)
	// fill is Where's input 2 (differentiable): a parameter of its own.
	checkParams(t, b.g, []string{"fc.weight:weight", "fc.bias:bias", "fill:other", "scale:other"})
	nm := analyse(t, b.g)
	checkLayers(t, nm, []string{
		"fc.weight Gemm ch=3 d=0: fc.weight@0(weight) fc.bias@0(bias)",
		"fill Where* ch=1 d=1: fill@0(other)",
		"scale Mul* ch=3 d=2: scale@0(other)",
	})
	checkClassifier(t, nm, "fc.weight")
}

// A weight reached through Identity and Cast still makes a layer; shared use
// by two layer ops gives it to the first.
func TestWeightThroughIdentityAndSharing(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", 2, 4)
	w := b.w("shared.weight", 4, 4)
	wi := b.op("Identity", vals(w))
	wc := b.op("Cast", vals(wi), attrI("to", int64(graph.Float)))
	y := b.op("MatMul", vals(x, wc))
	y = b.op("MatMul", vals(y, w))
	b.output(y)
	ps := graph.Parameters(b.g)
	if len(ps) != 1 || len(ps[0].Consumers) != 2 || ps[0].Consumers[0].Node.OpType != "MatMul" {
		t.Fatalf("Parameters = %v", paramNames(ps))
	}
	nm := analyse(t, b.g)
	checkLayers(t, nm, []string{"shared.weight MatMul ch=4 d=0: shared.weight@1(weight)"})
}

func TestClassifierAmbiguousAndNone(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", 2, 4)
	y1 := b.op("Gemm", vals(x, b.w("a.weight", 3, 4)), attrI("transB", 1))
	y2 := b.op("Gemm", vals(x, b.w("b.weight", 3, 4)), attrI("transB", 1))
	b.output(b.op("Add", vals(y1, y2)))
	nm := analyse(t, b.g)
	if _, err := nm.Classifier(""); !errors.Is(err, graph.ErrAmbiguousClassifier) {
		t.Errorf("want ErrAmbiguousClassifier, got %v", err)
	}
	if l, err := graph.Classifier(b.g, "b.weight"); err != nil || l.Name != "b.weight" {
		t.Errorf("override: %v, %v", l, err)
	}

	b = newBuilder(t)
	x = b.input("x", 2, 4)
	b.output(b.op("Relu", vals(x)))
	nm = analyse(t, b.g)
	if _, err := nm.Classifier(""); !errors.Is(err, graph.ErrNoClassifier) {
		t.Errorf("want ErrNoClassifier, got %v", err)
	}
}

// Residual blocks: depth is the longest path.
func TestDepthResidual(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", 1, 4, 6, 6)
	a := b.op("Conv", vals(x, b.w("c1.weight", 4, 4, 3, 3)))
	c := b.op("Conv", vals(a, b.w("c2.weight", 4, 4, 3, 3)))
	c = b.op("Conv", vals(c, b.w("c3.weight", 4, 4, 3, 3)))
	s := b.op("Conv", vals(a, b.w("short.weight", 4, 4, 1, 1)))
	y := b.op("Add", vals(c, s))
	y = b.op("Conv", vals(y, b.w("c4.weight", 4, 4, 1, 1)))
	b.head(y, 4, 2)
	nm := analyse(t, b.g)
	depth := map[string]int{}
	for _, l := range nm.Layers {
		depth[l.Name] = l.Depth
	}
	want := map[string]int{"c1.weight": 0, "c2.weight": 1, "c3.weight": 2, "short.weight": 1, "c4.weight": 3, "fc.weight": 4}
	for k, v := range want {
		if depth[k] != v {
			t.Errorf("depth[%s] = %d, want %d", k, depth[k], v)
		}
	}
}

func TestMemberElementsScalarAndRanges(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", 3)
	b.output(b.op("Mul", vals(x, b.scalar("temperature", 2))))
	nm := analyse(t, b.g)
	l := nm.Layer("temperature")
	if l == nil || l.Channels != 1 || nm.Neuron(l, 0).NumParams != 1 || nm.Neuron(l, 1) != nil {
		t.Fatalf("scalar layer wrong: %+v", l)
	}
	if got := l.Members[0].Indices(5); len(got) != 0 {
		t.Errorf("out-of-range channel owns %v", got)
	}
	if _, err := nm.NeuronOf(x, 0); err == nil {
		t.Errorf("NeuronOf(input) did not fail")
	}
}

// PyTorch's TRAINING export of nn.Linear on 3-D input: MatMul(x, Transpose(W)) + Add(b).
func TestMatMulThroughTranspose(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", 2, 7, 8)
	wt := b.op("Transpose", vals(b.w("fc.weight", 16, 8)), attrInts("perm", 1, 0))
	y := b.op("MatMul", vals(x, wt))
	y = b.op("Add", vals(y, b.w("fc.bias", 16)))
	b.output(y)
	checkParams(t, b.g, []string{"fc.weight:weight", "fc.bias:bias"})
	nm := analyse(t, b.g)
	checkLayers(t, nm, []string{"fc.weight MatMul ch=16 d=0: fc.weight@0(weight) fc.bias@0(bias)"})
}

// LayerNorm below opset 17 is exported as primitives; its scale and shift
// form one standalone layer.
func TestDecomposedLayerNorm(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", 2, 5, 8)
	axes := b.i64("axes", -1)
	mean := b.op("ReduceMean", vals(x), attrInts("axes", -1))
	d := b.op("Sub", vals(x, mean))
	v := b.op("ReduceMean", vals(b.op("Pow", vals(d, b.scalar("two", 2)))), attrInts("axes", -1))
	n := b.op("Div", vals(d, b.op("Sqrt", vals(b.op("Add", vals(v, b.scalar("eps", 1e-5)))))))
	y := b.op("Add", vals(b.op("Mul", vals(n, b.w("norm.weight", 8))), b.w("norm.bias", 8)))
	y = b.op("ReduceSum", vals(y, axes), attrI("keepdims", 0))
	b.output(y)
	// eps is a differentiable operand of Add: a (harmless) parameter of its own.
	checkParams(t, b.g, []string{"eps:other", "norm.weight:norm_scale", "norm.bias:norm_bias"})
	nm := analyse(t, b.g)
	checkLayers(t, nm, []string{
		"eps Add* ch=1 d=0: eps@0(other)",
		"norm.weight Mul* ch=8 d=1: norm.weight@0(norm_scale) norm.bias@0(norm_bias)",
	})
}
