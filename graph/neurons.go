package graph

import (
	"fmt"
	"iter"
	"sort"

	"github.com/unlearn-tool/unlearn/graph/ops"
)

// Neurons: every trainable parameter split into output channels.

// Member is one parameter tensor of a layer, split into the layer's channels
// along Axis: channel c owns the elements whose index along Axis is c.
//
// Groups > 1 only for the weight of a grouped ConvTranspose, W[Ci, Co/g, k…]
// with Axis 1: output channel c = q·(Co/g) + j owns W[q·Ci/g : (q+1)·Ci/g, j, …],
// so the layer has Groups·(Co/g) channels. A rank-0 tensor is one channel.
type Member struct {
	Param  *Value
	Role   string // one of the Kind… constants
	Axis   int
	Groups int   // 1 except for grouped ConvTranspose weights
	Node   *Node // the node that consumes Param in this role
}

func (m Member) groups() int {
	if m.Groups < 1 {
		return 1
	}
	return m.Groups
}

// Channels is the number of channels the tensor splits into.
func (m Member) Channels() int {
	sh := m.Param.Init.Shape
	if len(sh) == 0 {
		return 1
	}
	return int(sh[m.Axis]) * m.groups()
}

// ChannelSize is the number of elements each channel owns.
func (m Member) ChannelSize() int {
	c := m.Channels()
	if c == 0 {
		return 0
	}
	return int(m.Param.Init.Len()) / c
}

func prodInt(s []int64) int {
	p := 1
	for _, d := range s {
		p *= int(d)
	}
	return p
}

// Elements yields the flat (row-major) indices of the elements that channel c
// owns, in increasing order.
func (m Member) Elements(c int) iter.Seq[int] {
	return func(yield func(int) bool) {
		sh := m.Param.Init.Shape
		if len(sh) == 0 {
			if c == 0 {
				yield(0)
			}
			return
		}
		if c < 0 || c >= m.Channels() {
			return
		}
		a := m.Axis
		inner := prodInt(sh[a+1:])
		size := int(sh[a])
		j, q := c%size, c/size
		if a == 0 {
			for k := j * inner; k < (j+1)*inner; k++ {
				if !yield(k) {
					return
				}
			}
			return
		}
		rows := int(sh[0]) / m.groups()
		rest := prodInt(sh[1:a])
		for i0 := q * rows; i0 < (q+1)*rows; i0++ {
			for r := 0; r < rest; r++ {
				base := ((i0*rest+r)*size + j) * inner
				for k := base; k < base+inner; k++ {
					if !yield(k) {
						return
					}
				}
			}
		}
	}
}

// Indices returns Elements(c) as a slice.
func (m Member) Indices(c int) []int {
	out := make([]int, 0, m.ChannelSize())
	for i := range m.Elements(c) {
		out = append(out, i)
	}
	return out
}

// ChannelOf returns the channel that owns flat element i of the tensor.
func (m Member) ChannelOf(i int) int {
	sh := m.Param.Init.Shape
	if len(sh) == 0 {
		return 0
	}
	a := m.Axis
	size := int(sh[a])
	idx := (i / prodInt(sh[a+1:])) % size
	if g := m.groups(); g > 1 {
		i0 := i / prodInt(sh[1:])
		return (i0/(int(sh[0])/g))*size + idx
	}
	return idx
}

// Layer is a group of parameters that share output channels: a weight-carrying
// op (Conv, ConvTranspose, Gemm, MatMul) with its bias and a directly
// following normalization, or a standalone parameter (or a standalone
// normalization's scale and shift).
type Layer struct {
	// Name is the weight's name (the first member's for a standalone layer).
	Name string
	// Op is the node that consumes the weight (for a standalone layer: its
	// first consumer in topological order, or the normalization node).
	Op     *Node
	Weight *Value
	// Members[0] is the weight; then bias, normalization scale and shift.
	Members  []Member
	Channels int
	// Depth is the number of layer ops on the longest differentiable path
	// from a graph input to Op, not counting Op: the first layer has depth 0.
	Depth int
	// Standalone is true when no Conv/ConvTranspose/Gemm/MatMul carries the
	// layer (cls token, positional embedding, a normalization that does not
	// directly follow a layer, a bias that could not be attached, …).
	Standalone bool
	// Index is the layer's position in NeuronMap.Layers; First the position
	// of its channel 0 in NeuronMap.Neurons.
	Index, First int

	// fromRight is the channel axis of Op's output counted from the right
	// (1: last axis); outRank is the rank of Op's output, or -1 if unknown.
	fromRight, outRank int
}

