package autodiff

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/shapes"
)

// bailout carries an error out of deeply nested emission code; Build
// recovers it (callers see errors, never panics).
type bailout struct{ err error }

// builder emits the training graph.
type builder struct {
	spec  Spec
	orig  *graph.Graph
	g     *graph.Graph
	opset int64

	vmap       map[*graph.Value]*graph.Value // original value → training-graph value
	used       map[string]bool               // names taken in the training graph
	count      map[string]int                // name allocator counters
	consts     map[string]*graph.Value       // deduplicated constant initializers
	shapeNodes map[*graph.Value]*graph.Value // cached Shape(v) nodes
	types      *shapes.Inferrer              // inferred types of training-graph values

	// aux holds extra forward values a rule needs (x̂ and 1/σ of a
	// normalization, the indices of a MaxPool, the mask of a Dropout), keyed
	// by the original node.
	aux map[*graph.Node]map[string]*graph.Value
	// fwdNodes maps an original node to the node emitted for it (when the
	// forward copied or re-emitted it as one node).
	fwdNodes map[*graph.Node]*graph.Node

	bnStats []BNStat
	// chanScaled records gradients that a rule emitted as u·a, a per-channel
	// factor a [C] along axis 1 (BatchNormalization's input gradient), so
	// that a Conv producing the value can take u and fold a into its
	// filter instead of a pass over the activation (foldChannelScale).
	chanScaled map[*graph.Value]chanScale
	// convForms records the forms the Lowering chose, in order
	// ("input:<form>", "weight:<form>"; Artifacts.Lowered).
	convForms []string
	// domains holds the opset versions of the other domains the Lowering
	// emitted nodes of (com.microsoft.nchwc).
	domains map[string]int64
	// memo is the Lowering's per-graph cache (lowering.Emitter.Memo).
	memo map[any]*graph.Value
	// fwdGeom holds the geometry of a Conv whose forward the Lowering
	// emitted as other nodes.
	fwdGeom map[*graph.Node]shapes.Geom
	// partial holds the weight gradients computed for some output
	// channels only (Spec.GradChannels, gradchannels.go).
	partial map[*graph.Value]ChannelGrad
	// lostRank is the first forward node whose inputs all had a known rank
	// and one of whose outputs did not, after the declared types
	// (builder.declared); nil when none.
	lostRank *graph.Node
}

func newBuilder(orig *graph.Graph, opset int64, spec Spec) *builder {
	b := &builder{
		spec: spec, orig: orig, g: graph.NewGraph(orig.Name + "_training"), opset: opset,
		vmap: map[*graph.Value]*graph.Value{}, types: shapes.New(),
		used: map[string]bool{}, count: map[string]int{}, consts: map[string]*graph.Value{},
		shapeNodes: map[*graph.Value]*graph.Value{},
		aux:        map[*graph.Node]map[string]*graph.Value{}, fwdNodes: map[*graph.Node]*graph.Node{},
		chanScaled: map[*graph.Value]chanScale{}, domains: map[string]int64{}, memo: map[any]*graph.Value{},
		fwdGeom: map[*graph.Node]shapes.Geom{}, partial: map[*graph.Value]ChannelGrad{},
	}
	if orig.Name == "" {
		b.g.Name = "training"
	}
	// Every name of the forward graph is reserved, so that names allocated
	// early never clash with forward values copied later.
	for _, v := range orig.Values() {
		b.used[v.Name] = true
	}
	return b
}

func (b *builder) fail(format string, args ...any) {
	panic(bailout{fmt.Errorf(format, args...)})
}

// name returns an unused value name based on base and reserves it.
func (b *builder) name(base string) string {
	if !b.used[base] {
		b.used[base] = true
		return base
	}
	for {
		b.count[base]++
		n := base + "_" + strconv.Itoa(b.count[base])
		if !b.used[n] {
			b.used[n] = true
			return n
		}
	}
}

// op emits a node with nout fresh outputs and returns them.
func (b *builder) op(opType string, ins []*graph.Value, nout int, attrs ...*graph.Attribute) []*graph.Value {
	outs := make([]string, nout)
	for i := range outs {
		outs[i] = b.name("ad/" + opType)
	}
	return b.emit(opType, ins, outs, attrs...).Outputs()
}

// op1 emits a node with one output.
func (b *builder) op1(opType string, ins []*graph.Value, attrs ...*graph.Attribute) *graph.Value {
	return b.op(opType, ins, 1, attrs...)[0]
}

// emit adds a node with the given output names ("" omits one) and infers
// the types of its outputs.
func (b *builder) emit(opType string, ins []*graph.Value, outs []string, attrs ...*graph.Attribute) *graph.Node {
	nodeName := ""
	for _, o := range outs {
		if o != "" {
			nodeName = o
			break
		}
	}
	n, err := b.g.AddNode(opType, "", nodeName, ins, outs, attrs...)
	if err != nil {
		b.fail("autodiff: %v", err)
	}
	b.infer(n)
	return n
}

