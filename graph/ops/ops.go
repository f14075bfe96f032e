package ops

import (
	"fmt"
	"maps"
	"sort"
	"sync"
	"sync/atomic"
)

// Parameter roles an initializer plays at an op's input (graph.Param.Kind).
const (
	Weight    = "weight"     // Conv/ConvTranspose W, Gemm A/B, MatMul operand, RNN W/R
	Bias      = "bias"       // Conv/ConvTranspose/Gemm input 2, RNN B, an Add after a layer op
	NormScale = "norm_scale" // scale of BatchNormalization, LayerNormalization, …
	NormBias  = "norm_bias"  // shift of the same
	Embedding = "embedding"  // Gather's data
	Other     = "other"      // anything else (cls token, positional embedding, PRelu slope, …)
)

// AllInputs as the only element of Def.Diff marks an op whose every input is
// differentiable (variadic ops: Concat, Sum, Einsum, …).
const AllInputs = -1

// Def is what the table says about one op.
type Def struct {
	// Diff lists the inputs a gradient flows into ({AllInputs}: every one).
	// Inputs not listed (shapes, axes, indices, conditions, exponents, clip
	// bounds, running statistics, …) are stop-gradient. Empty: the op has no
	// differentiable input (its output is an integer, a boolean, a shape or
	// piecewise constant).
	Diff []int
	// FloatResultOnly: the inputs in Diff are differentiable only when the
	// op's result is a float tensor (Cast's "to", CastLike's input 1), which
	// graph.IsDifferentiableInput decides from the node.
	FloatResultOnly bool
	// Roles gives the role of a parameter at input i (key AllInputs: at
	// every input not listed). Roles that depend on the neighbouring nodes
	// (the bias of an Add after a layer op, the scale and shift of a
	// normalization decomposed into primitives) are graph's.
	Roles map[int]string
}

// Differentiable reports whether input i is in d.Diff.
func (d Def) Differentiable(i int) bool {
	for _, j := range d.Diff {
		if j == AllInputs || j == i {
			return true
		}
	}
	return false
}

// Role returns the role of a parameter at input i, "" when the op gives it
// none.
func (d Def) Role(i int) string {
	if r, ok := d.Roles[i]; ok {
		return r
	}
	return d.Roles[AllInputs]
}

// table is the live table: the generated builtin (table.go) and what
// Register added, replaced whole on each Register.
var (
	table      atomic.Pointer[map[string]Def]
	registerMu sync.Mutex
)

func init() {
	t := maps.Clone(builtin)
	table.Store(&t)
}

// Lookup returns the definition of a default-domain op.
func Lookup(op string) (Def, bool) {
	d, ok := (*table.Load())[op]
	return d, ok
}

// Known returns the listed op types, sorted.
func Known() []string {
	t := *table.Load()
	out := make([]string, 0, len(t))
	for k := range t {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Register adds an op the table does not list. Package autodiff's
// Register calls it (the op table lives there, with the rules); a program
// that adds an op through autodiff.Register needs nothing else.
func Register(op string, d Def) error {
	registerMu.Lock()
	defer registerMu.Unlock()
	cur := *table.Load()
	if _, ok := cur[op]; ok {
		return fmt.Errorf("graph/ops: %s is already listed", op)
	}
	next := maps.Clone(cur)
	next[op] = d
	table.Store(&next)
	return nil
}