// NeuronSize is the number of parameters of one channel (all channels of a
// layer have the same size).
func (l *Layer) NeuronSize() int {
	n := 0
	for _, m := range l.Members {
		n += m.ChannelSize()
	}
	return n
}

// NumParams is the number of parameters of the layer.
func (l *Layer) NumParams() int64 {
	var n int64
	for _, m := range l.Members {
		n += m.Param.Init.Len()
	}
	return n
}

// Neuron is one output channel of a layer.
type Neuron struct {
	Layer     *Layer
	Index     int // channel index within the layer
	NumParams int
}

// Slice is the part of one member tensor that a neuron owns: the elements
// whose index along Axis is Index (within group Group of axis 0 for a grouped
// ConvTranspose weight), listed as flat indices in Flat.
type Slice struct {
	Param *Value
	Role  string
	Axis  int
	Index int
	Group int
	Flat  []int
}

// NeuronMap partitions the trainable parameters of a graph into neurons.
type NeuronMap struct {
	Graph  *Graph
	Params []*Param
	Layers []*Layer
	// Neurons lists every neuron, layer by layer, channel by channel:
	// layer l's channel c is Neurons[l.First+c].
	Neurons []Neuron
	// NumParams is the number of trainable scalars (the sum over Params).
	NumParams int64
	// MaxDepth is the largest Layer.Depth.
	MaxDepth int

	byParam map[*Value]memberRef
}

type memberRef struct {
	layer  *Layer
	member int
}

// LayerOf returns the layer that holds parameter v and v's index in its
// Members, or nil and -1 when v is not a trainable parameter.
func (nm *NeuronMap) LayerOf(v *Value) (*Layer, int) {
	r, ok := nm.byParam[v]
	if !ok {
		return nil, -1
	}
	return r.layer, r.member
}

// Layer returns the layer with the given name, or nil.
func (nm *NeuronMap) Layer(name string) *Layer {
	for _, l := range nm.Layers {
		if l.Name == name {
			return l
		}
	}
	return nil
}

// Neuron returns channel c of layer l.
func (nm *NeuronMap) Neuron(l *Layer, c int) *Neuron {
	if c < 0 || c >= l.Channels {
		return nil
	}
	return &nm.Neurons[l.First+c]
}

// ElementsOf returns, for each member tensor of layer l, the elements that
// channel c owns.
func (nm *NeuronMap) ElementsOf(l *Layer, c int) []Slice {
	out := make([]Slice, 0, len(l.Members))
	for _, m := range l.Members {
		s := Slice{Param: m.Param, Role: m.Role, Axis: m.Axis, Flat: m.Indices(c)}
		if sh := m.Param.Init.Shape; len(sh) > 0 {
			s.Index, s.Group = c%int(sh[m.Axis]), c/int(sh[m.Axis])
		}
		out = append(out, s)
	}
	return out
}

// NeuronOf returns the neuron that owns flat element i of parameter v.
func (nm *NeuronMap) NeuronOf(v *Value, i int) (*Neuron, error) {
	l, k := nm.LayerOf(v)
	if l == nil {
		return nil, fmt.Errorf("graph: %q is not a trainable parameter", v.Name)
	}
	if i < 0 || int64(i) >= v.Init.Len() {
		return nil, fmt.Errorf("graph: element %d out of range for %q (%d elements)", i, v.Name, v.Init.Len())
	}
	return &nm.Neurons[l.First+l.Members[k].ChannelOf(i)], nil
}

