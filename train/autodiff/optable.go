package autodiff

//go:generate go test -run ^TestGradientsOpTable$ -update

import (
	"fmt"
	"maps"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/ops"
)

// GradRule returns the gradients of a node's inputs (nil where an input
// needs none) from its outputs' (see GradCtx).
type GradRule func(c *GradCtx) []*graph.Value

// grad is one op's gradient rule and its line in docs/GRADIENTS.md's op
// table.
type grad struct {
	rule GradRule
	doc  string
}

// fwdRule emits node n into the training graph in place of a copy and
// returns the node that stands for it (nil when none does).
type fwdRule func(b *builder, n *graph.Node, p *planned) *graph.Node

// builtinGrads are the gradient rules by exact ai.onnx op_type. What else
// the tool knows of an op (its differentiable inputs, parameter roles,
// layer kind and shape rule) is graph/ops's table; every op here must be
// listed there with differentiable inputs (TestGradRulesListed).
// RegisterGrad adds to the live rules, not to this.
var builtinGrads = map[string]grad{
	"Add":         {gradAdd, "U(dY) to each operand (U: sum over the broadcast axes)"},
	"Sub":         {gradSub, "U(dY), −U(dY)"},
	"Mul":         {gradMul, "U(dY·B), U(dY·A)"},
	"Div":         {gradDiv, "U(dY/B), U(−dY·Y/B)"},
	"Sum":         {gradSum, "U(dY) to each operand"},
	"Pow":         {gradPow, "U(dY·E·x^(E−1)) (the exponent E is stop-gradient)"},
	"Neg":         {gradNeg, "−dY"},
	"Relu":        {gradRelu, "dY·Ceil(Clip(y, 0, 1)): 1 where y > 0, subgradient 0 at 0 as PyTorch"},
	"LeakyRelu":   {gradLeakyRelu, "Where(X > 0, dY, α·dY)"},
	"Sigmoid":     {gradSigmoid, "dY·y(1−y)"},
	"Tanh":        {gradTanh, "dY·(1−y²)"},
	"Erf":         {gradErf, "dY·(2/√π)·exp(−x²)"},
	"Gelu":        {gradGelu, "dY·(Φ(x) + x·φ(x)); the tanh approximation's derivative for approximate=\"tanh\""},
	"Sqrt":        {gradSqrt, "dY·0.5/y"},
	"Reciprocal":  {gradReciprocal, "−dY·y²"},
	"Exp":         {gradExp, "dY·y"},
	"Log":         {gradLog, "dY/x"},
	"Clip":        {gradClip, "Where(min < x < max, dY, 0) (strict at the kinks, as PyTorch's hardtanh)"},
	"HardSigmoid": {gradHardSigmoid, "Where(0 < y < 1, α·dY, 0)"},
	"HardSwish":   {gradHardSwish, "dY·Where(x < −3, 0, Where(x > 3, 1, x/3 + ½))"},
	"Softmax":     {gradSoftmax, "y ⊙ (dY − ReduceSum(dY ⊙ y, axis))"},
	"LogSoftmax":  {gradLogSoftmax, "dY − exp(y) ⊙ ReduceSum(dY, axis)"},
	"Identity":    {gradIdentity, "dY"},
	"Cast":        {gradCast, "Cast(dY, to = X's float type)"},
	"Dropout":     {gradDropout, "dY in inference mode; dY·mask/(1−ratio) with the forward's mask in training mode"},
	"Where":       {gradWhere, "U(Where(c, dY, 0)), U(Where(c, 0, dY)) (not the condition)"},
	"Gemm":        {gradGemm, "dA = α·dY·B′ᵀ, dB = α·A′ᵀ·dY (transposed as transA/transB), dC = β·U(dY)"},
	"MatMul":      {gradMatMul, "dA = U(dY·Bᵀ), dB = U(Aᵀ·dY), ᵀ swapping the last two axes"},
	"Conv": {gradConv,
		"dX = ConvTranspose-equivalent of dY with W, dW = correlation of X with dY, dB = Σ dY (forms: § Convolution)"},
	"ConvTranspose": {gradConvTranspose,
		"dX = Conv(dY, W, same attributes), dW from the Conv weight gradient with X and dY swapped, dB = Σ dY"},
	"MaxPool":           {gradMaxPool, "dY scattered to the forward's argmax positions (Indices output)"},
	"AveragePool":       {gradAveragePool, "dY/count spread over each window (count by count_include_pad)"},
	"GlobalAveragePool": {gradGlobalAveragePool, "Expand(dY, Shape(X)) / ∏spatial"},
	"BatchNormalization": {gradBatchNormalization,
		"training: dγ = Σ dY·x̂, dβ = Σ dY, dX = (γ/σ)(dY − mean(dY) − x̂·mean(dY·x̂)); inference: affine"},
	"LayerNormalization": {gradLayerNormalization,
		"dγ = U(dY·x̂), dβ = U(dY), dX = r·(h − mean(h) − x̂·mean(h·x̂)) with h = dY·γ"},
	"Flatten":   {gradReshape, "Reshape(dY, Shape(X))"},
	"Reshape":   {gradReshape, "Reshape(dY, Shape(X))"},
	"Squeeze":   {gradReshape, "Reshape(dY, Shape(X))"},
	"Unsqueeze": {gradReshape, "Reshape(dY, Shape(X))"},
	"Transpose": {gradTranspose, "Transpose(dY, inverse permutation)"},
	"Concat":    {gradConcat, "Split(dY, each input's size along the axis)"},
	"Split":     {gradSplit, "Concat of the outputs' gradients (zeros for an output without one)"},
	"Slice": {gradSlice,
		"Pad(dY, [starts, dims−ends]) for unit steps and static sizes; else the index form (§ Shape and indexing)"},
	"Gather":     {gradGather, "the index form: ScatterElements-add of dY into zeros (repeated indices add up)"},
	"Expand":     {gradExpand, "U(dY) to X's shape"},
	"Pad":        {gradPad, "Slice(dY) back to X (mode constant, pads ≥ 0)"},
	"ReduceSum":  {gradReduce, "Expand(dY at the reduced axes, Shape(X))"},
	"ReduceMean": {gradReduce, "Expand(dY at the reduced axes, Shape(X)) / the reduced count"},
}

