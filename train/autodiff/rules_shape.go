package autodiff

import (
	"math"
	"sort"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/ops"
	"github.com/unlearn-tool/unlearn/graph/shapes"
)

// gradReshape serves Flatten, Reshape, Squeeze and Unsqueeze: dX =
// Reshape(dY, Shape(X)). https://onnx.ai/onnx/operators/onnx__Reshape.html
func gradReshape(c *GradCtx) []*graph.Value {
	return []*graph.Value{c.b.reshapeLike(c.g(), c.in[0])}
}

// gradTranspose: dX = Transpose(dY, inverse permutation).
// https://onnx.ai/onnx/operators/onnx__Transpose.html
func gradTranspose(c *GradCtx) []*graph.Value {
	b := c.b
	r := b.rank(c.in[0])
	perm := c.n.AttrInts("perm", nil)
	if perm == nil {
		if r < 0 {
			b.fail("%w: %v: rank unknown", ErrUnsupported, c.n)
		}
		for i := r - 1; i >= 0; i-- {
			perm = append(perm, int64(i))
		}
	}
	inv := make([]int64, len(perm))
	for i, p := range perm {
		inv[p] = int64(i)
	}
	return []*graph.Value{b.transpose(c.g(), inv)}
}

// gradConcat: split dY along the axis by each input's size.
// https://onnx.ai/onnx/operators/onnx__Concat.html
func gradConcat(c *GradCtx) []*graph.Value {
	b := c.b
	r := b.rank(c.out[0])
	if r < 0 {
		b.fail("%w: %v: rank unknown", ErrUnsupported, c.n)
	}
	ax := shapes.NormAxis(c.n.AttrInt("axis", 0), r)
	sizes := make([]int64, len(c.in))
	static := true
	for i, in := range c.in {
		s := b.shape(in)
		if s == nil || s[ax] < 0 {
			static = false
			break
		}
		sizes[i] = s[ax]
	}
	var split *graph.Value
	if static {
		split = b.i64(sizes...)
	} else {
		parts := make([]*graph.Value, len(c.in))
		for i, in := range c.in {
			parts[i] = b.op1("Slice", []*graph.Value{b.op1("Shape", []*graph.Value{in}), b.i64(ax), b.i64(ax + 1)})
		}
		split = b.op1("Concat", parts, aI("axis", 0))
	}
	if len(c.in) == 1 {
		return []*graph.Value{c.g()}
	}
	outs := b.op("Split", []*graph.Value{c.g(), split}, len(c.in), aI("axis", ax))
	res := make([]*graph.Value, len(c.in))
	for i := range c.in {
		if c.needs(i) {
			res[i] = outs[i]
		}
	}
	return res
}

// gradSplit: dX = Concat of the output gradients along the axis (zeros for
// an output that got none). https://onnx.ai/onnx/operators/onnx__Split.html
func gradSplit(c *GradCtx) []*graph.Value {
	b := c.b
	r := b.rank(c.in[0])
	if r < 0 {
		b.fail("%w: %v: rank unknown", ErrUnsupported, c.n)
	}
	ax := shapes.NormAxis(c.n.AttrInt("axis", 0), r)
	parts := make([]*graph.Value, len(c.out))
	for i, o := range c.out {
		if c.dY[i] != nil {
			parts[i] = c.dY[i]
		} else {
			parts[i] = b.zerosShaped(o)
		}
	}
	if len(parts) == 1 {
		return []*graph.Value{parts[0]}
	}
	return []*graph.Value{b.op1("Concat", parts, aI("axis", ax))}
}

// gradSlice: with static sizes on the sliced axes and unit steps, dX =
// Pad(dY, [starts, dims−ends]); otherwise the index form of gradIndexed.
// https://onnx.ai/onnx/operators/onnx__Slice.html
func gradSlice(c *GradCtx) []*graph.Value {
	b := c.b
	xs := b.shape(c.in[0])
	if c.fn != nil && xs != nil {
		if ax, ok := b.types.SliceParams(c.fn, xs); ok {
			pads := make([]int64, 2*len(xs))
			simple := true
			for _, a := range ax {
				if !a.Resolved || a.Step != 1 {
					simple = false
					break
				}
				pads[a.Axis] = a.Start
				pads[len(xs)+int(a.Axis)] = xs[a.Axis] - max(a.End, a.Start)
			}
			if simple {
				return []*graph.Value{b.op1("Pad", []*graph.Value{c.g(), b.i64(pads...)})}
			}
		}
	}
	return []*graph.Value{b.gradIndexed(c)}
}

// gradGather: the index form (repeated indices add up).
// https://onnx.ai/onnx/operators/onnx__Gather.html
func gradGather(c *GradCtx) []*graph.Value {
	return []*graph.Value{c.b.gradIndexed(c)}
}

