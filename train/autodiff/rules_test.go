package autodiff

import (
	"math"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/train/lowering/cpu"
)

// ruleCase is one finite-difference check: build returns the output, its
// static shape and the parameters to differentiate.
type ruleCase struct {
	name  string
	dt    graph.DType
	opset int64
	build func(f *fg) (*graph.Value, []int64, []string)
	eps   float64
	tol   float64
	bn    BNMode
	conv  cpu.Lowering // forced Conv gradient forms (zero: per shape)
}

const (
	f64eps, f64tol = 1e-6, 1e-6 // float64: central differences
	linEps, linTol = 1, 1e-4    // float32 and linear in the parameter: exact differences
	f32eps, f32tol = 1e-2, 2e-2 // float32, nonlinear
)

var d, s = graph.Double, graph.Float

func unary(op string, attrs ...*graph.Attribute) func(f *fg) (*graph.Value, []int64, []string) {
	return func(f *fg) (*graph.Value, []int64, []string) {
		x := f.param("x", 3, 4)
		return f.op(op, []*graph.Value{x}, attrs...), []int64{3, 4}, []string{"x"}
	}
}

// spread is a unary case whose input covers [−5, 5] (for ops with kinks at
// ±3 or 0 and 6), avoiding the kinks themselves.
func spread(op string, scale float64, attrs ...*graph.Attribute) func(f *fg) (*graph.Value, []int64, []string) {
	return func(f *fg) (*graph.Value, []int64, []string) {
		v := make([]float64, 24)
		for i := range v {
			v[i] = scale * (-5.3 + 0.45*float64(i))
		}
		x := f.paramVals("x", []int64{4, 6}, v)
		return f.op(op, []*graph.Value{x}, attrs...), []int64{4, 6}, []string{"x"}
	}
}

// positive is a unary case whose input lies in [0.5, 2.8] (for ops defined
// or smooth only on positive numbers).
func positive(op string) func(f *fg) (*graph.Value, []int64, []string) {
	return func(f *fg) (*graph.Value, []int64, []string) {
		v := make([]float64, 12)
		for i := range v {
			v[i] = 0.5 + 0.21*float64(i)
		}
		x := f.paramVals("x", []int64{3, 4}, v)
		return f.op(op, []*graph.Value{x}), []int64{3, 4}, []string{"x"}
	}
}

func binop(op string, sa, sb, so []int64) func(f *fg) (*graph.Value, []int64, []string) {
	return func(f *fg) (*graph.Value, []int64, []string) {
		a := f.param("a", sa...)
		b := f.param("b", sb...)
		if op == "Div" { // keep the divisor away from 0
			b = f.op("Add", []*graph.Value{f.op("Mul", []*graph.Value{b, b}), f.scalarF(0.5)})
		}
		return f.op(op, []*graph.Value{a, b}), so, []string{"a", "b"}
	}
}

var ruleCases = []ruleCase{
	{name: "Add/broadcast", dt: d, build: binop("Add", []int64{2, 3, 4}, []int64{3, 1}, []int64{2, 3, 4})},
	{name: "Sub/broadcast", dt: d, build: binop("Sub", []int64{4}, []int64{2, 3, 4}, []int64{2, 3, 4})},
	{name: "Mul/broadcast", dt: d, build: binop("Mul", []int64{2, 1, 4}, []int64{3, 1}, []int64{2, 3, 4})},
	{name: "Div/broadcast", dt: d, build: binop("Div", []int64{2, 3, 4}, []int64{1, 4}, []int64{2, 3, 4})},
	{name: "Mul/square", dt: d, build: func(f *fg) (*graph.Value, []int64, []string) {
		x := f.param("x", 2, 3)
		return f.op("Mul", []*graph.Value{x, x}), []int64{2, 3}, []string{"x"}
	}},
	{name: "MatMul/2D", dt: s, eps: linEps, tol: linTol, build: binop("MatMul", []int64{3, 4}, []int64{4, 5}, []int64{3, 5})},
	{name: "MatMul/3Dx2D", dt: s, eps: linEps, tol: linTol, build: binop("MatMul", []int64{2, 3, 4}, []int64{4, 5}, []int64{2, 3, 5})},
	{name: "MatMul/batched", dt: s, eps: linEps, tol: linTol, build: binop("MatMul", []int64{2, 3, 3, 4}, []int64{2, 3, 4, 5}, []int64{2, 3, 3, 5})},
	{name: "MatMul/broadcast", dt: s, eps: linEps, tol: linTol, build: binop("MatMul", []int64{2, 1, 3, 4}, []int64{3, 4, 2}, []int64{2, 3, 3, 2})},
	{name: "Relu", dt: d, build: unary("Relu")},
	{name: "LeakyRelu", dt: s, eps: f32eps, tol: f32tol, build: unary("LeakyRelu", aF("alpha", 0.1))},
	{name: "Sigmoid", dt: d, build: unary("Sigmoid")},
	{name: "Tanh", dt: d, build: unary("Tanh")},
	{name: "Exp", dt: d, build: unary("Exp")},
	{name: "Neg", dt: d, build: unary("Neg")},
	{name: "Erf", dt: s, eps: f32eps, tol: f32tol, build: unary("Erf")},
	{name: "Softmax/axis1", dt: d, build: unary("Softmax", aI("axis", 1))},
	{name: "Softmax/axis0", dt: d, build: unary("Softmax", aI("axis", 0))},
	{name: "LogSoftmax", dt: d, build: unary("LogSoftmax", aI("axis", -1))},
	{name: "Clip/relu6", dt: s, eps: f32eps, tol: f32tol, build: func(f *fg) (*graph.Value, []int64, []string) {
		v := make([]float64, 24)
		for i := range v {
			v[i] = -2.3 + 0.45*float64(i)
		}
		x := f.paramVals("x", []int64{4, 6}, v)
		return f.op("Clip", []*graph.Value{x, f.scalarF(0), f.scalarF(6)}), []int64{4, 6}, []string{"x"}
	}},
	{name: "HardSigmoid", dt: s, eps: f32eps, tol: f32tol, build: spread("HardSigmoid", 1, aF("alpha", 1.0/6))},
	{name: "HardSwish", dt: s, eps: f32eps, tol: f32tol, build: spread("HardSwish", 1)},
	{name: "Sqrt", dt: d, build: func(f *fg) (*graph.Value, []int64, []string) {
		x := f.param("x", 3, 4)
		sq := f.op("Add", []*graph.Value{f.op("Mul", []*graph.Value{x, x}), f.scalarF(0.3)})
		return f.op("Sqrt", []*graph.Value{sq}), []int64{3, 4}, []string{"x"}
	}},
	{name: "Log", dt: d, build: positive("Log")},
	{name: "Reciprocal", dt: d, build: positive("Reciprocal")},
	{name: "Sum/broadcast3", dt: d, build: func(f *fg) (*graph.Value, []int64, []string) {
		a, b, c := f.param("a", 2, 3, 4), f.param("b", 3, 1), f.param("c", 4)
		return f.op("Sum", []*graph.Value{a, b, c}), []int64{2, 3, 4}, []string{"a", "b", "c"}
	}},
	{name: "Pow/2", dt: d, build: func(f *fg) (*graph.Value, []int64, []string) {
		x := f.param("x", 3, 4)
		return f.op("Pow", []*graph.Value{x, f.scalarF(2)}), []int64{3, 4}, []string{"x"}
	}},
	{name: "Pow/1.5", dt: d, build: func(f *fg) (*graph.Value, []int64, []string) {
		x := f.param("x", 3, 4)
		sq := f.op("Add", []*graph.Value{f.op("Mul", []*graph.Value{x, x}), f.scalarF(0.3)})
		return f.op("Pow", []*graph.Value{sq, f.scalarF(1.5)}), []int64{3, 4}, []string{"x"}
	}},
	{name: "Gemm/00", dt: d, build: gemmCase(false, false)},
	{name: "Gemm/01", dt: d, build: gemmCase(false, true)},
	{name: "Gemm/10", dt: d, build: gemmCase(true, false)},
	{name: "Gemm/11", dt: d, build: gemmCase(true, true)},
	{name: "Gemm/alphabeta-vecbias", dt: d, build: func(f *fg) (*graph.Value, []int64, []string) {
		a, b, c := f.param("a", 3, 4), f.param("b", 5, 4), f.param("c", 5)
		return f.op("Gemm", []*graph.Value{a, b, c}, aI("transB", 1), aF("alpha", 0.7), aF("beta", 1.3)), []int64{3, 5}, []string{"a", "b", "c"}
	}},
}

