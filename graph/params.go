package graph

// Trainable parameters: which initializers gradients reach.

import "github.com/unlearn-tool/unlearn/graph/ops"

// Parameter kinds (Param.Kind), the roles of graph/ops.
const (
	KindWeight    = ops.Weight    // Conv/ConvTranspose W, Gemm A/B, MatMul operand, RNN W/R
	KindBias      = ops.Bias      // Conv/ConvTranspose/Gemm input 2, RNN B, an Add after a layer op
	KindNormScale = ops.NormScale // scale of BatchNormalization, LayerNormalization, …
	KindNormBias  = ops.NormBias  // shift of the same
	KindEmbedding = ops.Embedding // Gather's data
	KindOther     = ops.Other     // anything else (cls token, positional embedding, PRelu slope, …)
)

// Param is a trainable parameter: a float initializer that feeds, directly or
// through Identity and float Cast nodes, a differentiable input of an op whose
// result reaches a graph output along differentiable inputs.
type Param struct {
	Value *Value
	// Consumers are the differentiable uses, after skipping Identity and Cast.
	Consumers []Use
	Kind      string
}

// NumElements is the number of scalars in the parameter.
func (p *Param) NumElements() int64 { return p.Value.Init.Len() }

// IsDifferentiableInput reports whether gradients flow into input i of n
// according to the op table (package graph/ops). A Cast or CastLike to a
// non-float type is not differentiable.
func IsDifferentiableInput(n *Node, i int) bool {
	if !n.IsDefaultDomain() || n.Input(i) == nil {
		return false
	}
	d, ok := ops.Lookup(n.OpType)
	if !ok || !d.Differentiable(i) {
		return false
	}
	if d.FloatResultOnly {
		switch n.OpType {
		case ops.Cast:
			return DType(n.AttrInt("to", 0)).IsFloat()
		case ops.CastLike:
			t := n.Input(1)
			return t == nil || t.Type == nil || t.Type.DType == Undefined || t.Type.DType.IsFloat()
		}
	}
	return true
}

// isPassThrough reports whether n forwards its input 0 unchanged (up to a
// permutation of axes) for the purpose of finding a parameter's consumers:
// Identity, float Cast, Transpose (PyTorch's TRAINING export feeds nn.Linear
// weights to MatMul through a Transpose).
func isPassThrough(n *Node) bool {
	if n.OpType == ops.Transpose && n.IsDefaultDomain() && n.Output(0) != nil {
		return true
	}
	return isIdentityLike(n)
}

// isIdentityLike reports whether n forwards its input 0 unchanged: Identity
// and float Cast.
func isIdentityLike(n *Node) bool {
	if !n.IsDefaultDomain() || len(n.outputs) == 0 || n.Output(0) == nil {
		return false
	}
	switch n.OpType {
	case ops.Identity:
		return true
	case ops.Cast:
		return DType(n.AttrInt("to", 0)).IsFloat()
	}
	return false
}

// ParamSource returns the initializer that v is, or that v forwards through a
// chain of Identity and float Cast nodes, or nil.
func ParamSource(v *Value) *Value {
	for seen := 0; v != nil && seen < 1<<16; seen++ {
		if v.Init != nil {
			return v
		}
		p, _ := v.Producer()
		if p == nil || !isIdentityLike(p) {
			return nil
		}
		v = p.Input(0)
	}
	return nil
}

// paramSourcePerm is ParamSource that also looks through Transpose nodes. It
// returns the initializer and perm, where axis a of v is axis perm[a] of the
// initializer (perm is nil for the identity).
func paramSourcePerm(v *Value) (*Value, []int) {
	var perm []int
	for seen := 0; v != nil && seen < 1<<16; seen++ {
		if v.Init != nil {
			return v, perm
		}
		p, _ := v.Producer()
		if p == nil || !isPassThrough(p) {
			return nil, nil
		}
		if p.OpType == ops.Transpose {
			r := rankOf(p.Input(0))
			if r < 0 {
				return nil, nil
			}
			tp := p.AttrInts("perm", nil)
			if tp == nil {
				for i := r - 1; i >= 0; i-- {
					tp = append(tp, int64(i))
				}
			}
			if len(tp) != r {
				return nil, nil
			}
			if perm == nil {
				perm = make([]int, r)
				for i := range perm {
					perm[i] = i
				}
			}
			if len(perm) != r {
				return nil, nil
			}
			next := make([]int, r)
			for a := range perm {
				q := tp[perm[a]]
				if q < 0 || int(q) >= r {
					return nil, nil
				}
				next[a] = int(q)
			}
			perm = next
		}
		v = p.Input(0)
	}
	return nil, nil
}

func knownNonFloat(v *Value) bool {
	if v.Init != nil {
		return !v.Init.DType.IsFloat()
	}
	return v.Type != nil && v.Type.DType != Undefined && !v.Type.DType.IsFloat()
}

// liveness finds the values of g from which a graph output can be reached
// along differentiable inputs, and the nodes whose outputs are such values.
// A node inside a subgraph counts as live when the node of g that holds the
// subgraph is live (a documented over-approximation).
type liveness struct {
	values map[*Value]bool
	nodes  map[*Node]bool
	top    *Graph
}