// gradIndexed differentiates an indexing op f(X, …) (Slice, Gather):
// apply f to the index tensor Reshape(Range(0, Size(X)), Shape(X)) with the
// node's other inputs and attributes, then ScatterElements-add dY into flat
// zeros at those indices and reshape to X.
func (b *builder) gradIndexed(c *GradCtx) *graph.Value {
	x := c.in[0]
	var size *graph.Value
	if s := b.shape(x); s != nil && shapes.AllKnown(s) {
		size = b.scalarI64(graph.NumElements(s))
	} else {
		size = b.op1("Size", []*graph.Value{x})
	}
	rng := b.op1("Range", []*graph.Value{b.scalarI64(0), size, b.scalarI64(1)})
	idx := b.reshapeLike(rng, x)
	ins := append([]*graph.Value{idx}, c.in[1:]...)
	sel := b.op1(c.n.OpType, ins, c.n.Attrs...)
	return b.scatterAdd(x, sel, c.g())
}

// gradReduce serves ReduceSum and ReduceMean: unsqueeze dY at the reduced
// axes when keepdims=0, Expand to Shape(X), and divide by the reduced count
// for the mean. https://onnx.ai/onnx/operators/onnx__ReduceSum.html
func gradReduce(c *GradCtx) []*graph.Value {
	b := c.b
	x, g := c.in[0], c.g()
	if c.fn == nil {
		b.fail("autodiff: %v: no forward node", c.n)
	}
	axes, ok := b.types.ReduceAxes(c.fn)
	r := b.rank(x)
	if !ok || r < 0 {
		b.fail("%w: %v: reduction axes or rank unknown", ErrUnsupported, c.n)
	}
	if len(axes) == 0 { // noop_with_empty_axes
		return []*graph.Value{g}
	}
	norm := make([]int64, len(axes))
	for i, a := range axes {
		norm[i] = shapes.NormAxis(a, r)
	}
	sort.Slice(norm, func(i, j int) bool { return norm[i] < norm[j] })
	if c.n.AttrInt("keepdims", 1) == 0 {
		g = b.unsqueeze(g, norm)
	}
	e := b.op1("Expand", []*graph.Value{g, b.shapeOf(x)})
	if c.n.OpType == ops.ReduceMean {
		xs := b.shape(x)
		cnt := int64(1)
		static := true
		for _, a := range norm {
			if xs[a] < 0 {
				static = false
			}
			cnt *= xs[a]
		}
		if static {
			e = b.mulF(e, 1/float64(cnt))
		} else {
			dt := b.dtype(x)
			ratio := b.div(b.cast(b.op1("Size", []*graph.Value{c.out[0]}), dt), b.cast(b.op1("Size", []*graph.Value{x}), dt))
			e = b.mul(e, ratio)
		}
	}
	return []*graph.Value{e}
}

// gradPad (mode "constant", pads ≥ 0): dX = Slice(dY, starts = pads_begin,
// ends = −pads_end (to the end where 0)) on the padded axes.
// https://onnx.ai/onnx/operators/onnx__Pad.html
func gradPad(c *GradCtx) []*graph.Value {
	b := c.b
	if m := c.n.AttrString("mode", "constant"); m != "constant" {
		b.fail("%w: %v: Pad mode %q", ErrUnsupported, c.n, m)
	}
	r := b.rank(c.in[0])
	pads := b.ivals(c.in[1])
	if r < 0 || pads == nil {
		b.fail("%w: %v: Pad needs constant pads and a known rank", ErrUnsupported, c.n)
	}
	axes := iota64(0, r)
	if len(c.in) > 3 && c.in[3] != nil {
		axes = b.ivals(c.in[3])
		if axes == nil {
			b.fail("%w: %v: Pad axes must be constant", ErrUnsupported, c.n)
		}
	}
	if len(pads) != 2*len(axes) {
		b.fail("%w: %v: %d pads for %d axes", ErrModel, c.n, len(pads), len(axes))
	}
	var st, en, ax []int64
	for i, a := range axes {
		pb, pe := pads[i], pads[len(axes)+i]
		if pb < 0 || pe < 0 {
			b.fail("%w: %v: negative pads", ErrUnsupported, c.n)
		}
		if pb == 0 && pe == 0 {
			continue
		}
		end := int64(math.MaxInt64)
		if pe > 0 {
			end = -pe
		}
		st, en, ax = append(st, pb), append(en, end), append(ax, shapes.NormAxis(a, r))
	}
	if len(ax) == 0 {
		return []*graph.Value{c.g()}
	}
	return []*graph.Value{b.op1("Slice", []*graph.Value{c.g(), b.i64(st...), b.i64(en...), b.i64(ax...)})}
}
