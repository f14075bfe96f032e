package graph

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Dim is one dimension of a value's shape: a known size (Size >= 0), a named
// symbolic size (Param != ""), or unknown (Size < 0, Param == "").
type Dim struct {
	Size  int64
	Param string
}

// Known reports whether the dimension has a fixed size.
func (d Dim) Known() bool { return d.Size >= 0 && d.Param == "" }

func (d Dim) String() string {
	if d.Param != "" {
		return d.Param
	}
	if d.Size < 0 {
		return "?"
	}
	return strconv.FormatInt(d.Size, 10)
}

// Type is the tensor type of a value. Shape is nil when the rank is unknown.
type Type struct {
	DType DType
	Shape []Dim
}

// Use is one consumer of a value: input Index of Node.
type Use struct {
	Node  *Node
	Index int
}

// Value is a tensor that flows through the graph: a graph input, an initializer
// or a node output. It is the centre of the IR (as in onnx/ir-py): it knows its
// producer and its uses, and the mutators on Graph keep those links right.
type Value struct {
	Name string
	Type *Type // nil when unknown
	Doc  string
	// Init is the constant data of an initializer (nil otherwise).
	Init *Tensor

	producer *Node
	outIndex int
	uses     []Use
	graph    *Graph
	// Ext is owned by onnxio (the original ValueInfoProto).
	Ext any
}

// Producer returns the node that computes the value and the output index, or nil
// for graph inputs, initializers and outer-scope values.
func (v *Value) Producer() (*Node, int) { return v.producer, v.outIndex }

// Uses returns the consumers (the slice must not be modified).
func (v *Value) Uses() []Use { return v.uses }

// IsInitializer reports whether the value is constant data stored in the model.
func (v *Value) IsInitializer() bool { return v.Init != nil }

// Graph returns the graph that owns the value (for outer-scope references in a
// subgraph, the enclosing graph that defines it).
func (v *Value) Graph() *Graph { return v.graph }

// AttrType is ONNX's AttributeProto.AttributeType.
type AttrType int32

// Attribute types (onnx.proto, AttributeProto.AttributeType).
const (
	AttrUndefined     AttrType = 0
	AttrFloat         AttrType = 1
	AttrInt           AttrType = 2
	AttrString        AttrType = 3
	AttrTensor        AttrType = 4
	AttrGraph         AttrType = 5
	AttrSparseTensor  AttrType = 11
	AttrTypeProto     AttrType = 13
	AttrFloats        AttrType = 6
	AttrInts          AttrType = 7
	AttrStrings       AttrType = 8
	AttrTensors       AttrType = 9
	AttrGraphs        AttrType = 10
	AttrSparseTensors AttrType = 12
	AttrTypeProtos    AttrType = 14
)

// Attribute is a node attribute. Only the field selected by Type is meaningful.
// Kinds the IR does not model (sparse tensors, type protos) live in Ext.
type Attribute struct {
	Name    string
	Type    AttrType
	F       float32
	I       int64
	S       []byte
	T       *Tensor
	G       *Graph
	Floats  []float32
	Ints    []int64
	Strings [][]byte
	Tensors []*Tensor
	Graphs  []*Graph
	// RefAttrName is set for attribute references inside functions.
	RefAttrName string
	Doc         string
	Ext         any
}

// IntAttr, IntsAttr, FloatAttr, StringAttr and TensorAttr make an
// attribute of one value (IntsAttr copies v).
func IntAttr(name string, v int64) *Attribute { return &Attribute{Name: name, Type: AttrInt, I: v} }
func IntsAttr(name string, v []int64) *Attribute {
	return &Attribute{Name: name, Type: AttrInts, Ints: append([]int64{}, v...)}
}
func FloatAttr(name string, v float32) *Attribute {
	return &Attribute{Name: name, Type: AttrFloat, F: v}
}
func StringAttr(name, v string) *Attribute {
	return &Attribute{Name: name, Type: AttrString, S: []byte(v)}
}
func TensorAttr(name string, t *Tensor) *Attribute {
	return &Attribute{Name: name, Type: AttrTensor, T: t}
}

