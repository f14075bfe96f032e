package autodiff

import (
	"errors"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/ops"
)

// keepGrads restores the live gradient rules when the test ends.
func keepGrads(t *testing.T) {
	saved := grads.Load()
	t.Cleanup(func() { grads.Store(saved) })
}

// TestRegisterGrad adds a gradient rule by op name alone, from this file,
// with the exported GradCtx, and checks it by central differences:
// Softsign, y = x/(1+|x|), dX = dY/(1+|x|)², which graph/ops lists with no
// rule here, so that a model with it on the path is refused until the rule
// is registered.
func TestRegisterGrad(t *testing.T) {
	keepGrads(t)
	f := newFG(t, graph.Float, 1)
	x := f.param("x", 2, 3)
	if _, err := Build(f.model(f.op("Softsign", []*graph.Value{x})), Spec{}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("Softsign before RegisterGrad: %v, want ErrUnsupported", err)
	}
	err := RegisterGrad("Softsign", func(c *GradCtx) []*graph.Value {
		x := c.Input(0)
		d := c.Emit("Add", []*graph.Value{c.Scalar(c.DType(x), 1), c.Emit("Abs", []*graph.Value{x})})
		return []*graph.Value{c.Emit("Div", []*graph.Value{c.OutputGrad(0), c.Emit("Mul", []*graph.Value{d, d})})}
	}, "dY/(1+|x|)²")
	if err != nil {
		t.Fatal(err)
	}
	runCases(t, []ruleCase{
		{name: "Softsign", dt: graph.Float, eps: f32eps, tol: f32tol, build: unary("Softsign")},
		{name: "Softsign/after-Mul", dt: graph.Float, eps: f32eps, tol: f32tol,
			build: func(f *fg) (*graph.Value, []int64, []string) {
				a, b := f.param("a", 2, 3), f.param("b", 3)
				return f.op("Softsign", []*graph.Value{f.op("Mul", []*graph.Value{a, b})}), []int64{2, 3}, []string{"a", "b"}
			}},
	})
	if !strings.Contains(strings.Join(Supported(), " "), "Softsign") {
		t.Errorf("Supported() lacks Softsign after RegisterGrad")
	}
}

// TestRegisterNewOp adds an op the tool does not ship: graph/ops.Register
// gives its facts (graph's parameter analysis then sees the parameter it
// consumes), RegisterGrad its rule.
func TestRegisterNewOp(t *testing.T) {
	keepGrads(t)
	const name = "UnlearnAutodiffTestScale"
	if err := ops.Register(name, ops.Def{Diff: []int{0, 1}, Roles: map[int]string{1: ops.Weight}}); err != nil {
		t.Fatal(err)
	}
	if err := RegisterGrad(name, func(c *GradCtx) []*graph.Value { return nil }, "dY·w, U(dY·x)"); err != nil {
		t.Fatal(err)
	}
	if !supported(name) {
		t.Errorf("%s not supported after RegisterGrad", name)
	}
	f := newFG(t, graph.Float, 1)
	x, _ := f.g.AddInput("x", &graph.Type{DType: graph.Float, Shape: []graph.Dim{{Size: 2}}})
	w := f.param("w", 2)
	m := f.model(f.op(name, []*graph.Value{x, w}))
	ps := graph.Parameters(m.Graph)
	if len(ps) != 1 || ps[0].Value != w || ps[0].Kind != graph.KindWeight {
		t.Errorf("graph.Parameters after Register: %+v", ps)
	}
}

// TestRegisterGradRefusals: ops graph/ops does not list, ops without
// differentiable inputs, ops that have a rule, and a rule without a
// function or a doc line.
func TestRegisterGradRefusals(t *testing.T) {
	keepGrads(t)
	rule := func(c *GradCtx) []*graph.Value { return nil }
	for _, tc := range []struct {
		name string
		rule GradRule
		doc  string
		want string
	}{
		{"softsign", rule, "x", "does not list"},
		{"UnlearnNoSuchOp", rule, "x", "does not list"},
		{"Shape", rule, "x", "no differentiable input"},
		{"Relu", rule, "x", "already has a gradient rule"},
		{"Celu", rule, "", "doc line"},
		{"Celu", nil, "x", "doc line"},
	} {
		err := RegisterGrad(tc.name, tc.rule, tc.doc)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("RegisterGrad(%q): %v, want an error naming it with %q", tc.name, err, tc.want)
		}
	}
	if gradOf("Celu") != nil {
		t.Error("a refused RegisterGrad changed the rules")
	}
}