// CheckPartition verifies that every element of every trainable parameter
// belongs to exactly one neuron (by enumerating every neuron's elements).
func (nm *NeuronMap) CheckPartition() error {
	count := map[*Value][]uint8{}
	var total int64
	for _, p := range nm.Params {
		count[p.Value] = make([]uint8, p.Value.Init.Len())
		total += p.Value.Init.Len()
	}
	if total != nm.NumParams {
		return fmt.Errorf("graph: NumParams %d, parameters hold %d elements", nm.NumParams, total)
	}
	var seen int64
	for _, l := range nm.Layers {
		for _, m := range l.Members {
			if m.Channels() != l.Channels {
				return fmt.Errorf("graph: layer %q: member %q has %d channels, the layer %d",
					l.Name, m.Param.Name, m.Channels(), l.Channels)
			}
			cnt, ok := count[m.Param]
			if !ok {
				return fmt.Errorf("graph: layer %q: member %q is not a trainable parameter", l.Name, m.Param.Name)
			}
			for c := 0; c < l.Channels; c++ {
				for i := range m.Elements(c) {
					if cnt[i]++; cnt[i] > 1 {
						return fmt.Errorf("graph: element %d of %q belongs to two neurons", i, m.Param.Name)
					}
					if got := m.ChannelOf(i); got != c {
						return fmt.Errorf("graph: element %d of %q: ChannelOf says %d, Elements %d", i, m.Param.Name, got, c)
					}
					seen++
				}
			}
		}
		var per int
		for c := 0; c < l.Channels; c++ {
			n := nm.Neurons[l.First+c]
			if n.Layer != l || n.Index != c {
				return fmt.Errorf("graph: layer %q: neuron %d is misplaced", l.Name, c)
			}
			per += n.NumParams
		}
		if int64(per) != l.NumParams() {
			return fmt.Errorf("graph: layer %q: neurons hold %d parameters, members %d", l.Name, per, l.NumParams())
		}
	}
	if seen != total {
		for v, cnt := range count {
			for i, c := range cnt {
				if c == 0 {
					return fmt.Errorf("graph: element %d of %q belongs to no neuron", i, v.Name)
				}
			}
		}
	}
	return nil
}

// Neurons groups the trainable parameters of g (see Parameters) into layers
// and output channels. The rules are stated in doc.go.
func Neurons(g *Graph) (*NeuronMap, error) {
	order, err := g.Topo()
	if err != nil {
		return nil, fmt.Errorf("graph: neurons: %w", err)
	}
	lv := computeLiveness(g, order)
	b := &neuronBuilder{
		g:       g,
		lv:      lv,
		params:  parameters(g, lv),
		isParam: map[*Value]*Param{},
		claimed: map[*Value]*Layer{},
		pos:     map[*Node]int{},
	}
	for i, n := range order {
		b.pos[n] = i
	}
	for _, p := range b.params {
		b.isParam[p.Value] = p
	}
	// 1. Layer ops claim their weights, in topological order.
	for _, n := range order {
		if isLayerOpType(n) && lv.nodes[n] {
			b.weightLayer(n)
		}
	}
	// 2. Biases and directly following normalizations join their layer.
	for _, l := range b.layers {
		b.attachBias(l)
		b.attachChain(l)
	}
	// 3. What is left forms standalone layers.
	for _, p := range b.params {
		if b.claimed[p.Value] == nil {
			b.standalone(p)
		}
	}
	sort.SliceStable(b.layers, func(i, j int) bool { return b.opPos(b.layers[i].Op) < b.opPos(b.layers[j].Op) })

	nm := &NeuronMap{Graph: g, Params: b.params, Layers: b.layers, byParam: map[*Value]memberRef{}}
	for _, p := range b.params {
		nm.NumParams += p.Value.Init.Len()
	}
	for li, l := range nm.Layers {
		l.Index = li
		l.First = len(nm.Neurons)
		size := l.NeuronSize()
		for c := 0; c < l.Channels; c++ {
			nm.Neurons = append(nm.Neurons, Neuron{Layer: l, Index: c, NumParams: size})
		}
		for k, m := range l.Members {
			if m.Channels() != l.Channels {
				return nil, fmt.Errorf("graph: neurons: layer %q: member %q has %d channels, the layer %d",
					l.Name, m.Param.Name, m.Channels(), l.Channels)
			}
			nm.byParam[m.Param] = memberRef{l, k}
		}
	}
	nm.computeDepth(order)
	return nm, nil
}

