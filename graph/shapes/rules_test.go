package shapes_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/ops"
	"github.com/unlearn-tool/unlearn/graph/shapes"
)

// TestRulesNamed: every op of graph/ops's table names a rule that exists.
func TestRulesNamed(t *testing.T) {
	for _, op := range ops.Known() {
		d, _ := ops.Lookup(op)
		if _, ok := shapes.Named(d.Shape); d.Shape != "" && !ok {
			t.Errorf("%s names shape rule %q, which graph/shapes does not have", op, d.Shape)
		}
	}
	if err := shapes.Define("Arith", shapes.Default); err == nil {
		t.Error("Define of a taken name: accepted")
	}
	if err := shapes.Define("UnlearnNil", nil); err == nil {
		t.Error("Define of a nil rule: accepted")
	}
}

// TestRegisteredOpBelowAutodiff adds an op through graph/ops's one
// registration call and finds everything the tool needs of it here, in a
// package that does not import train/autodiff: graph/shapes infers its
// output's shape by the rule the entry names, and graph's analysis
// recognises its layer kind (a Conv-like layer with weight and bias,
// split into its output channels).
func TestRegisteredOpBelowAutodiff(t *testing.T) {
	const op = "UnlearnShapesTestConv"
	err := ops.Register(op, ops.Def{Kind: ops.KindConv, Diff: []int{0, 1, 2},
		Roles: map[int]string{1: ops.Weight, 2: ops.Bias}, Shape: "Window"})
	if err != nil {
		t.Fatal(err)
	}
	g := graph.NewGraph("g")
	x, err := g.AddInput("x", &graph.Type{DType: graph.Float, Shape: graph.DimsOf([]int64{2, 3, 8, 8})})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := g.AddInitializer(graph.NewFloat32("w", []int64{4, 3, 3, 3}, make([]float32, 4*3*3*3)))
	b, _ := g.AddInitializer(graph.NewFloat32("b", []int64{4}, make([]float32, 4)))
	n, err := g.AddNode(op, "", "conv", []*graph.Value{x, w, b}, []string{"y"},
		graph.IntsAttr("kernel_shape", []int64{3, 3}), graph.IntsAttr("strides", []int64{2, 2}),
		graph.IntsAttr("pads", []int64{1, 1, 1, 1}))
	if err != nil {
		t.Fatal(err)
	}
	g.Outputs = []*graph.Value{n.Output(0)}

	inf := shapes.New()
	inf.InferNode(n)
	if got := inf.Shape(n.Output(0)); !slices.Equal(got, []int64{2, 4, 4, 4}) || inf.DType(n.Output(0)) != graph.Float {
		t.Errorf("inferred %v %v, want float [2 4 4 4]", inf.DType(n.Output(0)), got)
	}

	if ops.KindOf(op) != ops.KindConv {
		t.Errorf("kind %d, want KindConv", ops.KindOf(op))
	}
	nm, err := graph.Neurons(g)
	if err != nil {
		t.Fatal(err)
	}
	if len(nm.Layers) != 1 {
		t.Fatalf("%d layers, want 1", len(nm.Layers))
	}
	l := nm.Layers[0]
	if l.Standalone || l.Op != n || l.Channels != 4 || len(l.Members) != 2 ||
		l.Members[0].Role != graph.KindWeight || l.Members[1].Role != graph.KindBias {
		t.Errorf("layer %s: standalone %v, op %v, %d channels, members %+v", l.Name, l.Standalone, l.Op, l.Channels,
			l.Members)
	}

	// The package and its tests do not reach train/autodiff.
	out, err := exec.Command("go", "list", "-deps", "-test", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	if strings.Contains(string(out), "train/autodiff") {
		t.Error("graph/shapes or its tests import train/autodiff")
	}
}
