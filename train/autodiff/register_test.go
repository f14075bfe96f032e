package autodiff

import (
	"errors"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/ops"
)

// keepTable restores the live op table when the test ends.
func keepTable(t *testing.T) {
	saved := table.Load()
	t.Cleanup(func() { table.Store(saved) })
}

// TestRegisterOp adds a gradient rule through the op table alone, from
// this file, with the exported GradCtx, and checks it by central
// differences: Softsign, y = x/(1+|x|), dX = dY/(1+|x|)², which the table
// lists without a rule, so that a model with it on the path is refused
// until the rule is registered.
func TestRegisterOp(t *testing.T) {
	keepTable(t)
	f := newFG(t, graph.Float, 1)
	x := f.param("x", 2, 3)
	if _, err := Build(f.model(f.op("Softsign", []*graph.Value{x})), Spec{}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("Softsign before Register: %v, want ErrUnsupported", err)
	}
	err := Register("Softsign", Op{Diff: []int{0}, Doc: "dY/(1+|x|)²", Grad: func(c *GradCtx) []*graph.Value {
		x := c.Input(0)
		d := c.Emit("Add", []*graph.Value{c.Scalar(c.DType(x), 1), c.Emit("Abs", []*graph.Value{x})})
		return []*graph.Value{c.Emit("Div", []*graph.Value{c.OutputGrad(0), c.Emit("Mul", []*graph.Value{d, d})})}
	}})
	if err != nil {
		t.Fatal(err)
	}
	runCases(t, []ruleCase{
		{name: "Softsign", dt: graph.Float, eps: f32eps, tol: f32tol, build: unary("Softsign")},
		{name: "Softsign/after-Mul", dt: graph.Float, eps: f32eps, tol: f32tol, build: func(f *fg) (*graph.Value, []int64, []string) {
			a, b := f.param("a", 2, 3), f.param("b", 3)
			return f.op("Softsign", []*graph.Value{f.op("Mul", []*graph.Value{a, b})}), []int64{2, 3}, []string{"a", "b"}
		}},
	})
	if !strings.Contains(strings.Join(Supported(), " "), "Softsign") {
		t.Errorf("Supported() lacks Softsign after Register")
	}
}

// TestRegisterNewOp adds an op the table does not list: graph/ops learns
// its differentiable inputs and roles, so graph's parameter analysis sees
// the parameter it consumes.
func TestRegisterNewOp(t *testing.T) {
	keepTable(t)
	const name = "UnlearnTestScale"
	err := Register(name, Op{Diff: []int{0, 1}, Roles: map[int]string{1: ops.Weight}, Doc: "dY·w, U(dY·x)",
		Grad: func(c *GradCtx) []*graph.Value { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	d, ok := ops.Lookup(name)
	if !ok || !d.Differentiable(1) || d.Role(1) != ops.Weight {
		t.Errorf("graph/ops after Register: %+v, %v", d, ok)
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

// TestRegisterRefusals: names that are no op type, ops that have a rule,
// changed facts of a listed op, and a rule without inputs or a Doc line.
func TestRegisterRefusals(t *testing.T) {
	keepTable(t)
	rule := func(c *GradCtx) []*graph.Value { return nil }
	for _, tc := range []struct {
		name string
		op   Op
		want string
	}{
		{"softsign", Op{Diff: []int{0}, Grad: rule, Doc: "x"}, "not an op type"},
		{"Relu", Op{Diff: []int{0}, Grad: rule, Doc: "x"}, "already has a gradient rule"},
		{"Celu", Op{Diff: []int{0, 1}, Grad: rule, Doc: "x"}, "must stay"},
		{"Celu", Op{Diff: []int{0}, Grad: rule}, "Doc line"},
		{"Celu", Op{Grad: rule, Doc: "x"}, "differentiable inputs"},
		{"Celu", Op{Diff: []int{-2}, Grad: rule, Doc: "x"}, "input index -2"},
	} {
		err := Register(tc.name, tc.op)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("Register(%q, %+v): %v, want an error naming it with %q", tc.name, tc.op, err, tc.want)
		}
	}
	if o, _ := lookup("Celu"); o.Grad != nil {
		t.Error("a refused Register changed the table")
	}
}