type neuronBuilder struct {
	g       *Graph
	lv      *liveness
	params  []*Param
	isParam map[*Value]*Param
	claimed map[*Value]*Layer
	pos     map[*Node]int
	layers  []*Layer
}

// free returns the parameter that v is or forwards (through Identity/Cast),
// if it is trainable and not yet in a layer.
func (b *neuronBuilder) free(v *Value) *Value {
	p := ParamSource(v)
	if p == nil || b.isParam[p] == nil || b.claimed[p] != nil {
		return nil
	}
	return p
}

// freePerm is free that also looks through Transpose: axis a of v is axis
// perm[a] of the returned parameter (perm nil: the identity).
func (b *neuronBuilder) freePerm(v *Value) (*Value, []int) {
	p, perm := paramSourcePerm(v)
	if p == nil || b.isParam[p] == nil || b.claimed[p] != nil {
		return nil, nil
	}
	return p, perm
}

func (b *neuronBuilder) claim(l *Layer, m Member) {
	l.Members = append(l.Members, m)
	b.claimed[m.Param] = l
}

// opPos is the topological position of n, or of the node of g that holds the
// subgraph n lives in.
func (b *neuronBuilder) opPos(n *Node) int {
	for n != nil && n.graph != b.g {
		if n.graph == nil {
			return len(b.pos)
		}
		n = n.graph.owner()
	}
	if p, ok := b.pos[n]; ok {
		return p
	}
	return len(b.pos)
}

func rankOf(v *Value) int {
	if v == nil {
		return -1
	}
	if s, _ := paramSourcePerm(v); s != nil {
		return len(s.Init.Shape)
	}
	if v.Type != nil && v.Type.Shape != nil {
		return len(v.Type.Shape)
	}
	return -1
}

// weightLayer makes the layer of a Conv, ConvTranspose, Gemm or MatMul node
// whose weight is a free trainable initializer.
func (b *neuronBuilder) weightLayer(n *Node) {
	type cand struct {
		in, axis, groups, fromRight, outRank int
	}
	var cands []cand
	kind := ops.KindOf(n.OpType)
	switch kind {
	case ops.KindConv:
		if w := b.free(n.Input(1)); w != nil && len(w.Init.Shape) >= 2 {
			r := len(w.Init.Shape)
			cands = append(cands, cand{1, 0, 1, r - 1, r})
		}
	case ops.KindConvTranspose:
		if w := b.free(n.Input(1)); w != nil && len(w.Init.Shape) >= 2 {
			r := len(w.Init.Shape)
			g := int(n.AttrInt("group", 1))
			if g < 1 || w.Init.Shape[0]%int64(g) != 0 {
				g = 1
			}
			cands = append(cands, cand{1, 1, g, r - 1, r})
		}
	case ops.KindGemm:
		if n.AttrInt("transB", 0) != 0 {
			cands = append(cands, cand{1, 0, 1, 1, 2})
		} else {
			cands = append(cands, cand{1, 1, 1, 1, 2})
		}
		if n.AttrInt("transA", 0) != 0 {
			cands = append(cands, cand{0, 1, 1, 2, 2})
		} else {
			cands = append(cands, cand{0, 0, 1, 2, 2})
		}
	case ops.KindMatMul:
		ra, rb := rankOf(n.Input(0)), rankOf(n.Input(1))
		out := -1
		if ra >= 2 && rb >= 2 {
			out = max(ra, rb)
		}
		if rb >= 2 {
			cands = append(cands, cand{1, rb - 1, 1, 1, out})
		}
		if ra >= 2 {
			cands = append(cands, cand{0, ra - 2, 1, 2, out})
		}
	}
	for _, c := range cands {
		// Gemm and MatMul weights may come through a Transpose; Conv's not.
		var w *Value
		var perm []int
		if kind == ops.KindGemm || kind == ops.KindMatMul {
			w, perm = b.freePerm(n.Input(c.in))
		} else {
			w = b.free(n.Input(c.in))
		}
		if w == nil {
			continue
		}
		if kind == ops.KindGemm && len(w.Init.Shape) != 2 {
			continue
		}
		axis := c.axis
		if perm != nil {
			axis = perm[axis]
		}
		l := &Layer{Name: w.Name, Op: n, Weight: w, fromRight: c.fromRight, outRank: c.outRank}
		m := Member{Param: w, Role: KindWeight, Axis: axis, Groups: c.groups, Node: n}
		l.Channels = m.Channels()
		b.claim(l, m)
		b.layers = append(b.layers, l)
		return
	}
}

