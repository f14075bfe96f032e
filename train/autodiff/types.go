package autodiff

import (
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/shapes"
)

// The builder's view of the training graph's types (graph/shapes infers
// them; the builder keeps one Inferrer per graph).

func (b *builder) ti(v *graph.Value) *shapes.Info   { return b.types.Of(v) }
func (b *builder) shape(v *graph.Value) []int64     { return b.types.Shape(v) }
func (b *builder) dtype(v *graph.Value) graph.DType { return b.types.DType(v) }
func (b *builder) rank(v *graph.Value) int          { return b.types.Rank(v) }
func (b *builder) ivals(v *graph.Value) []int64     { return b.types.Ints(v) }
func (b *builder) fvals(v *graph.Value) []float64   { return b.types.Floats(v) }

// annotate writes v's inferred type into the graph's value_info (a
// symbolic dimension under its dim_param where it has one), for ONNX
// Runtime's optimizer, whose fusions need shapes it cannot always infer.
// Values that already have a type, graph inputs and initializers are left
// alone.
func (b *builder) annotate(v *graph.Value) {
	t := b.ti(v)
	if v.Type != nil || v.Init != nil || t == nil || t.Shape == nil || b.g.IsInput(v) {
		return
	}
	params := b.types.Params()
	dims := make([]graph.Dim, len(t.Shape))
	for i, d := range t.Shape {
		switch {
		case d >= 0:
			dims[i] = graph.Dim{Size: d}
		case params[d] != "":
			dims[i] = graph.Dim{Size: -1, Param: params[d]}
		default:
			dims[i] = graph.Dim{Size: -1}
		}
	}
	v.Type = &graph.Type{DType: t.DType, Shape: dims}
	b.g.ValueInfo = append(b.g.ValueInfo, v)
}

// declared runs after the forward of the original node n: an output whose
// rank the shape rules could not infer takes the shape the model declares
// for it (its value_info or graph output type, e.g. the logits' [batch,
// 10]), so that one op the inference cannot follow does not lose the rank
// of everything after it. It records the first node whose outputs stay
// without a rank although its inputs had one (builder.lostRank), for the
// error that needs that rank.
func (b *builder) declared(n *graph.Node) {
	for _, o := range n.Outputs() {
		v := b.vmap[o]
		if o == nil || v == nil || b.rank(v) >= 0 || o.Type == nil || o.Type.Shape == nil {
			continue
		}
		t, d := b.ti(v), b.ti(o)
		dt := t.DType
		if dt == graph.Undefined {
			dt = d.DType
		}
		b.types.Set(v, &shapes.Info{DType: dt, Shape: append([]int64{}, d.Shape...)})
	}
	if b.lostRank != nil {
		return
	}
	for _, in := range n.Inputs() {
		if v := b.vmap[in]; in != nil && (v == nil || b.rank(v) < 0) {
			return
		}
	}
	for _, o := range n.Outputs() {
		if v := b.vmap[o]; o != nil && v != nil && b.rank(v) < 0 {
			b.lostRank = n
			return
		}
	}
}

// infer sets the types of n's outputs by the shape rule graph/ops's table
// gives its op type (shapes.For), found by op type alone: the NCHWc
// lowering's com.microsoft.nchwc Conv takes Conv's. Ops without one get
// shapes.Default.
func (b *builder) infer(n *graph.Node) { b.types.InferNode(n) }