func computeLiveness(g *Graph, order []*Node) *liveness {
	lv := &liveness{values: map[*Value]bool{}, nodes: map[*Node]bool{}, top: g}
	for _, o := range g.Outputs {
		if o != nil && !knownNonFloat(o) {
			lv.values[o] = true
		}
	}
	for k := len(order) - 1; k >= 0; k-- {
		n := order[k]
		live := false
		for _, o := range n.outputs {
			if o != nil && lv.values[o] {
				live = true
				break
			}
		}
		if !live {
			continue
		}
		lv.nodes[n] = true
		for i, in := range n.inputs {
			if in != nil && IsDifferentiableInput(n, i) && !knownNonFloat(in) {
				lv.values[in] = true
			}
		}
		for _, a := range n.Attrs {
			subs := a.Graphs
			if a.G != nil {
				subs = append([]*Graph{a.G}, subs...)
			}
			for _, s := range subs {
				s.outerRefs(func(v *Value) {
					if v.graph == g && !knownNonFloat(v) {
						lv.values[v] = true
					}
				})
			}
		}
	}
	return lv
}

// nodeLive reports whether n (of g or of a subgraph nested in g) is live.
func (lv *liveness) nodeLive(n *Node) bool {
	for n != nil && n.graph != lv.top {
		if n.graph == nil {
			return false
		}
		n = n.graph.owner()
	}
	return n != nil && lv.nodes[n]
}

// Parameters returns the trainable parameters of g in initializer order:
// the float initializers of g (not of its subgraphs) that feed, directly or
// through Identity and float Cast nodes, a differentiable input (see
// IsDifferentiableInput) of a node whose output reaches a graph output along
// differentiable inputs. Integer initializers, and float ones used only as
// shapes, indices, exponents or clip bounds, are not parameters.
func Parameters(g *Graph) []*Param {
	order, err := g.Topo()
	if err != nil {
		order = g.nodes // a cyclic graph fails Validate; analyse what is there
	}
	return parameters(g, computeLiveness(g, order))
}

func parameters(g *Graph, lv *liveness) []*Param {
	var out []*Param
	for _, v := range g.Initializers {
		if v == nil || v.Init == nil || !v.Init.DType.IsFloat() {
			continue
		}
		var cons []Use
		seen := map[*Value]bool{}
		var follow func(x *Value)
		follow = func(x *Value) {
			if seen[x] {
				return
			}
			seen[x] = true
			for _, u := range x.uses {
				if isPassThrough(u.Node) && u.Index == 0 {
					follow(u.Node.Output(0))
					continue
				}
				if IsDifferentiableInput(u.Node, u.Index) && lv.nodeLive(u.Node) {
					cons = append(cons, u)
				}
			}
		}
		follow(v)
		if len(cons) == 0 {
			continue
		}
		out = append(out, &Param{Value: v, Consumers: cons, Kind: paramKind(v, cons)})
	}
	return out
}

var kindRank = map[string]int{
	KindWeight: 0, KindEmbedding: 1, KindNormScale: 2, KindNormBias: 3, KindBias: 4, KindOther: 5,
}

// paramKind classifies a parameter by its consumers (the most specific wins).
func paramKind(v *Value, cons []Use) string {
	best := KindOther
	for _, u := range cons {
		k := useKind(u)
		if kindRank[k] < kindRank[best] {
			best = k
		}
	}
	return best
}

// useKind is the role of the parameter at use u: the op table's role for
// the input (graph/ops), else the roles that depend on the neighbours (the
// scale of a decomposed normalization at a Mul, a bias or a decomposed
// normalization's shift at an Add).
func useKind(u Use) string {
	n := u.Node
	if d, ok := ops.Lookup(n.OpType); ok {
		if r := d.Role(u.Index); r != "" {
			return r
		}
	}
	switch n.OpType {
	case ops.Mul:
		if u.Index < 2 && isNormalized(n.Input(1-u.Index)) {
			return KindNormScale
		}
	case ops.Add:
		if other := n.Input(1 - u.Index); other != nil && u.Index < 2 {
			if p, _ := other.Producer(); p != nil && isLayerOpType(p) {
				return KindBias
			}
			if decomposedNormScale(other) != nil {
				return KindNormBias
			}
		}
	}
	return KindOther
}

// isLayerOpType reports whether n is an op that can carry a layer's weight
// (a weight layer in graph/ops: Conv, ConvTranspose, Gemm, MatMul).
func isLayerOpType(n *Node) bool {
	return n.IsDefaultDomain() && ops.KindOf(n.OpType).IsLayer()
}

// isNormalized reports whether v is (x − mean)/σ as exporters write a
// normalization decomposed into primitives (LayerNormalization below opset
// 17, GroupNorm, …): Div(Sub(x, ReduceMean(x)), ·).
func isNormalized(v *Value) bool {
	if v == nil {
		return false
	}
	div, _ := v.Producer()
	if div == nil || div.OpType != ops.Div || !div.IsDefaultDomain() || div.Input(0) == nil {
		return false
	}
	sub, _ := div.Input(0).Producer()
	if sub == nil || sub.OpType != ops.Sub || !sub.IsDefaultDomain() || sub.Input(1) == nil {
		return false
	}
	mean, _ := sub.Input(1).Producer()
	return mean != nil && mean.OpType == ops.ReduceMean && mean.IsDefaultDomain() && mean.Input(0) == sub.Input(0)
}

// decomposedNormScale returns the Mul node if v is Mul(normalized, scale)
// with a float initializer scale (see isNormalized), else nil.
func decomposedNormScale(v *Value) *Node {
	if v == nil {
		return nil
	}
	m, _ := v.Producer()
	if m == nil || m.OpType != ops.Mul || !m.IsDefaultDomain() || len(m.inputs) != 2 {
		return nil
	}
	for i := 0; i < 2; i++ {
		if isNormalized(m.Input(i)) && ParamSource(m.Input(1-i)) != nil {
			return m
		}
	}
	return nil
}