// alignTrailing finds the axis of a tensor of the given shape, broadcast from
// the right against the layer's output, that lies on the layer's channel axis
// (fromRight-th from the right), and checks its size. With othersOne every
// other dimension must be 1 (a pure per-channel tensor).
func alignTrailing(shape []int64, fromRight, channels int, othersOne bool) (int, bool) {
	a := len(shape) - fromRight
	if fromRight < 1 || a < 0 || shape[a] != int64(channels) {
		return 0, false
	}
	if othersOne {
		for i, d := range shape {
			if i != a && d != 1 {
				return 0, false
			}
		}
	}
	return a, true
}

// attachBias adds the explicit bias input of Conv, ConvTranspose and Gemm.
func (b *neuronBuilder) attachBias(l *Layer) {
	n := l.Op
	switch ops.KindOf(n.OpType) {
	case ops.KindConv, ops.KindConvTranspose:
		if p := b.free(n.Input(2)); p != nil && len(p.Init.Shape) == 1 && p.Init.Shape[0] == int64(l.Channels) {
			b.claim(l, Member{Param: p, Role: KindBias, Axis: 0, Groups: 1, Node: n})
		}
	case ops.KindGemm:
		if p := b.free(n.Input(2)); p != nil {
			if a, ok := alignTrailing(p.Init.Shape, l.fromRight, l.Channels, false); ok {
				b.claim(l, Member{Param: p, Role: KindBias, Axis: a, Groups: 1, Node: n})
			}
		}
	}
}

// attachChain adds a bias Add that directly follows the layer op (PyTorch's
// MatMul + Add for nn.Linear on 3-D input) and the scale and shift of a
// BatchNormalization, InstanceNormalization, LayerNormalization or
// RMSNormalization that directly follows the layer op or that Add.
func (b *neuronBuilder) attachChain(l *Layer) {
	y := l.Op.Output(0)
	if y == nil {
		return
	}
	outs := []*Value{y}
	for _, u := range y.uses {
		m := u.Node
		if m.OpType != ops.Add || !m.IsDefaultDomain() || len(m.inputs) != 2 || u.Index > 1 || m.Output(0) == nil {
			continue
		}
		p := b.free(m.Input(1 - u.Index))
		if p == nil {
			continue
		}
		if a, ok := alignTrailing(p.Init.Shape, l.fromRight, l.Channels, true); ok {
			b.claim(l, Member{Param: p, Role: KindBias, Axis: a, Groups: 1, Node: m})
			outs = append(outs, m.Output(0))
			break
		}
	}
	for _, x := range outs {
		for _, u := range x.uses {
			m := u.Node
			if u.Index != 0 || !m.IsDefaultDomain() {
				continue
			}
			d, _ := ops.Lookup(m.OpType)
			switch d.Kind {
			case ops.KindChannelNorm:
				// Per-channel along axis 1 of the activation.
				if l.outRank < 0 || l.outRank-l.fromRight != 1 {
					continue
				}
				for i, role := range []string{KindNormScale, KindNormBias} {
					if p := b.free(m.Input(1 + i)); p != nil && len(p.Init.Shape) == 1 && p.Init.Shape[0] == int64(l.Channels) {
						b.claim(l, Member{Param: p, Role: role, Axis: 0, Groups: 1, Node: m})
					}
				}
			case ops.KindTrailingNorm:
				// Scale and shift cover the trailing (normalized) axes;
				// RMSNormalization has no shift.
				for i, role := range []string{KindNormScale, KindNormBias} {
					if !d.Differentiable(1 + i) {
						break
					}
					p := b.free(m.Input(1 + i))
					if p == nil {
						continue
					}
					if a, ok := alignTrailing(p.Init.Shape, l.fromRight, l.Channels, false); ok {
						b.claim(l, Member{Param: p, Role: role, Axis: a, Groups: 1, Node: m})
					}
				}
			}
		}
	}
}