// Attribute constructors.
var (
	aI  = graph.IntAttr
	aIs = graph.IntsAttr
	aF  = graph.FloatAttr
	aS  = graph.StringAttr
	aT  = graph.TensorAttr
)

// constT adds (or reuses) a constant initializer holding t.
func (b *builder) constT(t *graph.Tensor) *graph.Value {
	key := fmt.Sprintf("%d|%v|%x", t.DType, t.Shape, t.Raw)
	if v, ok := b.consts[key]; ok {
		return v
	}
	t = t.Clone()
	t.Name = b.name("ad/const")
	v, err := b.g.AddInitializer(t)
	if err != nil {
		b.fail("autodiff: %v", err)
	}
	b.types.Set(v, shapes.OfTensor(t))
	b.consts[key] = v
	return v
}

// i64 is a 1-D int64 constant.
func (b *builder) i64(vals ...int64) *graph.Value {
	return b.constT(graph.NewInt64("", []int64{int64(len(vals))}, vals))
}

// scalarI64 is a 0-D int64 constant.
func (b *builder) scalarI64(v int64) *graph.Value {
	return b.constT(graph.NewInt64("", []int64{}, []int64{v}))
}

// floatTensor makes a tensor of a float type from float64 values.
func floatTensor(dt graph.DType, shape []int64, vals []float64) *graph.Tensor {
	t := &graph.Tensor{DType: dt, Shape: append([]int64{}, shape...)}
	switch dt {
	case graph.Double:
		t.Raw = make([]byte, 8*len(vals))
		for i, x := range vals {
			binary.LittleEndian.PutUint64(t.Raw[8*i:], math.Float64bits(x))
		}
	default: // float32 (the only other type the rules emit)
		t.DType = graph.Float
		t.Raw = make([]byte, 4*len(vals))
		for i, x := range vals {
			binary.LittleEndian.PutUint32(t.Raw[4*i:], math.Float32bits(float32(x)))
		}
	}
	return t
}

// scalarF is a 0-D constant of float type dt.
func (b *builder) scalarF(dt graph.DType, v float64) *graph.Value {
	return b.constT(floatTensor(dt, []int64{}, []float64{v}))
}

// constF is a float constant of type dt and the given shape.
func (b *builder) constF(dt graph.DType, shape []int64, vals []float64) *graph.Value {
	return b.constT(floatTensor(dt, shape, vals))
}

// removeDead removes the node producing v when v has no uses, and then
// the producers of its inputs that this leaves unused (initializers stay:
// constants are shared through b.consts).
func (b *builder) removeDead(v *graph.Value) {
	n, _ := v.Producer()
	if n == nil || len(v.Uses()) > 0 {
		return
	}
	for _, o := range n.Outputs() {
		if o != nil && len(o.Uses()) > 0 {
			return
		}
	}
	ins := n.Inputs()
	if err := b.g.RemoveNode(n); err != nil {
		b.fail("autodiff: %v", err)
	}
	for _, in := range ins {
		if in != nil {
			b.removeDead(in)
		}
	}
}

// --- small op helpers ------------------------------------------------------

func (b *builder) add(x, y *graph.Value) *graph.Value { return b.op1("Add", []*graph.Value{x, y}) }
func (b *builder) sub(x, y *graph.Value) *graph.Value { return b.op1("Sub", []*graph.Value{x, y}) }
func (b *builder) mul(x, y *graph.Value) *graph.Value { return b.op1("Mul", []*graph.Value{x, y}) }
func (b *builder) div(x, y *graph.Value) *graph.Value { return b.op1("Div", []*graph.Value{x, y}) }
func (b *builder) neg(x *graph.Value) *graph.Value    { return b.op1("Neg", []*graph.Value{x}) }

// mulF multiplies by a constant scalar (skipped for 1).
func (b *builder) mulF(x *graph.Value, c float64) *graph.Value {
	if c == 1 {
		return x
	}
	return b.mul(x, b.scalarF(b.dtype(x), c))
}

func (b *builder) where(c, x, y *graph.Value) *graph.Value {
	return b.op1("Where", []*graph.Value{c, x, y})
}

func (b *builder) zeroLike(x *graph.Value) *graph.Value { return b.scalarF(b.dtype(x), 0) }

func (b *builder) transpose(x *graph.Value, perm []int64) *graph.Value {
	return b.op1("Transpose", []*graph.Value{x}, aIs("perm", perm))
}

func (b *builder) reshape(x *graph.Value, shape []int64) *graph.Value {
	return b.op1("Reshape", []*graph.Value{x, b.i64(shape...)})
}

func (b *builder) cast(x *graph.Value, dt graph.DType) *graph.Value {
	if b.dtype(x) == dt {
		return x
	}
	return b.op1("Cast", []*graph.Value{x}, aI("to", int64(dt)))
}

// reduceSum sums over axes (all axes must be non-empty).
func (b *builder) reduceSum(x *graph.Value, axes []int64, keep bool) *graph.Value {
	if len(axes) == 0 {
		return x
	}
	k := int64(0)
	if keep {
		k = 1
	}
	return b.op1("ReduceSum", []*graph.Value{x, b.i64(axes...)}, aI("keepdims", k))
}

