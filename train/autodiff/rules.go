package autodiff

import (
	"math"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/shapes"
)

// GradCtx is what a rule sees: the original node, its inputs and outputs in the
// training graph, the forward node emitted for it (when it was copied), the
// gradients of its outputs (nil where none flows) and which inputs need a
// gradient.
type GradCtx struct {
	b    *builder
	n    *graph.Node
	fn   *graph.Node // forward node in the training graph (nil when lowered)
	in   []*graph.Value
	out  []*graph.Value
	dY   []*graph.Value
	need []bool
	aux  map[string]*graph.Value
}

func (c *GradCtx) needs(i int) bool { return i < len(c.need) && c.need[i] }

// g is the gradient of output 0.
func (c *GradCtx) g() *graph.Value { return c.dY[0] }

// The exported methods are what a rule outside this package (Register)
// works with; the built-in rules also use the builder directly.

// Node is the forward graph's node whose gradient the rule computes.
func (c *GradCtx) Node() *graph.Node { return c.n }

// Input is the training graph's value of the node's input i (nil when
// absent).
func (c *GradCtx) Input(i int) *graph.Value { return at(c.in, i) }

// Output is the training graph's value of the node's output i.
func (c *GradCtx) Output(i int) *graph.Value { return at(c.out, i) }

// OutputGrad is the gradient of output i (nil where none flows).
func (c *GradCtx) OutputGrad(i int) *graph.Value { return at(c.dY, i) }

// Needs reports whether input i needs a gradient; the rule returns nil for
// the inputs that do not.
func (c *GradCtx) Needs(i int) bool { return c.needs(i) }

// Emit adds a node of the ai.onnx op opType to the training graph and
// returns its one output, typed by the op's shape rule.
func (c *GradCtx) Emit(opType string, inputs []*graph.Value, attrs ...*graph.Attribute) *graph.Value {
	return c.b.op1(opType, inputs, attrs...)
}

// Scalar is a constant scalar of type dt.
func (c *GradCtx) Scalar(dt graph.DType, v float64) *graph.Value { return c.b.scalarF(dt, v) }

// DType is the inferred element type of a training-graph value.
func (c *GradCtx) DType(v *graph.Value) graph.DType { return c.b.dtype(v) }

// Shape is the inferred shape of a training-graph value (sizes ≤
// shapes.SymBase are symbols; nil: rank unknown).
func (c *GradCtx) Shape(v *graph.Value) []int64 { return c.b.shape(v) }

// ReduceTo sums g over the axes along which x was broadcast to g's shape
// (U(g → x) in docs/GRADIENTS.md).
func (c *GradCtx) ReduceTo(g, x *graph.Value) *graph.Value { return c.b.unbroadcast(g, x) }

func at(vs []*graph.Value, i int) *graph.Value {
	if i < 0 || i >= len(vs) {
		return nil
	}
	return vs[i]
}

// forward emits n into the training graph: its forward lowering
// (fwdRules), or a copy.
func (b *builder) forward(n *graph.Node, p *planned) {
	if fwd := fwdRules[n.OpType]; fwd != nil && n.IsDefaultDomain() {
		if fn := fwd(b, n, p); fn != nil {
			b.fwdNodes[n] = fn
		}
		return
	}
	b.copyNode(n, nil, nil)
}

// copyNode emits a copy of n with its inputs mapped (ins overrides them when
// non-nil) and its outputs under the same names (extra output names appended
// when given), and maps the outputs.
func (b *builder) copyNode(n *graph.Node, ins []*graph.Value, attrs []*graph.Attribute) *graph.Node {
	if ins == nil {
		for _, in := range n.Inputs() {
			ins = append(ins, b.mappedOrNil(in))
		}
		for i, in := range n.Inputs() {
			if in != nil && ins[i] == nil {
				b.fail("autodiff: %v: input %q is not available in the training graph", n, in.Name)
			}
		}
	}
	if attrs == nil {
		attrs = n.Attrs
	}
	outs := make([]string, len(n.Outputs()))
	for i, o := range n.Outputs() {
		if o != nil {
			outs[i] = o.Name
		}
	}
	fn, err := b.g.AddNode(n.OpType, n.Domain, n.Name, ins, outs, attrs...)
	if err != nil {
		b.fail("autodiff: %v", err)
	}
	b.infer(fn)
	for i, o := range n.Outputs() {
		if o != nil {
			b.vmap[o] = fn.Output(i)
		}
	}
	b.fwdNodes[n] = fn
	return fn
}

