package graph

import (
	"fmt"
	"strings"

	"github.com/unlearn-tool/unlearn/graph/ops"
)

// BatchParam is the symbolic dimension MakeBatchSymbolic gives the batch.
const BatchParam = "batch"

// BatchError is a graph whose fixed batch size cannot be made symbolic: a
// Reshape on the way from the image input reshapes to a constant shape
// whose first element fixes the output's first dimension, so a batch of any
// other size fails there (or is silently folded into one example).
type BatchError struct {
	Input  string // the image input's name
	Output string // the first graph output's name ("" without one)
	Size   int64  // the declared batch size
	Node   *Node  // the Reshape that hard-codes it
	Shape  []int64
}

func (e *BatchError) Error() string {
	out := e.Output
	if out == "" {
		out = "output"
	}
	return fmt.Sprintf("input %q has a fixed batch size of %d and %v reshapes to the constant shape %v, "+
		"which hard-codes it: the model runs only on batches of %d. Re-export it with "+
		"torch.onnx.export(..., dynamic_axes={%q: {0: \"batch\"}, %q: {0: \"batch\"}}) "+
		"(PyTorch writes a constant shape for x.view(1, -1) and, when the batch is fixed, for "+
		"x.view(x.size(0), -1); torch.flatten(x, 1) exports as Flatten)",
		e.Input, e.Size, e.Node, e.Shape, e.Size, e.Input, out)
}

// FixedBatch returns the batch size g's image input declares when it is
// fixed (a known first dimension of g's single non-initializer input of
// rank ≥ 1), else 0. With a fixed batch it also checks that the graph
// allows the batch to vary (MakeBatchSymbolic): a *BatchError names the
// Reshape that hard-codes it. g is not changed.
func FixedBatch(g *Graph) (int64, error) {
	in, n := fixedBatchInput(g)
	if in == nil {
		return 0, nil
	}
	reach := batchReach(g, in)
	for _, nd := range g.nodes {
		if nd.OpType != ops.Reshape || !nd.IsDefaultDomain() || !reach[nd.Input(0)] {
			continue
		}
		shape, ok := constInts(nd.Input(1))
		// A first element of -1 (inferred) or 0 (copied from the input,
		// with allowzero=0) follows the batch; a positive one fixes it.
		if !ok || len(shape) == 0 || shape[0] <= 0 {
			continue
		}
		e := &BatchError{Input: in.Name, Size: n, Node: nd, Shape: shape}
		if len(g.Outputs) > 0 {
			e.Output = g.Outputs[0].Name
		}
		return n, e
	}
	return n, nil
}

// MakeBatchSymbolic gives g's image input a symbolic batch dimension
// (BatchParam) when it declares a fixed one, as PyTorch's default export
// does (the dummy input's batch, usually 1, without dynamic_axes), so that
// ONNX Runtime runs the graph on batches of any size. The first dimension
// of every float value computed from the input whose declared type carries
// the same fixed size (the logits output, value_info annotations) becomes
// symbolic too. It reports whether g changed; when the graph hard-codes the
// batch (FixedBatch's *BatchError) it refuses and leaves g as it was.
//
// Call it on working copies only: the model the tool writes keeps its
// declared shapes (RestoreDeclaredShapes).
func MakeBatchSymbolic(g *Graph) (bool, error) {
	n, err := FixedBatch(g)
	if n == 0 || err != nil {
		return false, err
	}
	in, _ := fixedBatchInput(g)
	in.Type = withSymbolicBatch(in.Type)
	for v := range batchReach(g, in) {
		t := v.Type
		if v == in || t == nil || !t.DType.IsFloat() || len(t.Shape) == 0 || !t.Shape[0].Known() || t.Shape[0].Size != n {
			continue
		}
		v.Type = withSymbolicBatch(t)
	}
	return true, nil
}

// RestoreDeclaredShapes gives dst's inputs, outputs and value_info entries
// the types src declares for values of the same name: dst is a working
// copy of src (MakeBatchSymbolic changed its types) that is to be written
// in place of src.
func RestoreDeclaredShapes(dst, src *Graph) {
	for _, list := range [][]*Value{dst.Inputs, dst.Outputs, dst.ValueInfo} {
		for _, v := range list {
			if o := src.LocalValue(v.Name); o != nil && o.Type != nil {
				v.Type = cloneType(o.Type)
			}
		}
	}
}

// DescribeFixedBatch is the note for a run whose working graphs had the
// fixed batch made symbolic.
func DescribeFixedBatch(g *Graph) string {
	in, n := fixedBatchInput(g)
	if in == nil {
		return ""
	}
	return fmt.Sprintf("input %q declares the shape %s, a fixed batch size of %d (an export without "+
		"dynamic_axes): the batch was made symbolic in the graphs the tool evaluates and trains; the written "+
		"model keeps the declared shapes", in.Name, shapeString(in.Type.Shape), n)
}

// fixedBatchInput returns g's single non-initializer input and its batch
// size when its first dimension is fixed, else nil.
func fixedBatchInput(g *Graph) (*Value, int64) {
	var in *Value
	for _, v := range g.Inputs {
		if v.IsInitializer() {
			continue
		}
		if in != nil {
			return nil, 0
		}
		in = v
	}
	if in == nil || in.Type == nil || len(in.Type.Shape) == 0 || !in.Type.Shape[0].Known() {
		return nil, 0
	}
	return in, in.Type.Shape[0].Size
}

// batchReach returns the values computed from in (in included), following
// node outputs in g (not into subgraphs).
func batchReach(g *Graph, in *Value) map[*Value]bool {
	reach := map[*Value]bool{in: true}
	work := []*Value{in}
	for len(work) > 0 {
		v := work[len(work)-1]
		work = work[:len(work)-1]
		for _, u := range v.uses {
			if u.Node.graph != g {
				continue
			}
			for _, o := range u.Node.outputs {
				if o != nil && !reach[o] {
					reach[o] = true
					work = append(work, o)
				}
			}
		}
	}
	return reach
}

// constInts returns the elements of an integer constant: an initializer or
// the output of a Constant node (value or value_ints).
func constInts(v *Value) ([]int64, bool) {
	if v == nil {
		return nil, false
	}
	t := v.Init
	if t == nil {
		p, _ := v.Producer()
		if p == nil || p.OpType != ops.Constant || !p.IsDefaultDomain() {
			return nil, false
		}
		if a := p.Attr("value_ints"); a != nil && a.Type == AttrInts {
			return a.Ints, true
		}
		if a := p.Attr("value"); a != nil && a.T != nil {
			t = a.T
		}
	}
	if t == nil {
		return nil, false
	}
	ints, err := t.Int64s()
	if err != nil {
		return nil, false
	}
	return ints, true
}

// withSymbolicBatch returns a copy of t whose first dimension is BatchParam.
func withSymbolicBatch(t *Type) *Type {
	c := cloneType(t)
	c.Shape[0] = Dim{Size: -1, Param: BatchParam}
	return c
}

func cloneType(t *Type) *Type {
	if t == nil {
		return nil
	}
	c := &Type{DType: t.DType}
	if t.Shape != nil {
		c.Shape = append([]Dim{}, t.Shape...)
	}
	return c
}

// shapeString formats dims for messages: [1, 3, 32, 32].
func shapeString(dims []Dim) string {
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = d.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