// reduceMean averages over axes in the form the training opset wants.
func (b *builder) reduceMean(x *graph.Value, axes []int64, keep bool) *graph.Value {
	k := int64(0)
	if keep {
		k = 1
	}
	if b.opset >= 18 {
		return b.op1("ReduceMean", []*graph.Value{x, b.i64(axes...)}, aI("keepdims", k))
	}
	return b.op1("ReduceMean", []*graph.Value{x}, aIs("axes", axes), aI("keepdims", k))
}

func (b *builder) unsqueeze(x *graph.Value, axes []int64) *graph.Value {
	return b.op1("Unsqueeze", []*graph.Value{x, b.i64(axes...)})
}

// shapeOf returns x's shape as a value: a constant when it is static, a
// (cached) Shape node otherwise.
func (b *builder) shapeOf(x *graph.Value) *graph.Value {
	if s := b.shape(x); s != nil && shapes.AllKnown(s) {
		return b.i64(s...)
	}
	if v, ok := b.shapeNodes[x]; ok {
		return v
	}
	v := b.op1("Shape", []*graph.Value{x})
	b.shapeNodes[x] = v
	return v
}

// reshapeLike reshapes g to x's shape (static with at most one unknown
// dimension as −1, else Shape(x)).
func (b *builder) reshapeLike(g, x *graph.Value) *graph.Value {
	xs, gs := b.shape(x), b.shape(g)
	if xs != nil && gs != nil && slices.Equal(xs, gs) {
		return g
	}
	if xs != nil {
		unknown := 0
		t := make([]int64, len(xs))
		for i, d := range xs {
			t[i] = d
			if d < 0 {
				unknown++
				t[i] = -1
			}
		}
		if unknown <= 1 {
			out := b.op1("Reshape", []*graph.Value{g, b.i64(t...)})
			b.types.Of(out).Shape = append([]int64{}, xs...)
			return out
		}
	}
	out := b.op1("Reshape", []*graph.Value{g, b.shapeOf(x)})
	if xs != nil {
		b.types.Of(out).Shape = append([]int64{}, xs...)
	}
	return out
}

// zerosShaped is a zero tensor of x's shape and type.
func (b *builder) zerosShaped(x *graph.Value) *graph.Value {
	return b.op1("Expand", []*graph.Value{b.zeroLike(x), b.shapeOf(x)})
}

// unbroadcast reduces g (the gradient of a broadcast result) back to x's
// shape: sum over the leading axes x lacks and over the axes where x has
// size 1 and g does not, then reshape. With unknown ranks it uses the
// dynamic Shape/Equal/NonZero form of docs/GRADIENTS.md "Shared machinery".
func (b *builder) unbroadcast(g, x *graph.Value) *graph.Value {
	xs, gs := b.shape(x), b.shape(g)
	if xs == nil || gs == nil {
		return b.unbroadcastDynamic(g, x)
	}
	if len(xs) > len(gs) {
		b.fail("autodiff: unbroadcast: gradient of rank %d for a value of rank %d", len(gs), len(xs))
	}
	lead := len(gs) - len(xs)
	var axes []int64
	for i := range gs {
		if i < lead {
			axes = append(axes, int64(i))
			continue
		}
		if xs[i-lead] == 1 && gs[i] != 1 {
			axes = append(axes, int64(i))
		}
	}
	if len(axes) == 0 {
		return g
	}
	r := b.reduceSum(g, axes, true)
	return b.reshapeLike(r, x)
}

func (b *builder) unbroadcastDynamic(g, x *graph.Value) *graph.Value {
	sg := b.shapeOf(g)
	sx := b.shapeOf(x)
	rg := b.op1("Size", []*graph.Value{sg})
	rx := b.op1("Size", []*graph.Value{sx})
	padN := b.unsqueeze(b.sub(rg, rx), []int64{0})
	ones := b.op1("ConstantOfShape", []*graph.Value{padN}, aT("value", graph.NewInt64("", []int64{1}, []int64{1})))
	padded := b.op1("Concat", []*graph.Value{ones, sx}, aI("axis", 0))
	isOne := b.op1("Equal", []*graph.Value{padded, b.i64(1)})
	gOne := b.op1("Equal", []*graph.Value{sg, b.i64(1)})
	sel := b.op1("And", []*graph.Value{isOne, b.op1("Not", []*graph.Value{gOne})})
	axes := b.op1("Squeeze", []*graph.Value{b.op1("NonZero", []*graph.Value{sel}), b.i64(0)})
	r := b.op1("ReduceSum", []*graph.Value{g, axes}, aI("keepdims", 1), aI("noop_with_empty_axes", 1))
	return b.op1("Reshape", []*graph.Value{r, sx})
}

// input returns the training-graph value of an original value.
func (b *builder) mapped(v *graph.Value) *graph.Value {
	if v == nil {
		return nil
	}
	w, ok := b.vmap[v]
	if !ok {
		b.fail("autodiff: value %q has no counterpart in the training graph", v.Name)
	}
	return w
}