// --- elementwise -----------------------------------------------------------

// gradAdd: Y = A + B (broadcasting). dA = U(dY → A), dB = U(dY → B).
// https://onnx.ai/onnx/operators/onnx__Add.html
func gradAdd(c *GradCtx) []*graph.Value {
	b := c.b
	out := make([]*graph.Value, 2)
	for i := 0; i < 2; i++ {
		if c.needs(i) {
			out[i] = b.unbroadcast(c.g(), c.in[i])
		}
	}
	return out
}

// gradSub: Y = A − B. dA = U(dY), dB = −U(dY).
// https://onnx.ai/onnx/operators/onnx__Sub.html
func gradSub(c *GradCtx) []*graph.Value {
	b := c.b
	out := make([]*graph.Value, 2)
	if c.needs(0) {
		out[0] = b.unbroadcast(c.g(), c.in[0])
	}
	if c.needs(1) {
		out[1] = b.unbroadcast(b.neg(c.g()), c.in[1])
	}
	return out
}

// gradMul: Y = A·B. dA = U(dY·B), dB = U(dY·A).
// https://onnx.ai/onnx/operators/onnx__Mul.html
func gradMul(c *GradCtx) []*graph.Value {
	b := c.b
	out := make([]*graph.Value, 2)
	if c.needs(0) {
		out[0] = b.unbroadcast(b.mul(c.g(), c.in[1]), c.in[0])
	}
	if c.needs(1) {
		out[1] = b.unbroadcast(b.mul(c.g(), c.in[0]), c.in[1])
	}
	return out
}

// gradDiv: Y = A/B. dA = U(dY/B), dB = U(−dY·Y/B).
// https://onnx.ai/onnx/operators/onnx__Div.html
func gradDiv(c *GradCtx) []*graph.Value {
	b := c.b
	out := make([]*graph.Value, 2)
	if c.needs(0) {
		out[0] = b.unbroadcast(b.div(c.g(), c.in[1]), c.in[0])
	}
	if c.needs(1) {
		out[1] = b.unbroadcast(b.neg(b.div(b.mul(c.g(), c.out[0]), c.in[1])), c.in[1])
	}
	return out
}

// gradSum: Y = Σ X_i (broadcasting). dX_i = U(dY → X_i).
// https://onnx.ai/onnx/operators/onnx__Sum.html
func gradSum(c *GradCtx) []*graph.Value {
	out := make([]*graph.Value, len(c.in))
	for i := range c.in {
		if c.needs(i) {
			out[i] = c.b.unbroadcast(c.g(), c.in[i])
		}
	}
	return out
}

// gradNeg: Y = −X. dX = −dY.
func gradNeg(c *GradCtx) []*graph.Value { return []*graph.Value{c.b.neg(c.g())} }

// gradPow: Y = X^E with E constant (stop-gradient). dX = U(dY·E·X^(E−1)).
// https://onnx.ai/onnx/operators/onnx__Pow.html
func gradPow(c *GradCtx) []*graph.Value {
	b := c.b
	x, e := c.in[0], c.in[1]
	dt := b.dtype(x)
	var d *graph.Value
	if ev := b.fvals(e); len(ev) == 1 {
		switch ev[0] {
		case 1:
			d = c.g()
		case 2:
			d = b.mul(c.g(), b.mulF(x, 2))
		default:
			d = b.mul(c.g(), b.mulF(b.op1("Pow", []*graph.Value{x, b.scalarF(dt, ev[0]-1)}), ev[0]))
		}
	} else {
		ef := b.cast(e, dt)
		d = b.mul(c.g(), b.mul(ef, b.op1("Pow", []*graph.Value{x, b.sub(ef, b.scalarF(dt, 1))})))
	}
	return []*graph.Value{b.unbroadcast(d, x)}
}

