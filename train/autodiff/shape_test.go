package autodiff

import (
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
)

// through checks the gradient of op(x, extra…) for a random x of shape xs.
func through(op string, xs, out []int64, extra func(f *fg) []*graph.Value, attrs ...*graph.Attribute) func(f *fg) (*graph.Value, []int64, []string) {
	return func(f *fg) (*graph.Value, []int64, []string) {
		x := f.param("x", xs...)
		ins := []*graph.Value{x}
		if extra != nil {
			ins = append(ins, extra(f)...)
		}
		return f.op(op, ins, attrs...), out, []string{"x"}
	}
}

func consts(vs ...[]int64) func(f *fg) []*graph.Value {
	return func(f *fg) []*graph.Value {
		var out []*graph.Value
		for _, v := range vs {
			if v == nil {
				out = append(out, nil)
				continue
			}
			out = append(out, f.i1(v...))
		}
		return out
	}
}

var shapeCases = []ruleCase{
	{name: "Flatten", dt: d, build: through("Flatten", []int64{2, 3, 2, 2}, []int64{2, 12}, nil, aI("axis", 1))},
	{name: "Reshape", dt: d, build: through("Reshape", []int64{2, 3, 4}, []int64{6, 4}, consts([]int64{-1, 4}))},
	{name: "Transpose", dt: d, build: through("Transpose", []int64{2, 3, 4}, []int64{4, 2, 3}, nil, aIs("perm", []int64{2, 0, 1}))},
	{name: "Squeeze", dt: d, build: through("Squeeze", []int64{2, 1, 3}, []int64{2, 3}, consts([]int64{1}))},
	{name: "Unsqueeze", dt: d, build: through("Unsqueeze", []int64{2, 3}, []int64{2, 1, 3, 1}, consts([]int64{1, 3}))},
	{name: "Expand", dt: d, build: through("Expand", []int64{3, 1}, []int64{2, 3, 4}, consts([]int64{2, 3, 4}))},
	{name: "Slice/static", dt: d, build: through("Slice", []int64{4, 6}, []int64{2, 3}, consts([]int64{1, -4}, []int64{3, 5}, []int64{0, 1}))},
	{name: "Slice/step2", dt: d, build: through("Slice", []int64{4, 7}, []int64{4, 3}, consts([]int64{1}, []int64{100}, []int64{1}, []int64{2}))},
	{name: "Slice/negative-step", dt: d, build: through("Slice", []int64{4, 5}, []int64{4, 2}, consts([]int64{-1}, []int64{-5}, []int64{1}, []int64{-2}))},
	{name: "Gather/scalar-axis1", dt: d, build: func(f *fg) (*graph.Value, []int64, []string) {
		x := f.param("x", 2, 5, 3)
		return f.op("Gather", []*graph.Value{x, f.ints([]int64{}, 0)}, aI("axis", 1)), []int64{2, 3}, []string{"x"}
	}},
	{name: "Gather/repeated", dt: d, build: func(f *fg) (*graph.Value, []int64, []string) {
		x := f.param("x", 5, 3)
		return f.op("Gather", []*graph.Value{x, f.ints([]int64{2, 2}, 1, 4, 1, -1)}), []int64{2, 2, 3}, []string{"x"}
	}},
	{name: "Concat", dt: d, build: func(f *fg) (*graph.Value, []int64, []string) {
		a, b := f.param("a", 2, 1, 4), f.param("b", 2, 3, 4)
		return f.op("Concat", []*graph.Value{a, b, a}, aI("axis", 1)), []int64{2, 5, 4}, []string{"a", "b"}
	}},
	{name: "Split", dt: d, build: func(f *fg) (*graph.Value, []int64, []string) {
		x := f.param("x", 2, 6)
		parts := f.opN("Split", []*graph.Value{x, f.i1(1, 2, 3)}, 3, aI("axis", 1))
		// part 1 unused: its gradient is zero
		return f.op("Concat", []*graph.Value{parts[2], parts[0]}, aI("axis", 1)), []int64{2, 4}, []string{"x"}
	}},
	{name: "Where", dt: d, build: func(f *fg) (*graph.Value, []int64, []string) {
		a, b := f.param("a", 2, 3), f.param("b", 3)
		c := f.op("Greater", []*graph.Value{a, f.scalarF(0)})
		return f.op("Where", []*graph.Value{c, a, b}), []int64{2, 3}, []string{"a", "b"}
	}},
	{name: "Cast-Identity", dt: d, eps: f32eps, tol: 1e-3, build: func(f *fg) (*graph.Value, []int64, []string) {
		x := f.param("x", 2, 3)
		y := f.op("Cast", []*graph.Value{f.op("Identity", []*graph.Value{x})}, aI("to", int64(graph.Float)))
		return f.op("Cast", []*graph.Value{f.op("Mul", []*graph.Value{y, y})}, aI("to", int64(graph.Double))), []int64{2, 3}, []string{"x"}
	}},
	{name: "ReduceSum/keep0", dt: d, build: through("ReduceSum", []int64{2, 3, 4}, []int64{3}, consts([]int64{0, -1}), aI("keepdims", 0))},
	{name: "ReduceMean/keep1", dt: d, build: through("ReduceMean", []int64{2, 3, 4}, []int64{2, 3, 1}, nil, aIs("axes", []int64{-1}))},
	{name: "ReduceMean/all", dt: d, build: through("ReduceMean", []int64{2, 3}, []int64{1, 1}, nil)},
	{name: "Pad", dt: d, build: through("Pad", []int64{2, 3, 4}, []int64{2, 5, 5}, consts([]int64{0, 1, 0, 0, 1, 1}))},
	{name: "Pad/axes", dt: d, opset: 18, build: through("Pad", []int64{2, 3, 4}, []int64{2, 3, 7}, func(f *fg) []*graph.Value {
		return []*graph.Value{f.i1(2, 1), nil, f.i1(-1)}
	})},
	{name: "Dropout/inference", dt: d, build: func(f *fg) (*graph.Value, []int64, []string) {
		x := f.param("x", 2, 3)
		y := f.opN("Dropout", []*graph.Value{x, f.scalarF(0.3)}, 2)[0]
		return f.op("Tanh", []*graph.Value{y}), []int64{2, 3}, []string{"x"}
	}},
	{name: "Reshape/shape-chain", dt: d, build: func(f *fg) (*graph.Value, []int64, []string) {
		// PyTorch's dynamic reshape: Shape → Gather → Unsqueeze → Concat → Reshape.
		x := f.param("x", 2, 3, 4)
		sh := f.op("Shape", []*graph.Value{x})
		n := f.op("Unsqueeze", []*graph.Value{f.op("Gather", []*graph.Value{sh, f.ints([]int64{}, 0)}), f.i1(0)})
		tgt := f.op("Concat", []*graph.Value{n, f.i1(3, 2, 2)}, aI("axis", 0))
		return f.op("Reshape", []*graph.Value{f.op("Sigmoid", []*graph.Value{x}), tgt}), []int64{2, 3, 2, 2}, []string{"x"}
	}},
}

func TestRulesShape(t *testing.T) { runCases(t, shapeCases) }
