package ops

import (
	"strings"
	"testing"
)

// keepTable restores the live table when the test ends.
func keepTable(t *testing.T) {
	saved := table.Load()
	t.Cleanup(func() { table.Store(saved) })
}

// TestRegister adds an op through the one registration call, the way a
// program does for an op the tool does not ship (a shipped op is one entry
// in table.go instead): every fact of it is known at once, its layer kind
// included. A listed op is refused and keeps its entry.
func TestRegister(t *testing.T) {
	keepTable(t)
	def := Def{Kind: KindConv, Diff: []int{0, 1, 2}, Roles: map[int]string{1: Weight, 2: Bias}, Shape: "Window"}
	if err := Register("UnlearnOpsTestConv", def); err != nil {
		t.Fatal(err)
	}
	d, ok := Lookup("UnlearnOpsTestConv")
	if !ok || !d.Differentiable(0) || d.Differentiable(3) || d.Role(1) != Weight || d.Role(2) != Bias ||
		d.Shape != "Window" || KindOf("UnlearnOpsTestConv") != KindConv || !d.Kind.IsLayer() {
		t.Errorf("after Register: %+v, %v", d, ok)
	}
	n := len(Known())
	err := Register("Conv", Def{})
	if err == nil || !strings.Contains(err.Error(), "Conv") {
		t.Errorf("Register(Conv): %v, want a refusal naming it", err)
	}
	if d, _ := Lookup("Conv"); !d.Differentiable(1) || len(Known()) != n {
		t.Errorf("a refused Register changed the table: Conv %+v", d)
	}
	for _, name := range []string{"conv", "", "Conv2D!"} {
		if err := Register(name, Def{}); err == nil || !strings.Contains(err.Error(), "not an op type") {
			t.Errorf("Register(%q): %v, want a refusal", name, err)
		}
	}
	if err := Register("UnlearnOpsTestBad", Def{Diff: []int{-2}}); err == nil {
		t.Error("Register with input index -2 in Diff: accepted")
	}
	if err := Register("UnlearnOpsTestBad", Def{Roles: map[int]string{-3: Weight}}); err == nil {
		t.Error("Register with input index -3 in Roles: accepted")
	}
	if _, ok := Lookup("UnlearnOpsTestBad"); ok {
		t.Error("a refused Register listed the op")
	}
	if len(Shipped()) != len(builtin) || strings.Contains(strings.Join(Shipped(), " "), "UnlearnOpsTestConv") {
		t.Errorf("Shipped() lists %d ops, the table has %d, or it lists a registered op", len(Shipped()), len(builtin))
	}
}

// TestKinds: the layer kinds of the shipped ops, and that an op with a
// kind has the facts graph's analysis relies on: a weight layer's weight
// at input 1 (Gemm and MatMul: any operand), a normalization's scale at
// input 1.
func TestKinds(t *testing.T) {
	want := map[string]Kind{
		"Conv": KindConv, "ConvTranspose": KindConvTranspose, "Gemm": KindGemm, "MatMul": KindMatMul,
		"BatchNormalization": KindChannelNorm, "InstanceNormalization": KindChannelNorm,
		"LayerNormalization": KindTrailingNorm, "RMSNormalization": KindTrailingNorm,
		"GroupNormalization": KindGroupNorm,
	}
	for _, op := range Shipped() {
		d, _ := Lookup(op)
		if d.Kind != want[op] {
			t.Errorf("%s: kind %d, want %d", op, d.Kind, want[op])
		}
		switch {
		case d.Kind.IsLayer() && (d.Role(1) != Weight || !d.Differentiable(1)):
			t.Errorf("%s: a weight layer without a differentiable weight at input 1: %+v", op, d)
		case d.Kind.IsNorm() && (d.Role(1) != NormScale || !d.Differentiable(1)):
			t.Errorf("%s: a normalization without a differentiable scale at input 1: %+v", op, d)
		case d.Kind.IsLayer() && d.Kind.IsNorm():
			t.Errorf("%s: both a layer and a normalization", op)
		}
	}
	if KindOf("NoSuchOp") != KindNone || KindNone.IsLayer() || KindNone.IsNorm() {
		t.Error("an unlisted op has a kind")
	}
}

// TestNames: every op-name constant names a listed op.
func TestNames(t *testing.T) {
	for _, op := range []string{Add, BatchNormalization, Cast, CastLike, Constant, Div, Dropout, Identity, MatMul,
		Mul, ReduceMean, Reshape, Sub, Transpose} {
		if _, ok := Lookup(op); !ok {
			t.Errorf("names.go's %q is not in the table", op)
		}
	}
}