// Node is one operator application. A nil entry in Inputs is an omitted
// optional input (the empty name in ONNX); Outputs may contain nil likewise.
type Node struct {
	Name   string
	OpType string
	Domain string // "" and "ai.onnx" both mean the default domain
	Doc    string
	Attrs  []*Attribute

	inputs  []*Value
	outputs []*Value
	graph   *Graph
	// Ext is owned by onnxio (the original NodeProto).
	Ext any
}

// Inputs returns the input values (the slice must not be modified; use SetInput).
func (n *Node) Inputs() []*Value { return n.inputs }

// Outputs returns the output values (the slice must not be modified).
func (n *Node) Outputs() []*Value { return n.outputs }

// Input returns input i, or nil if absent or omitted.
func (n *Node) Input(i int) *Value {
	if i < 0 || i >= len(n.inputs) {
		return nil
	}
	return n.inputs[i]
}

// Output returns output i, or nil if absent or omitted.
func (n *Node) Output(i int) *Value {
	if i < 0 || i >= len(n.outputs) {
		return nil
	}
	return n.outputs[i]
}

// Attr returns the attribute with the given name, or nil.
func (n *Node) Attr(name string) *Attribute {
	for _, a := range n.Attrs {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// AttrInt returns an int attribute or def when absent.
func (n *Node) AttrInt(name string, def int64) int64 {
	if a := n.Attr(name); a != nil && a.Type == AttrInt {
		return a.I
	}
	return def
}

// AttrFloat returns a float attribute or def when absent.
func (n *Node) AttrFloat(name string, def float32) float32 {
	if a := n.Attr(name); a != nil && a.Type == AttrFloat {
		return a.F
	}
	return def
}

// AttrInts returns an ints attribute or def when absent.
func (n *Node) AttrInts(name string, def []int64) []int64 {
	if a := n.Attr(name); a != nil && a.Type == AttrInts {
		return a.Ints
	}
	return def
}

// AttrString returns a string attribute or def when absent.
func (n *Node) AttrString(name, def string) string {
	if a := n.Attr(name); a != nil && a.Type == AttrString {
		return string(a.S)
	}
	return def
}

// SetAttr adds or replaces an attribute.
func (n *Node) SetAttr(a *Attribute) {
	for i, b := range n.Attrs {
		if b.Name == a.Name {
			n.Attrs[i] = a
			return
		}
	}
	n.Attrs = append(n.Attrs, a)
}

// IsDefaultDomain reports whether the node is a standard ai.onnx operator.
func (n *Node) IsDefaultDomain() bool { return n.Domain == "" || n.Domain == "ai.onnx" }

// String names the node for error messages: `Conv node "conv1"`.
func (n *Node) String() string {
	name := n.Name
	if name == "" && len(n.outputs) > 0 && n.outputs[0] != nil {
		name = "→" + n.outputs[0].Name
	}
	return fmt.Sprintf("%s node %q", n.OpType, name)
}

// Graph is a computation graph. Inputs lists the graph inputs that are not
// initializers; Initializers lists constant values in file order. A subgraph
// (an attribute of If, Loop, Scan) has Parent set and may use values of its
// enclosing graphs.
type Graph struct {
	Name         string
	Doc          string
	Inputs       []*Value
	Outputs      []*Value
	Initializers []*Value
	// ValueInfo holds type annotations of intermediate values, in file order.
	ValueInfo []*Value
	Parent    *Graph

	nodes  []*Node
	values map[string]*Value
	names  map[string]int // name allocator counters
	// Ext is owned by onnxio (the original GraphProto).
	Ext any
}

// NewGraph returns an empty graph.
func NewGraph(name string) *Graph {
	return &Graph{Name: name, values: map[string]*Value{}, names: map[string]int{}}
}

// Nodes returns the nodes in their stored order (the slice must not be modified).
func (g *Graph) Nodes() []*Node { return g.nodes }

// Value returns the value with the given name, looking into enclosing graphs
// for subgraphs, or nil.
func (g *Graph) Value(name string) *Value {
	for s := g; s != nil; s = s.Parent {
		if v, ok := s.values[name]; ok {
			return v
		}
	}
	return nil
}

// LocalValue returns a value defined in g itself, or nil.
func (g *Graph) LocalValue(name string) *Value { return g.values[name] }

// Values returns every value defined in g, sorted by name.
func (g *Graph) Values() []*Value {
	out := make([]*Value, 0, len(g.values))
	for _, v := range g.values {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ErrDuplicate is returned when a name is defined twice in one graph.
var ErrDuplicate = errors.New("graph: value defined twice")

func (g *Graph) define(name string, t *Type) (*Value, error) {
	if name == "" {
		return nil, errors.New("graph: empty value name")
	}
	if _, ok := g.values[name]; ok {
		return nil, fmt.Errorf("%w: %q", ErrDuplicate, name)
	}
	v := &Value{Name: name, Type: t, graph: g}
	g.values[name] = v
	return v, nil
}

// AddInput appends a graph input.
func (g *Graph) AddInput(name string, t *Type) (*Value, error) {
	v, err := g.define(name, t)
	if err != nil {
		return nil, err
	}
	g.Inputs = append(g.Inputs, v)
	return v, nil
}

// AddInitializer appends an initializer holding t (the value is named t.Name).
// If a graph input of the same name exists (IR < 4 style, where initializers
// are also listed as inputs), that value becomes the initializer and stays in
// Inputs.
func (g *Graph) AddInitializer(t *Tensor) (*Value, error) {
	if v, ok := g.values[t.Name]; ok && v.producer == nil && v.Init == nil && g.isInput(v) {
		v.Init = t
		if v.Type == nil {
			v.Type = &Type{DType: t.DType, Shape: dimsOf(t.Shape)}
		}
		g.Initializers = append(g.Initializers, v)
		return v, nil
	}
	v, err := g.define(t.Name, &Type{DType: t.DType, Shape: dimsOf(t.Shape)})
	if err != nil {
		return nil, err
	}
	v.Init = t
	g.Initializers = append(g.Initializers, v)
	return v, nil
}

func (g *Graph) isInput(v *Value) bool {
	for _, in := range g.Inputs {
		if in == v {
			return true
		}
	}
	return false
}

// IsInput reports whether v is one of g's inputs.
func (g *Graph) IsInput(v *Value) bool { return g.isInput(v) }

func dimsOf(shape []int64) []Dim {
	d := make([]Dim, len(shape))
	for i, s := range shape {
		d[i] = Dim{Size: s}
	}
	return d
}

// DimsOf converts a static shape to dims.
func DimsOf(shape []int64) []Dim { return dimsOf(shape) }

// Ref returns the value named name, creating an outer-scope reference in a
// subgraph when the name is defined in no enclosing graph... It is used by
// decoders that see a name before its definition. It returns an error for an
// unknown name in a top-level graph.
func (g *Graph) Ref(name string) (*Value, error) {
	if v := g.Value(name); v != nil {
		return v, nil
	}
	return nil, fmt.Errorf("graph %q: value %q is used but never defined", g.Name, name)
}

// AddNode appends a node computing outputs (new values; "" for an omitted
// output) from inputs (existing values; nil for an omitted input).
func (g *Graph) AddNode(opType, domain, name string, inputs []*Value, outputs []string,
	attrs ...*Attribute) (*Node, error) {
	n := &Node{Name: name, OpType: opType, Domain: domain, Attrs: attrs, graph: g}
	n.inputs = make([]*Value, len(inputs))
	for i, in := range inputs {
		n.inputs[i] = in
		if in != nil {
			in.uses = append(in.uses, Use{Node: n, Index: i})
		}
	}
	n.outputs = make([]*Value, len(outputs))
	for i, o := range outputs {
		if o == "" {
			continue
		}
		v, err := g.define(o, nil)
		if err != nil {
			g.unlink(n)
			for _, prev := range n.outputs[:i] {
				if prev != nil {
					delete(g.values, prev.Name)
				}
			}
			return nil, fmt.Errorf("%v: %w", n, err)
		}
		v.producer, v.outIndex = n, i
		n.outputs[i] = v
	}
	g.nodes = append(g.nodes, n)
	return n, nil
}

func (g *Graph) unlink(n *Node) {
	for i, in := range n.inputs {
		if in != nil {
			in.removeUse(n, i)
		}
	}
}

func (v *Value) removeUse(n *Node, i int) {
	for k, u := range v.uses {
		if u.Node == n && u.Index == i {
			v.uses = append(v.uses[:k:k], v.uses[k+1:]...)
			return
		}
	}
}

// SetInput replaces input i of n (nil omits it), keeping use lists right.
func (n *Node) SetInput(i int, v *Value) {
	for len(n.inputs) <= i {
		n.inputs = append(n.inputs, nil)
	}
	if old := n.inputs[i]; old != nil {
		old.removeUse(n, i)
	}
	n.inputs[i] = v
	if v != nil {
		v.uses = append(v.uses, Use{Node: n, Index: i})
	}
}

// ReplaceAllUsesWith points every consumer of old (and the outputs of g and of
// the graphs nested in g that are old) at v.
func (g *Graph) ReplaceAllUsesWith(old, v *Value) {
	if old == v {
		return
	}
	uses := append([]Use(nil), old.uses...)
	for _, u := range uses {
		u.Node.SetInput(u.Index, v)
	}
	g.eachGraph(func(s *Graph) {
		for i, o := range s.Outputs {
			if o == old {
				s.Outputs[i] = v
			}
		}
	})
}

// eachGraph calls f for g and every graph nested in its nodes' attributes.
func (g *Graph) eachGraph(f func(*Graph)) {
	f(g)
	for _, n := range g.nodes {
		for _, a := range n.Attrs {
			if a.G != nil {
				a.G.eachGraph(f)
			}
			for _, s := range a.Graphs {
				s.eachGraph(f)
			}
		}
	}
}

// dropValueInfo removes the type annotations of v.
func (g *Graph) dropValueInfo(v *Value) {
	for i := 0; i < len(g.ValueInfo); i++ {
		if g.ValueInfo[i] == v {
			g.ValueInfo = append(g.ValueInfo[:i:i], g.ValueInfo[i+1:]...)
			i--
		}
	}
}

// RemoveNode deletes n; it refuses while any of its outputs is still used or
// is a graph output.
func (g *Graph) RemoveNode(n *Node) error {
	for _, o := range n.outputs {
		if o == nil {
			continue
		}
		if len(o.uses) > 0 {
			return fmt.Errorf("graph: cannot remove %v: output %q still has %d uses", n, o.Name, len(o.uses))
		}
		for _, out := range g.Outputs {
			if out == o {
				return fmt.Errorf("graph: cannot remove %v: output %q is a graph output", n, o.Name)
			}
		}
	}
	g.unlink(n)
	for _, o := range n.outputs {
		if o != nil {
			delete(g.values, o.Name)
			g.dropValueInfo(o)
		}
	}
	for i, m := range g.nodes {
		if m == n {
			g.nodes = append(g.nodes[:i:i], g.nodes[i+1:]...)
			break
		}
	}
	return nil
}

// RemoveInitializer deletes an unused initializer.
func (g *Graph) RemoveInitializer(v *Value) error {
	if len(v.uses) > 0 {
		return fmt.Errorf("graph: cannot remove initializer %q: %d uses", v.Name, len(v.uses))
	}
	if g.isOutput(v) {
		return fmt.Errorf("graph: cannot remove initializer %q: it is a graph output", v.Name)
	}
	for i, w := range g.Initializers {
		if w == v {
			g.Initializers = append(g.Initializers[:i:i], g.Initializers[i+1:]...)
		}
	}
	for i, w := range g.Inputs {
		if w == v {
			g.Inputs = append(g.Inputs[:i:i], g.Inputs[i+1:]...)
		}
	}
	delete(g.values, v.Name)
	g.dropValueInfo(v)
	return nil
}

// FreshName returns a name based on base that no value or node of g, of its
// enclosing graphs or of any graph nested in them uses yet, and reserves it.
// (ONNX forbids a subgraph to redefine a name of an enclosing scope, so a new
// name must be unique across the whole tree of graphs.)
func (g *Graph) FreshName(base string) string {
	if base == "" {
		base = "t"
	}
	root := g
	for root.Parent != nil {
		root = root.Parent
	}
	if root.names == nil {
		root.names = map[string]int{}
	}
	// Every graph of the tree: root and what it nests, plus g's own chain and
	// nesting (g may not be linked into a node attribute yet).
	graphs := map[*Graph]bool{}
	nodeNames := map[string]bool{}
	var walk func(s *Graph)
	walk = func(s *Graph) {
		if graphs[s] {
			return
		}
		graphs[s] = true
		for _, n := range s.nodes {
			if strings.HasPrefix(n.Name, base) {
				nodeNames[n.Name] = true
			}
			for _, a := range n.Attrs {
				if a.G != nil {
					walk(a.G)
				}
				for _, sub := range a.Graphs {
					walk(sub)
				}
			}
		}
	}
	walk(root)
	for s := g; s != nil; s = s.Parent {
		walk(s)
	}
	taken := func(s string) bool {
		if _, ok := root.names["="+s]; ok || nodeNames[s] {
			return true
		}
		for sg := range graphs {
			if _, ok := sg.values[s]; ok {
				return true
			}
		}
		return false
	}
	name := base
	for taken(name) {
		root.names[base]++
		name = base + "_" + strconv.Itoa(root.names[base])
	}
	root.names["="+name] = 1
	return name
}

// Topo returns the nodes in a topological order that is stable: among ready
// nodes, stored order decides. It fails on a cycle, naming the nodes on it.
// A node that holds a subgraph depends on the producers of every value of g the
// subgraph uses (as a node input or as a subgraph output).
func (g *Graph) Topo() ([]*Node, error) {
	pos := make(map[*Node]int, len(g.nodes))
	for i, n := range g.nodes {
		pos[n] = i
	}
	indeg := make([]int, len(g.nodes))
	succ := make([][]int, len(g.nodes))
	preds := make([][]int, len(g.nodes))
	for i, n := range g.nodes {
		for _, p := range n.deps() {
			j, ok := pos[p]
			if !ok || containsInt(preds[i], j) {
				continue
			}
			preds[i] = append(preds[i], j)
			indeg[i]++
			succ[j] = append(succ[j], i)
		}
	}
	ready := &minHeap{}
	for i := range g.nodes {
		if indeg[i] == 0 {
			ready.push(i)
		}
	}
	out := make([]*Node, 0, len(g.nodes))
	for ready.len() > 0 {
		i := ready.pop()
		out = append(out, g.nodes[i])
		for _, c := range succ[i] {
			indeg[c]--
			if indeg[c] == 0 {
				ready.push(c)
			}
		}
	}
	if len(out) == len(g.nodes) {
		return out, nil
	}
	// Every node left has a predecessor left: walking predecessors from any of
	// them must come back to a node already seen, which lies on a cycle.
	start := -1
	for i := range g.nodes {
		if indeg[i] > 0 {
			start = i
			break
		}
	}
	seenAt := map[int]int{}
	var path []int
	for i := start; ; {
		if k, ok := seenAt[i]; ok {
			path = path[k:]
			break
		}
		seenAt[i] = len(path)
		path = append(path, i)
		next := -1
		for _, j := range preds[i] {
			if indeg[j] > 0 {
				next = j
				break
			}
		}
		if next < 0 { // cannot happen; report what we have
			break
		}
		i = next
	}
	names := make([]string, len(path))
	for k, i := range path {
		names[len(path)-1-k] = g.nodes[i].String()
	}
	return nil, fmt.Errorf("graph %q: cycle through %s", g.Name, strings.Join(names, " → "))
}

func containsInt(s []int, x int) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// minHeap is a binary min-heap of node positions.
type minHeap struct{ a []int }

func (h *minHeap) len() int { return len(h.a) }

func (h *minHeap) push(x int) {
	h.a = append(h.a, x)
	for i := len(h.a) - 1; i > 0; {
		p := (i - 1) / 2
		if h.a[p] <= h.a[i] {
			break
		}
		h.a[p], h.a[i] = h.a[i], h.a[p]
		i = p
	}
}

func (h *minHeap) pop() int {
	top := h.a[0]
	last := len(h.a) - 1
	h.a[0] = h.a[last]
	h.a = h.a[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h.a) && h.a[l] < h.a[m] {
			m = l
		}
		if r < len(h.a) && h.a[r] < h.a[m] {
			m = r
		}
		if m == i {
			break
		}
		h.a[m], h.a[i] = h.a[i], h.a[m]
		i = m
	}
	return top
}

// owner returns the node whose attribute holds g (for subgraphs), found by scan.
func (g *Graph) owner() *Node {
	if g.Parent == nil {
		return nil
	}
	for _, n := range g.Parent.nodes {
		for _, a := range n.Attrs {
			if a.G == g {
				return n
			}
			for _, s := range a.Graphs {
				if s == g {
					return n
				}
			}
		}
	}
	return nil
}

// deps returns the producers of n's inputs, including values a subgraph of n
// uses from n's graph.
func (n *Node) deps() []*Node {
	var out []*Node
	for _, in := range n.inputs {
		if in != nil && in.producer != nil {
			out = append(out, in.producer)
		}
	}
	for _, a := range n.Attrs {
		subs := a.Graphs
		if a.G != nil {
			subs = append([]*Graph{a.G}, subs...)
		}
		for _, s := range subs {
			s.outerRefs(func(v *Value) {
				if v.producer != nil && v.graph == n.graph {
					out = append(out, v.producer)
				}
			})
		}
	}
	return out
}

// outerRefs calls f for every value used in g (or its own subgraphs) that g
// does not define.
func (g *Graph) outerRefs(f func(*Value)) {
	for _, m := range g.nodes {
		for _, in := range m.inputs {
			if in != nil && in.graph != g {
				f(in)
			}
		}
		for _, a := range m.Attrs {
			subs := a.Graphs
			if a.G != nil {
				subs = append([]*Graph{a.G}, subs...)
			}
			for _, s := range subs {
				s.outerRefs(func(v *Value) {
					if v.graph != g {
						f(v)
					}
				})
			}
		}
	}
	for _, o := range g.Outputs {
		if o != nil && o.graph != g {
			f(o)
		}
	}
}

func (g *Graph) hasNode(n *Node) bool {
	for _, m := range g.nodes {
		if m == n {
			return true
		}
	}
	return false
}

// SortTopologically reorders the stored nodes into topological order.
func (g *Graph) SortTopologically() error {
	order, err := g.Topo()
	if err != nil {
		return err
	}
	g.nodes = order
	return nil
}

// Validate checks the invariants: every input is defined before use in some
// topological order, use lists match inputs, outputs have producers or are
// inputs/initializers, initializer data matches its shape, names are unique.
func (g *Graph) Validate() error {
	for _, n := range g.nodes {
		if n.OpType == "" {
			return fmt.Errorf("graph %q: node %q has no op type", g.Name, n.Name)
		}
		for i, in := range n.inputs {
			if in == nil {
				continue
			}
			if g.Value(in.Name) != in {
				return fmt.Errorf("graph %q: %v input %d uses %q, which is not defined in scope", g.Name, n, i, in.Name)
			}
			found := false
			for _, u := range in.uses {
				if u.Node == n && u.Index == i {
					found = true
				}
			}
			if !found {
				return fmt.Errorf("graph %q: %v input %d: use list of %q is stale", g.Name, n, i, in.Name)
			}
		}
		for i, o := range n.outputs {
			if o != nil && (o.producer != n || o.outIndex != i) {
				return fmt.Errorf("graph %q: %v output %d: producer link of %q is stale", g.Name, n, i, o.Name)
			}
		}
		for _, a := range n.Attrs {
			subs := a.Graphs
			if a.G != nil {
				subs = append([]*Graph{a.G}, subs...)
			}
			for _, s := range subs {
				if err := s.Validate(); err != nil {
					return fmt.Errorf("%v attribute %q: %w", n, a.Name, err)
				}
			}
		}
	}
	for _, v := range g.Initializers {
		if v == nil || v.Init == nil {
			return fmt.Errorf("graph %q: initializer without data", g.Name)
		}
		if g.values[v.Name] != v {
			return fmt.Errorf("graph %q: initializer %q is not defined in the graph", g.Name, v.Name)
		}
		if err := v.Init.Check(); err != nil {
			return fmt.Errorf("graph %q: initializer: %w", g.Name, err)
		}
	}
	for _, v := range g.Inputs {
		if v == nil || g.values[v.Name] != v {
			return fmt.Errorf("graph %q: graph input is not defined in the graph", g.Name)
		}
	}
	// The other direction of the use lists: every recorded use must be a live
	// node's input, and a subgraph must not redefine an enclosing name.
	live := make(map[*Node]bool, len(g.nodes))
	for _, n := range g.nodes {
		if n.graph != g {
			return fmt.Errorf("graph %q: %v belongs to another graph", g.Name, n)
		}
		live[n] = true
	}
	for name, v := range g.values {
		if v.Name != name {
			return fmt.Errorf("graph %q: value %q is stored under the name %q", g.Name, v.Name, name)
		}
		if g.Parent != nil && g.Parent.Value(name) != nil {
			return fmt.Errorf("graph %q: value %q redefines a name of an enclosing graph", g.Name, name)
		}
		if v.producer != nil && !live[v.producer] {
			return fmt.Errorf("graph %q: value %q is produced by a node that is not in the graph", g.Name, name)
		}
		for _, u := range v.uses {
			if u.Node == nil || u.Node.Input(u.Index) != v {
				return fmt.Errorf("graph %q: use list of %q is stale (%v input %d)", g.Name, name, u.Node, u.Index)
			}
			if u.Node.graph == g && !live[u.Node] ||
				u.Node.graph != g && (u.Node.graph == nil || !u.Node.graph.hasNode(u.Node)) {
				return fmt.Errorf("graph %q: use list of %q names %v, which is not in any graph", g.Name, name, u.Node)
			}
		}
	}
	for _, o := range g.Outputs {
		if o == nil {
			return fmt.Errorf("graph %q: nil graph output", g.Name)
		}
		if g.Value(o.Name) != o {
			return fmt.Errorf("graph %q: output %q is not defined", g.Name, o.Name)
		}
	}
	if _, err := g.Topo(); err != nil {
		return err
	}
	return nil
}

// OpsetImport is one (domain, version) pair a model imports.
type OpsetImport struct {
	Domain  string
	Version int64
}

// Model is a graph plus the model-level metadata the tool reads.
type Model struct {
	Graph           *Graph
	IRVersion       int64
	Opsets          []OpsetImport
	ProducerName    string
	ProducerVersion string
	Domain          string
	ModelVersion    int64
	Doc             string
	Metadata        map[string]string
	// Ext is owned by onnxio (the original ModelProto; functions, training info
	// and unknown fields are kept there).
	Ext any
}

// Opset returns the imported version of a domain ("" for ai.onnx), or 0.
func (m *Model) Opset(domain string) int64 {
	for _, o := range m.Opsets {
		if o.Domain == domain || (domain == "" && o.Domain == "ai.onnx") {
			return o.Version
		}
	}
	return 0
}