// gradRelu: dX = dY·Ceil(Clip(X, 0, 1)) (subgradient 0 at 0, as PyTorch):
// the mask is 1 exactly where X > 0 (Clip gives a value in (0, 1] there,
// Ceil makes it 1) and 0 elsewhere. The test is on Y = Relu(X) (Y > 0
// exactly where X > 0): Y is what the next layer keeps for its own
// gradient (a Conv's weight gradient), so X need not stay alive until the
// backward (in a ResNet-18 step X is a BatchNormalization output;
// bench/RESULTS.md, section "What changed (commits)", has the peak memory
// this saves).
//
// Clip and Ceil rather than Cast(X > 0) or Where(X > 0, dY, 0): ONNX
// Runtime runs Cast and Where on one thread, Clip, Ceil and Mul on its
// pool, which is faster from 2 threads on and far faster on many
// (bench/RESULTS.md, section "A 16-core Xeon: thread scaling"). The one
// difference from Where: where dY is Inf or NaN at a masked element the
// product is NaN instead of 0 (a gradient that is already non-finite;
// training stops on it either way).
// https://onnx.ai/onnx/operators/onnx__Relu.html
func gradRelu(c *GradCtx) []*graph.Value {
	b := c.b
	x := c.in[0]
	if len(c.out) > 0 && c.out[0] != nil {
		x = c.out[0]
	}
	dt := b.dtype(x)
	mask := b.op1("Ceil", []*graph.Value{b.op1("Clip", []*graph.Value{x, b.scalarF(dt, 0), b.scalarF(dt, 1)})})
	return []*graph.Value{b.mul(c.g(), mask)}
}

// gradLeakyRelu: dX = Where(X > 0, dY, α·dY).
// https://onnx.ai/onnx/operators/onnx__LeakyRelu.html
func gradLeakyRelu(c *GradCtx) []*graph.Value {
	b := c.b
	x := c.in[0]
	alpha := float64(c.n.AttrFloat("alpha", 0.01))
	pos := b.op1("Greater", []*graph.Value{x, b.zeroLike(x)})
	return []*graph.Value{b.where(pos, c.g(), b.mulF(c.g(), alpha))}
}

// gradSigmoid: dX = dY·y·(1−y).
// https://onnx.ai/onnx/operators/onnx__Sigmoid.html
func gradSigmoid(c *GradCtx) []*graph.Value {
	b := c.b
	y := c.out[0]
	return []*graph.Value{b.mul(c.g(), b.mul(y, b.sub(b.scalarF(b.dtype(y), 1), y)))}
}

// gradTanh: dX = dY·(1−y²).
// https://onnx.ai/onnx/operators/onnx__Tanh.html
func gradTanh(c *GradCtx) []*graph.Value {
	b := c.b
	y := c.out[0]
	return []*graph.Value{b.mul(c.g(), b.sub(b.scalarF(b.dtype(y), 1), b.mul(y, y)))}
}

// gradErf: dX = dY·(2/√π)·exp(−x²).
// https://onnx.ai/onnx/operators/onnx__Erf.html
func gradErf(c *GradCtx) []*graph.Value {
	b := c.b
	x := c.in[0]
	e := b.op1("Exp", []*graph.Value{b.neg(b.mul(x, x))})
	return []*graph.Value{b.mul(c.g(), b.mulF(e, 2/math.Sqrt(math.Pi)))}
}

// gradGelu (opset 20): approximate="none": dX = dY·(Φ(x) + x·φ(x));
// approximate="tanh": with u = √(2/π)(x + 0.044715x³), t = tanh u:
// dX = dY·[½(1+t) + ½x(1−t²)·√(2/π)(1 + 3·0.044715x²)].
// https://onnx.ai/onnx/operators/onnx__Gelu.html
func gradGelu(c *GradCtx) []*graph.Value {
	b := c.b
	x := c.in[0]
	dt := b.dtype(x)
	one := b.scalarF(dt, 1)
	if c.n.AttrString("approximate", "none") == "tanh" {
		k := math.Sqrt(2 / math.Pi)
		x2 := b.mul(x, x)
		u := b.mulF(b.add(x, b.mulF(b.mul(x2, x), 0.044715)), k)
		t := b.op1("Tanh", []*graph.Value{u})
		a := b.mulF(b.add(one, t), 0.5)
		du := b.mulF(b.add(one, b.mulF(x2, 3*0.044715)), k)
		s := b.mul(b.mulF(b.mul(x, b.sub(one, b.mul(t, t))), 0.5), du)
		return []*graph.Value{b.mul(c.g(), b.add(a, s))}
	}
	cdf := b.mulF(b.add(one, b.op1("Erf", []*graph.Value{b.mulF(x, 1/math.Sqrt2)})), 0.5)
	pdf := b.mulF(b.op1("Exp", []*graph.Value{b.mulF(b.mul(x, x), -0.5)}), 1/math.Sqrt(2*math.Pi))
	return []*graph.Value{b.mul(c.g(), b.add(cdf, b.mul(x, pdf)))}
}

