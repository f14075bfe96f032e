package shapes

import (
	"fmt"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/ops"
)

// builtinRules are the rules graph/ops's table names (ops.Def.Shape).
var builtinRules = map[string]Rule{
	"Arith": Arith, "BatchNormalization": BatchNormalization, "Cast": Cast, "CastLike": CastLike,
	"Compare": Compare, "Concat": Concat, "Constant": Constant, "ConstantOfShape": ConstantOfShape,
	"Default": Default, "Dropout": Dropout, "Expand": Expand, "Flatten": Flatten, "Gather": Gather,
	"GatherElements": GatherElements, "Gemm": Gemm, "GlobalPool": GlobalPool, "Identity": Identity,
	"LayerNormalization": LayerNormalization, "MatMul": MatMul, "NegAbsSign": NegAbsSign,
	"NonZero": NonZero, "Not": Not, "Pad": Pad, "Range": Range, "Reduce": Reduce, "Reshape": Reshape,
	"Scatter": Scatter, "Shape": Shape, "Size": Size, "Slice": Slice, "Split": Split, "Squeeze": Squeeze,
	"Transpose": Transpose, "Unary": Unary, "Where": Where, "Window": Window,
}

// rules holds builtinRules and what Define added, replaced whole on each
// Define.
var (
	rules    atomic.Pointer[map[string]Rule]
	defineMu sync.Mutex
)

func init() {
	r := maps.Clone(builtinRules)
	rules.Store(&r)
}

// Named returns the rule of that name (nil, false when there is none).
func Named(name string) (Rule, bool) {
	r, ok := (*rules.Load())[name]
	return r, ok
}

// For returns the shape rule graph/ops's table gives op (Default for an op
// it does not list, or lists without a rule). It goes by op type alone: a
// com.microsoft.nchwc Conv takes Conv's.
func For(op string) Rule {
	d, _ := ops.Lookup(op)
	if r, ok := Named(d.Shape); ok {
		return r
	}
	return Default
}

// InferNode sets the types of n's outputs by its op's rule (For).
func (inf *Inferrer) InferNode(n *graph.Node) { inf.Infer(n, For(n.OpType)) }

// Define adds a rule under a new name, for an op registered with
// ops.Register whose outputs no listed rule types. It refuses a name
// already taken and a nil rule.
func Define(name string, r Rule) error {
	if name == "" || r == nil {
		return fmt.Errorf("graph/shapes: Define %q: a rule needs a name and a function", name)
	}
	defineMu.Lock()
	defer defineMu.Unlock()
	cur := *rules.Load()
	if _, ok := cur[name]; ok {
		return fmt.Errorf("graph/shapes: Define %s: the name is taken", name)
	}
	next := maps.Clone(cur)
	next[name] = r
	rules.Store(&next)
	return nil
}