// standaloneAxis is the channel axis of a parameter no layer op carries: the
// last axis whose size is not 1 (axis 0 when all are 1; a scalar is one
// channel).
func standaloneAxis(shape []int64) int {
	for a := len(shape) - 1; a >= 0; a-- {
		if shape[a] != 1 {
			return a
		}
	}
	return 0
}

// standalone makes a layer of p alone, or of a normalization's scale and
// shift together when both are free and split into the same channels.
func (b *neuronBuilder) standalone(p *Param) {
	first := p.Consumers[0]
	for _, u := range p.Consumers[1:] {
		if b.opPos(u.Node) < b.opPos(first.Node) {
			first = u
		}
	}
	mk := func(v *Value, role string, n *Node) Member {
		return Member{Param: v, Role: role, Axis: standaloneAxis(v.Init.Shape), Groups: 1, Node: n}
	}
	// A normalization decomposed into primitives: Mul(normalized, scale)
	// then Add(·, shift). Found from either parameter.
	for _, u := range p.Consumers {
		var mul *Node
		switch {
		case u.Node.OpType == ops.Mul && decomposedNormScale(u.Node.Output(0)) == u.Node:
			mul = u.Node
		case u.Node.OpType == ops.Add && u.Index < 2:
			mul = decomposedNormScale(u.Node.Input(1 - u.Index))
		}
		if mul == nil {
			continue
		}
		var scale *Value
		for i := 0; i < 2; i++ {
			if isNormalized(mul.Input(1 - i)) {
				scale = b.free(mul.Input(i))
			}
		}
		if scale == nil {
			continue
		}
		l := &Layer{Name: scale.Name, Op: mul, Weight: scale, Standalone: true, outRank: -1}
		sm := mk(scale, KindNormScale, mul)
		l.Channels = sm.Channels()
		b.claim(l, sm)
		for _, au := range mul.Output(0).uses {
			add := au.Node
			if add.OpType != ops.Add || !add.IsDefaultDomain() || au.Index > 1 {
				continue
			}
			if q := b.free(add.Input(1 - au.Index)); q != nil {
				if bm := mk(q, KindNormBias, add); bm.Channels() == l.Channels && sameShape(q.Init.Shape, scale.Init.Shape) {
					b.claim(l, bm)
					break
				}
			}
		}
		b.layers = append(b.layers, l)
		if b.claimed[p.Value] == l {
			return
		}
		break // p was not part of it after all; fall through to the rules below
	}
	for _, u := range p.Consumers {
		m := u.Node
		if !ops.KindOf(m.OpType).IsNorm() || !m.IsDefaultDomain() || (u.Index != 1 && u.Index != 2) {
			continue
		}
		l := &Layer{Name: p.Value.Name, Op: m, Weight: p.Value, Standalone: true, outRank: -1}
		role := KindNormScale
		if u.Index == 2 {
			role = KindNormBias
		}
		first := mk(p.Value, role, m)
		l.Channels = first.Channels()
		b.claim(l, first)
		if u.Index == 1 {
			if q := b.free(m.Input(2)); q != nil && q != p.Value {
				if s := mk(q, KindNormBias, m); s.Channels() == l.Channels {
					b.claim(l, s)
				}
			}
		}
		b.layers = append(b.layers, l)
		return
	}
	l := &Layer{Name: p.Value.Name, Op: first.Node, Weight: p.Value, Standalone: true, outRank: -1}
	m := mk(p.Value, p.Kind, first.Node)
	l.Channels = m.Channels()
	b.claim(l, m)
	b.layers = append(b.layers, l)
}

func sameShape(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