// gradSqrt: dX = dY·0.5/y.
// https://onnx.ai/onnx/operators/onnx__Sqrt.html
func gradSqrt(c *GradCtx) []*graph.Value {
	b := c.b
	return []*graph.Value{b.div(b.mulF(c.g(), 0.5), c.out[0])}
}

// gradReciprocal: y = 1/x, dX = −dY·y².
// https://onnx.ai/onnx/operators/onnx__Reciprocal.html
func gradReciprocal(c *GradCtx) []*graph.Value {
	b := c.b
	y := c.out[0]
	return []*graph.Value{b.neg(b.mul(c.g(), b.mul(y, y)))}
}

// gradExp: dX = dY·y.
func gradExp(c *GradCtx) []*graph.Value { return []*graph.Value{c.b.mul(c.g(), c.out[0])} }

// gradLog: dX = dY/x.
func gradLog(c *GradCtx) []*graph.Value { return []*graph.Value{c.b.div(c.g(), c.in[0])} }

// gradClip: dX = Where(min < x < max, dY, 0); min and max get none. The
// strict inequalities match PyTorch's hardtanh/ReLU6 backward at the kinks.
// https://onnx.ai/onnx/operators/onnx__Clip.html
func gradClip(c *GradCtx) []*graph.Value {
	b := c.b
	x := c.in[0]
	var cond *graph.Value
	if lo := c.b.mappedOrNilIn(c, 1); lo != nil {
		cond = b.op1("Greater", []*graph.Value{x, lo})
	}
	if hi := c.b.mappedOrNilIn(c, 2); hi != nil {
		h := b.op1("Less", []*graph.Value{x, hi})
		if cond == nil {
			cond = h
		} else {
			cond = b.op1("And", []*graph.Value{cond, h})
		}
	}
	if cond == nil {
		return []*graph.Value{c.g()}
	}
	return []*graph.Value{b.where(cond, c.g(), b.zeroLike(x))}
}

func (b *builder) mappedOrNilIn(c *GradCtx, i int) *graph.Value {
	if i < len(c.in) {
		return c.in[i]
	}
	return nil
}

// gradHardSigmoid: y = max(0, min(1, αx+β)); dX = Where(0 < y < 1, α·dY, 0).
// https://onnx.ai/onnx/operators/onnx__HardSigmoid.html
func gradHardSigmoid(c *GradCtx) []*graph.Value {
	b := c.b
	y := c.out[0]
	alpha := float64(c.n.AttrFloat("alpha", 0.2))
	in := b.op1("And", []*graph.Value{
		b.op1("Greater", []*graph.Value{y, b.zeroLike(y)}),
		b.op1("Less", []*graph.Value{y, b.scalarF(b.dtype(y), 1)})})
	return []*graph.Value{b.where(in, b.mulF(c.g(), alpha), b.zeroLike(y))}
}

// gradHardSwish: y = x·max(0, min(1, x/6 + ½));
// dX = dY·Where(x < −3, 0, Where(x > 3, 1, x/3 + ½)) (PyTorch's convention).
// https://onnx.ai/onnx/operators/onnx__HardSwish.html
func gradHardSwish(c *GradCtx) []*graph.Value {
	b := c.b
	x := c.in[0]
	dt := b.dtype(x)
	mid := b.add(b.mulF(x, 1.0/3), b.scalarF(dt, 0.5))
	d := b.where(b.op1("Greater", []*graph.Value{x, b.scalarF(dt, 3)}), b.scalarF(dt, 1), mid)
	d = b.where(b.op1("Less", []*graph.Value{x, b.scalarF(dt, -3)}), b.zeroLike(x), d)
	return []*graph.Value{b.mul(c.g(), d)}
}

// gradSoftmax (opset ≥ 13, axis a): dX = y ⊙ (dY − ReduceSum(dY ⊙ y, [a])).
// https://onnx.ai/onnx/operators/onnx__Softmax.html
func gradSoftmax(c *GradCtx) []*graph.Value {
	b := c.b
	y := c.out[0]
	ax := shapes.NormAxis(c.n.AttrInt("axis", -1), b.rank(y))
	if ax < 0 {
		b.fail("autodiff: %v: rank unknown", c.n)
	}
	s := b.reduceSum(b.mul(c.g(), y), []int64{ax}, true)
	return []*graph.Value{b.mul(y, b.sub(c.g(), s))}
}