func gemmCase(ta, tb bool) func(f *fg) (*graph.Value, []int64, []string) {
	return func(f *fg) (*graph.Value, []int64, []string) {
		sa, sb := []int64{3, 4}, []int64{4, 5}
		if ta {
			sa = []int64{4, 3}
		}
		if tb {
			sb = []int64{5, 4}
		}
		a, b, c := f.param("a", sa...), f.param("b", sb...), f.param("c", 3, 5)
		var attrs []*graph.Attribute
		if ta {
			attrs = append(attrs, aI("transA", 1))
		}
		if tb {
			attrs = append(attrs, aI("transB", 1))
		}
		return f.op("Gemm", []*graph.Value{a, b, c}, attrs...), []int64{3, 5}, []string{"a", "b", "c"}
	}
}

func runCases(t *testing.T, cases []ruleCase) {
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFG(t, tc.dt, uint64(100+i))
			if tc.opset != 0 {
				f.opset = tc.opset
			}
			out, shape, params := tc.build(f)
			eps, tol := tc.eps, tc.tol
			if eps == 0 {
				eps, tol = f64eps, f64tol
			}
			checkVJP(t, f, out, shape, params, Spec{BN: tc.bn, Lowering: tc.conv}, eps, tol)
		})
	}
}

func TestRules(t *testing.T) { runCases(t, ruleCases) }

// TestReluMaskEdges pins the Relu gradient's mask (Ceil(Clip(Y, 0, 1)))
// where a finite-difference check cannot look: exactly 1 for every
// positive input down to the smallest subnormal and up to +Inf, exactly 0
// at zero (either sign) and below, as PyTorch's subgradient.
func TestReluMaskEdges(t *testing.T) {
	for _, dt := range []graph.DType{graph.Float, graph.Double} {
		t.Run(dt.String(), func(t *testing.T) {
			tiny := math.SmallestNonzeroFloat64
			if dt == graph.Float {
				tiny = math.SmallestNonzeroFloat32
			}
			in := []float64{math.Inf(-1), -1, -tiny, math.Copysign(0, -1), 0, tiny, 1e-30, 0.5, 1, 1.5, 3e38, math.Inf(1)}
			want := []float64{0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1}
			f := newFG(t, dt, 1)
			p := f.paramVals("p", []int64{int64(len(in))}, in)
			art := buildSeed(t, f.model(f.op("Relu", []*graph.Value{p})), Spec{Params: []string{"p"}})
			r := newRunner(t, art)
			ones := make([]float64, len(in))
			for i := range ones {
				ones[i] = 1
			}
			got := vals(t, r.run(t, map[string]*graph.Tensor{
				"p": f.g.LocalValue("p").Init, "seed": floatTensor(dt, []int64{int64(len(in))}, ones)})["grad/p"])
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("Relu'(%g) = %g, want %g", in[i], got[i], want[i])
				}
			}
		})
	}
}
