package ops

import (
	"fmt"
	"maps"
	"regexp"
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

// Kind is the layer kind of an op: how package graph finds the output
// channels of the weight it consumes and the parameters that go with it.
type Kind uint8

// Layer kinds.
const (
	// KindNone: the op carries no layer of its own.
	KindNone Kind = iota
	// KindConv: weight [M, C/group, k…] at input 1, bias [M] at input 2;
	// the output channels lie on axis 0 of the weight and axis 1 of the
	// output.
	KindConv
	// KindConvTranspose: weight [C, M/group, k…] at input 1 (attribute
	// group), bias [M] at input 2; the output channels lie on axis 1 of the
	// weight and axis 1 of the output.
	KindConvTranspose
	// KindGemm: Y = α·A′·B′ + β·C with 2-D A and B (attributes transA,
	// transB); the output channels lie on the last axis.
	KindGemm
	// KindMatMul: batched A·B (numpy matmul); the output channels lie on
	// the last axis.
	KindMatMul
	// KindChannelNorm: a normalization per channel along axis 1 with
	// scale and shift [C] at inputs 1 and 2 (BatchNormalization,
	// InstanceNormalization).
	KindChannelNorm
	// KindTrailingNorm: a normalization over the trailing axes, its scale
	// (and shift, where Diff lists input 2) shaped like those axes
	// (LayerNormalization, RMSNormalization).
	KindTrailingNorm
	// KindGroupNorm: a normalization over groups of channels
	// (GroupNormalization).
	KindGroupNorm
)

// IsLayer reports whether k is a weight layer: Conv, ConvTranspose, Gemm
// or MatMul, an op whose weight carries output channels.
func (k Kind) IsLayer() bool { return k >= KindConv && k <= KindMatMul }

// IsNorm reports whether k is a normalization with a scale at input 1.
func (k Kind) IsNorm() bool { return k >= KindChannelNorm && k <= KindGroupNorm }

// Def is what the table says about one op.
type Def struct {
	// Kind is the op's layer kind (KindNone for most).
	Kind Kind
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
	// Shape names the rule of package graph/shapes that infers the types
	// of the op's outputs (shapes.For; "": shapes.Default). It is a name
	// because the rules work on graph's values, which this package is
	// below.
	Shape string
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

// table is the live table: builtin (table.go) and what Register added,
// replaced whole on each Register, so that a reader running meanwhile sees
// the table before or after, never half of it.
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

// KindOf returns op's layer kind (KindNone for an op the table does not
// list).
func KindOf(op string) Kind {
	d, _ := Lookup(op)
	return d.Kind
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

var opName = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)

// Register adds an op the table does not list, for a program that meets
// ops the tool does not ship: graph's analysis, graph/shapes's inference
// and, once train/autodiff.RegisterGrad gives it a gradient rule, the
// training graph see it. It refuses a name that is not an ai.onnx op type,
// an op already listed, and input indexes below AllInputs. Call it before
// analysing graphs with the op, from an init function say.
func Register(op string, d Def) error {
	if !opName.MatchString(op) {
		return fmt.Errorf("graph/ops: Register: %q is not an op type", op)
	}
	for _, i := range d.Diff {
		if i < AllInputs {
			return fmt.Errorf("graph/ops: Register %s: input index %d in Diff", op, i)
		}
	}
	for i := range d.Roles {
		if i < AllInputs {
			return fmt.Errorf("graph/ops: Register %s: input index %d in Roles", op, i)
		}
	}
	registerMu.Lock()
	defer registerMu.Unlock()
	cur := *table.Load()
	if _, ok := cur[op]; ok {
		return fmt.Errorf("graph/ops: Register %s: the op is already listed", op)
	}
	next := maps.Clone(cur)
	next[op] = d
	table.Store(&next)
	return nil
}

// Shipped returns the op types of the table the tool ships (table.go),
// sorted, without those Register added.
func Shipped() []string {
	out := make([]string, 0, len(builtin))
	for k := range builtin {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