// gradLogSoftmax (opset ≥ 13, axis a): dX = dY − exp(y) ⊙ ReduceSum(dY, [a]).
// https://onnx.ai/onnx/operators/onnx__LogSoftmax.html
func gradLogSoftmax(c *GradCtx) []*graph.Value {
	b := c.b
	y := c.out[0]
	ax := shapes.NormAxis(c.n.AttrInt("axis", -1), b.rank(y))
	if ax < 0 {
		b.fail("autodiff: %v: rank unknown", c.n)
	}
	s := b.reduceSum(c.g(), []int64{ax}, true)
	return []*graph.Value{b.sub(c.g(), b.mul(b.op1("Exp", []*graph.Value{y}), s))}
}

// gradIdentity: dX = dY.
func gradIdentity(c *GradCtx) []*graph.Value { return []*graph.Value{c.g()} }

// gradCast: dX = Cast(dY, to = X's float type).
// https://onnx.ai/onnx/operators/onnx__Cast.html
func gradCast(c *GradCtx) []*graph.Value {
	return []*graph.Value{c.b.cast(c.g(), c.b.dtype(c.in[0]))}
}

// gradWhere: Y = Where(C, A, B). dA = U(Where(C, dY, 0)), dB = U(Where(C, 0, dY)).
// https://onnx.ai/onnx/operators/onnx__Where.html
func gradWhere(c *GradCtx) []*graph.Value {
	b := c.b
	out := make([]*graph.Value, 3)
	z := b.zeroLike(c.g())
	if c.needs(1) {
		out[1] = b.unbroadcast(b.where(c.in[0], c.g(), z), c.in[1])
	}
	if c.needs(2) {
		out[2] = b.unbroadcast(b.where(c.in[0], z, c.g()), c.in[2])
	}
	return out
}

// gradExpand: dX = U(dY → X).
// https://onnx.ai/onnx/operators/onnx__Expand.html
func gradExpand(c *GradCtx) []*graph.Value {
	return []*graph.Value{c.b.unbroadcast(c.g(), c.in[0])}
}

// fwdDropout: inference mode makes Dropout the identity; training mode runs
// Dropout(x, ratio, training_mode=true) with a seed attribute and keeps its
// mask for the gradient.
func fwdDropout(b *builder, n *graph.Node, p *planned) *graph.Node {
	if m := n.Output(1); m != nil && len(m.Uses()) > 0 {
		b.fail("%w: %v: the Dropout mask is used by the model", ErrUnsupported, n)
	}
	x := b.mapped(n.Input(0))
	if !b.spec.Dropout {
		fn := b.emit("Identity", []*graph.Value{x}, []string{n.Output(0).Name})
		b.vmap[n.Output(0)] = fn.Output(0)
		return nil
	}
	ratio := b.mappedOrNil(n.Input(1))
	if ratio == nil {
		ratio = b.scalarF(b.dtype(x), 0.5)
	}
	train := b.constT(&graph.Tensor{DType: graph.Bool, Shape: []int64{}, Raw: []byte{1}})
	maskName := b.name(n.Output(0).Name + "/mask")
	fn := b.emit("Dropout", []*graph.Value{x, ratio, train}, []string{n.Output(0).Name, maskName},
		aI("seed", b.spec.DropoutSeed))
	b.vmap[n.Output(0)] = fn.Output(0)
	b.auxSet(n, "mask", fn.Output(1))
	b.auxSet(n, "ratio", ratio)
	return fn
}

// gradDropout: identity in inference mode; in training mode
// dX = dY·mask/(1−ratio) with the forward's mask.
// https://onnx.ai/onnx/operators/onnx__Dropout.html
func gradDropout(c *GradCtx) []*graph.Value {
	b := c.b
	mask := c.aux["mask"]
	if mask == nil {
		return []*graph.Value{c.g()}
	}
	dt := b.dtype(c.g())
	ratio := c.aux["ratio"]
	var scale *graph.Value
	if rv := b.fvals(ratio); len(rv) == 1 {
		if rv[0] >= 1 {
			return []*graph.Value{b.mulF(c.g(), 0)}
		}
		scale = b.scalarF(dt, 1/(1-rv[0]))
	} else {
		r := b.cast(ratio, dt)
		scale = b.div(b.scalarF(dt, 1), b.sub(b.scalarF(dt, 1), r))
	}
	return []*graph.Value{b.mul(b.mul(c.g(), b.cast(mask, dt)), scale)}
}

func (b *builder) auxSet(n *graph.Node, key string, v *graph.Value) {
	m := b.aux[n]
	if m == nil {
		m = map[string]*graph.Value{}
		b.aux[n] = m
	}
	m[key] = v
}