// fwdRules emit these ops into the training graph in place of a copy.
var fwdRules = map[string]fwdRule{
	"Dropout":            fwdDropout,
	"Conv":               fwdConv,
	"MaxPool":            fwdMaxPool,
	"BatchNormalization": fwdBatchNormalization,
	"LayerNormalization": fwdLayerNormalization,
}

// grads is the live rule table: builtinGrads and what RegisterGrad added.
// It is replaced whole on each RegisterGrad, so a Build running meanwhile
// sees the rules before or after, never half of them.
var (
	grads      atomic.Pointer[map[string]grad]
	registerMu sync.Mutex
)

func init() {
	g := maps.Clone(builtinGrads)
	grads.Store(&g)
}

// gradOf returns op's gradient rule (nil when it has none).
func gradOf(op string) GradRule {
	return (*grads.Load())[op].rule
}

// RegisterGrad gives op a gradient rule, with one line on it for
// docs/GRADIENTS.md: the op must be listed in graph/ops (ops.Register adds
// one the tool does not ship) with differentiable inputs, and have no rule
// yet. Call it before building graphs with the op, from an init function
// say.
func RegisterGrad(op string, rule GradRule, doc string) error {
	d, listed := ops.Lookup(op)
	switch {
	case !listed:
		return fmt.Errorf("autodiff: RegisterGrad %s: graph/ops does not list the op (ops.Register adds it)", op)
	case len(d.Diff) == 0:
		return fmt.Errorf("autodiff: RegisterGrad %s: graph/ops lists no differentiable input of the op", op)
	case rule == nil || doc == "":
		return fmt.Errorf("autodiff: RegisterGrad %s: a gradient rule needs a function and a doc line", op)
	}
	registerMu.Lock()
	defer registerMu.Unlock()
	cur := *grads.Load()
	if _, ok := cur[op]; ok {
		return fmt.Errorf("autodiff: RegisterGrad %s: the op already has a gradient rule", op)
	}
	next := maps.Clone(cur)
	next[op] = grad{rule: rule, doc: doc}
	grads.Store(&next)
	return nil
}

// supported reports whether autodiff accepts op on the path from the
// parameters to the loss: it has a gradient rule, or graph/ops lists it
// with no differentiable input.
func supported(op string) bool {
	if gradOf(op) != nil {
		return true
	}
	d, ok := ops.Lookup(op)
	return ok && len(d.Diff) == 0
}

// differentiable reports whether input i of n carries gradient: n has a
// rule and graph/ops marks the input differentiable (Cast only to a float
// type).
func differentiable(n *graph.Node, i int) bool {
	return gradOf(n.OpType) != nil && graph.IsDifferentiableInput(n, i)
}

// Supported returns the op types autodiff accepts (sorted): ops with a
// gradient rule and ops that pass no gradient (Shape, Constant, …).
func Supported() []string {
	var out []string
	for _, op := range ops.Known() {
		if supported(op) {
			out = append(out, op)
		}
	}
	sort.Strings(out)
	return out
}

// gradOps lists the op types that have a gradient rule.
func gradOps() []string {
	out := make([]string, 0, len(*grads.Load()))
	for k := range *grads.Load() {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
