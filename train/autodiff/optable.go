package autodiff

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/ops"
	"github.com/unlearn-tool/unlearn/graph/shapes"
)

// Op is one op's entry in the op table, everything the tool knows of it:
// which inputs a gradient flows into and the roles of the parameters it
// consumes (graph's parameter analysis reads these from graph/ops, whose
// table is generated from this one), the rule that infers its outputs'
// types, its gradient rule, one line on that rule for docs/GRADIENTS.md,
// and an optional forward lowering.
type Op struct {
	// Diff lists the inputs a gradient flows into ({ops.AllInputs}: every
	// one). Inputs not listed (shapes, axes, indices, conditions,
	// exponents, clip bounds, running statistics, …) are stop-gradient.
	// Empty: the op passes no gradient (its output is an integer, a
	// boolean, a shape or piecewise constant), and autodiff accepts it on
	// the path from the parameters to the loss.
	Diff []int
	// FloatResultOnly: the inputs in Diff are differentiable only when the
	// op's result is a float tensor (Cast's "to", CastLike's input 1).
	FloatResultOnly bool
	// Roles gives the role of a parameter at input i (key ops.AllInputs:
	// at every input not listed); see ops.Def.
	Roles map[int]string
	// Shape infers the types of the outputs (nil: shapes.Default).
	Shape shapes.Rule
	// Grad is the gradient rule. An op with differentiable inputs and no
	// rule is refused on the path from the parameters to the loss
	// (ErrUnsupported).
	Grad GradRule
	// Doc is one line on the gradient, for docs/GRADIENTS.md's op table
	// (required with Grad).
	Doc string
	// fwd emits the node into the training graph in place of a copy.
	fwd fwdRule
}

// def is the part of o that graph/ops holds.
func (o Op) def() ops.Def {
	return ops.Def{Diff: o.Diff, FloatResultOnly: o.FloatResultOnly, Roles: o.Roles}
}

// GradRule returns the gradients of a node's inputs (nil where an input
// needs none) from its outputs' (see GradCtx).
type GradRule func(c *GradCtx) []*graph.Value

// fwdRule emits node n into the training graph in place of a copy and
// returns the node that stands for it (nil when none does).
type fwdRule func(b *builder, n *graph.Node, p *planned) *graph.Node

var (
	all  = []int{ops.AllInputs}
	in0  = []int{0}
	none = []int(nil)
	// weights is the role of every operand of MatMul and Einsum.
	weights = map[int]string{ops.AllInputs: ops.Weight}
	// norm is the roles of a normalization's scale and shift.
	norm = map[int]string{1: ops.NormScale, 2: ops.NormBias}
)

// builtin is the op table as this package defines it, keyed by the exact
// ai.onnx op_type; graph/ops's table is generated from it
// (TestOpsTableGenerated). Register adds to the live table, not to this.
var builtin map[string]Op

// table is the live op table: builtin and what Register added. It is
// replaced whole on each Register, so a Build running meanwhile sees the
// table before or after, never half of it.
var (
	table      atomic.Pointer[map[string]Op]
	registerMu sync.Mutex
)

func init() {
	builtin = map[string]Op{
		// Elementwise arithmetic (broadcasting).
		"Add":   {Diff: all, Shape: shapes.Arith, Grad: gradAdd, Doc: "U(dY) to each operand (U: sum over the broadcast axes)"},
		"Sub":   {Diff: all, Shape: shapes.Arith, Grad: gradSub, Doc: "U(dY), −U(dY)"},
		"Mul":   {Diff: all, Shape: shapes.Arith, Grad: gradMul, Doc: "U(dY·B), U(dY·A)"},
		"Div":   {Diff: all, Shape: shapes.Arith, Grad: gradDiv, Doc: "U(dY/B), U(−dY·Y/B)"},
		"Sum":   {Diff: all, Shape: shapes.Arith, Grad: gradSum, Doc: "U(dY) to each operand"},
		"Pow":   {Diff: in0, Shape: shapes.Arith, Grad: gradPow, Doc: "U(dY·E·x^(E−1)) (the exponent E is stop-gradient)"},
		"Neg":   {Diff: in0, Shape: shapes.NegAbsSign, Grad: gradNeg, Doc: "−dY"},
		"Max":   {Diff: all, Shape: shapes.Arith},
		"Min":   {Diff: all, Shape: shapes.Arith},
		"Mean":  {Diff: all, Shape: shapes.Arith},
		"Mod":   {Diff: all, Shape: shapes.Arith},
		"Abs":   {Diff: in0, Shape: shapes.NegAbsSign},
		"Sign":  {Diff: none, Shape: shapes.NegAbsSign},
		"PRelu": {Diff: all, Shape: shapes.Arith},

		// Activations and unary math.
		"Relu":            {Diff: in0, Shape: shapes.Unary, Grad: gradRelu, Doc: "dY·Ceil(Clip(y, 0, 1)): 1 where y > 0, subgradient 0 at 0 as PyTorch"},
		"LeakyRelu":       {Diff: in0, Shape: shapes.Unary, Grad: gradLeakyRelu, Doc: "Where(X > 0, dY, α·dY)"},
		"Sigmoid":         {Diff: in0, Shape: shapes.Unary, Grad: gradSigmoid, Doc: "dY·y(1−y)"},
		"Tanh":            {Diff: in0, Shape: shapes.Unary, Grad: gradTanh, Doc: "dY·(1−y²)"},
		"Erf":             {Diff: in0, Shape: shapes.Unary, Grad: gradErf, Doc: "dY·(2/√π)·exp(−x²)"},
		"Gelu":            {Diff: in0, Shape: shapes.Unary, Grad: gradGelu, Doc: "dY·(Φ(x) + x·φ(x)); the tanh approximation's derivative for approximate=\"tanh\""},
		"Sqrt":            {Diff: in0, Shape: shapes.Unary, Grad: gradSqrt, Doc: "dY·0.5/y"},
		"Reciprocal":      {Diff: in0, Shape: shapes.Unary, Grad: gradReciprocal, Doc: "−dY·y²"},
		"Exp":             {Diff: in0, Shape: shapes.Unary, Grad: gradExp, Doc: "dY·y"},
		"Log":             {Diff: in0, Shape: shapes.Unary, Grad: gradLog, Doc: "dY/x"},
		"Clip":            {Diff: in0, Shape: shapes.Unary, Grad: gradClip, Doc: "Where(min < x < max, dY, 0) (strict at the kinks, as PyTorch's hardtanh)"},
		"HardSigmoid":     {Diff: in0, Shape: shapes.Unary, Grad: gradHardSigmoid, Doc: "Where(0 < y < 1, α·dY, 0)"},
		"HardSwish":       {Diff: in0, Shape: shapes.Unary, Grad: gradHardSwish, Doc: "dY·Where(x < −3, 0, Where(x > 3, 1, x/3 + ½))"},
		"Softmax":         {Diff: in0, Shape: shapes.Unary, Grad: gradSoftmax, Doc: "y ⊙ (dY − ReduceSum(dY ⊙ y, axis))"},
		"LogSoftmax":      {Diff: in0, Shape: shapes.Unary, Grad: gradLogSoftmax, Doc: "dY − exp(y) ⊙ ReduceSum(dY, axis)"},
		"Elu":             {Diff: in0, Shape: shapes.Unary},
		"Selu":            {Diff: in0, Shape: shapes.Unary},
		"Celu":            {Diff: in0},
		"Softplus":        {Diff: in0, Shape: shapes.Unary},
		"Softsign":        {Diff: in0},
		"Mish":            {Diff: in0},
		"ThresholdedRelu": {Diff: in0},
		"Shrink":          {Diff: in0},
		"Sin":             {Diff: in0, Shape: shapes.Unary},
		"Cos":             {Diff: in0, Shape: shapes.Unary},
		"Tan":             {Diff: in0},
		"Asin":            {Diff: in0},
		"Acos":            {Diff: in0},
		"Atan":            {Diff: in0},
		"Sinh":            {Diff: in0},
		"Cosh":            {Diff: in0},
		"Asinh":           {Diff: in0},
		"Acosh":           {Diff: in0},
		"Atanh":           {Diff: in0},

		// Types, selection and dropout.
		"Identity": {Diff: in0, Shape: shapes.Identity, Grad: gradIdentity, Doc: "dY"},
		"Cast":     {Diff: in0, FloatResultOnly: true, Shape: shapes.Cast, Grad: gradCast, Doc: "Cast(dY, to = X's float type)"},
		"CastLike": {Diff: in0, FloatResultOnly: true, Shape: shapes.CastLike},
		"Dropout":  {Diff: in0, Shape: shapes.Dropout, Grad: gradDropout, Doc: "dY in inference mode; dY·mask/(1−ratio) with the forward's mask in training mode", fwd: fwdDropout},
		"Where":    {Diff: []int{1, 2}, Shape: shapes.Where, Grad: gradWhere, Doc: "U(Where(c, dY, 0)), U(Where(c, 0, dY)) (not the condition)"},

		// Dense, convolution and recurrent layers.
		"Gemm":          {Diff: []int{0, 1, 2}, Roles: map[int]string{2: ops.Bias, ops.AllInputs: ops.Weight}, Shape: shapes.Gemm, Grad: gradGemm, Doc: "dA = α·dY·B′ᵀ, dB = α·A′ᵀ·dY (transposed as transA/transB), dC = β·U(dY)"},
		"MatMul":        {Diff: []int{0, 1}, Roles: weights, Shape: shapes.MatMul, Grad: gradMatMul, Doc: "dA = U(dY·Bᵀ), dB = U(Aᵀ·dY), ᵀ swapping the last two axes"},
		"Conv":          {Diff: []int{0, 1, 2}, Roles: map[int]string{1: ops.Weight, 2: ops.Bias}, Shape: shapes.Window, Grad: gradConv, Doc: "dX = ConvTranspose-equivalent of dY with W, dW = correlation of X with dY, dB = Σ dY (forms: § Convolution)", fwd: fwdConv},
		"ConvTranspose": {Diff: []int{0, 1, 2}, Roles: map[int]string{1: ops.Weight, 2: ops.Bias}, Shape: shapes.Window, Grad: gradConvTranspose, Doc: "dX = Conv(dY, W, same attributes), dW from the Conv weight gradient with X and dY swapped, dB = Σ dY"},
		"Einsum":        {Diff: all, Roles: weights},
		"LSTM":          {Diff: []int{0, 1, 2, 3, 5, 6}, Roles: map[int]string{1: ops.Weight, 2: ops.Weight, 3: ops.Bias}},
		"GRU":           {Diff: []int{0, 1, 2, 3, 5}, Roles: map[int]string{1: ops.Weight, 2: ops.Weight, 3: ops.Bias}},
		"RNN":           {Diff: []int{0, 1, 2, 3, 5}, Roles: map[int]string{1: ops.Weight, 2: ops.Weight, 3: ops.Bias}},

		// Pooling.
		"MaxPool":           {Diff: in0, Shape: shapes.Window, Grad: gradMaxPool, Doc: "dY scattered to the forward's argmax positions (Indices output)", fwd: fwdMaxPool},
		"AveragePool":       {Diff: in0, Shape: shapes.Window, Grad: gradAveragePool, Doc: "dY/count spread over each window (count by count_include_pad)"},
		"LpPool":            {Diff: in0, Shape: shapes.Window},
		"GlobalAveragePool": {Diff: in0, Shape: shapes.GlobalPool, Grad: gradGlobalAveragePool, Doc: "Expand(dY, Shape(X)) / ∏spatial"},
		"GlobalMaxPool":     {Diff: in0, Shape: shapes.GlobalPool},
		"GlobalLpPool":      {Diff: in0, Shape: shapes.GlobalPool},

		// Normalization: X, scale, bias; never the running statistics.
		"BatchNormalization":        {Diff: []int{0, 1, 2}, Roles: norm, Shape: shapes.BatchNormalization, Grad: gradBatchNormalization, Doc: "training: dγ = Σ dY·x̂, dβ = Σ dY, dX = (γ/σ)(dY − mean(dY) − x̂·mean(dY·x̂)); inference: affine", fwd: fwdBatchNormalization},
		"LayerNormalization":        {Diff: []int{0, 1, 2}, Roles: norm, Shape: shapes.LayerNormalization, Grad: gradLayerNormalization, Doc: "dγ = U(dY·x̂), dβ = U(dY), dX = r·(h − mean(h) − x̂·mean(h·x̂)) with h = dY·γ", fwd: fwdLayerNormalization},
		"InstanceNormalization":     {Diff: []int{0, 1, 2}, Roles: norm},
		"GroupNormalization":        {Diff: []int{0, 1, 2}, Roles: norm},
		"RMSNormalization":          {Diff: []int{0, 1}, Roles: norm},
		"LpNormalization":           {Diff: in0},
		"MeanVarianceNormalization": {Diff: in0},
		"LRN":                       {Diff: in0, Shape: shapes.Unary},

		// Shape and indexing.
		"Flatten":         {Diff: in0, Shape: shapes.Flatten, Grad: gradReshape, Doc: "Reshape(dY, Shape(X))"},
		"Reshape":         {Diff: in0, Shape: shapes.Reshape, Grad: gradReshape, Doc: "Reshape(dY, Shape(X))"},
		"Squeeze":         {Diff: in0, Shape: shapes.Squeeze, Grad: gradReshape, Doc: "Reshape(dY, Shape(X))"},
		"Unsqueeze":       {Diff: in0, Shape: shapes.Squeeze, Grad: gradReshape, Doc: "Reshape(dY, Shape(X))"},
		"Transpose":       {Diff: in0, Shape: shapes.Transpose, Grad: gradTranspose, Doc: "Transpose(dY, inverse permutation)"},
		"Concat":          {Diff: all, Shape: shapes.Concat, Grad: gradConcat, Doc: "Split(dY, each input's size along the axis)"},
		"Split":           {Diff: in0, Shape: shapes.Split, Grad: gradSplit, Doc: "Concat of the outputs' gradients (zeros for an output without one)"},
		"Slice":           {Diff: in0, Shape: shapes.Slice, Grad: gradSlice, Doc: "Pad(dY, [starts, dims−ends]) for unit steps and static sizes; else the index form (§ Shape and indexing)"},
		"Gather":          {Diff: in0, Roles: map[int]string{0: ops.Embedding}, Shape: shapes.Gather, Grad: gradGather, Doc: "the index form: ScatterElements-add of dY into zeros (repeated indices add up)"},
		"Expand":          {Diff: in0, Shape: shapes.Expand, Grad: gradExpand, Doc: "U(dY) to X's shape"},
		"Pad":             {Diff: in0, Shape: shapes.Pad, Grad: gradPad, Doc: "Slice(dY) back to X (mode constant, pads ≥ 0)"},
		"Tile":            {Diff: in0},
		"GatherElements":  {Diff: in0, Roles: map[int]string{0: ops.Embedding}, Shape: shapes.GatherElements},
		"GatherND":        {Diff: in0, Roles: map[int]string{0: ops.Embedding}},
		"ScatterElements": {Diff: []int{0, 2}, Shape: shapes.Scatter},
		"ScatterND":       {Diff: []int{0, 2}, Shape: shapes.Scatter},
		"Scatter":         {Diff: []int{0, 2}, Shape: shapes.Scatter},
		"Resize":          {Diff: in0},
		"Upsample":        {Diff: in0},
		"DepthToSpace":    {Diff: in0},
		"SpaceToDepth":    {Diff: in0},
		"TopK":            {Diff: in0},
		"Compress":        {Diff: in0},
		"ReverseSequence": {Diff: in0},
		"Trilu":           {Diff: in0},
		"CumSum":          {Diff: in0},
		"CenterCropPad":   {Diff: in0},
		"Col2Im":          {Diff: in0},
		"AffineGrid":      {Diff: in0},
		"GridSample":      {Diff: []int{0, 1}},

		// Reductions.
		"ReduceSum":       {Diff: in0, Shape: shapes.Reduce, Grad: gradReduce, Doc: "Expand(dY at the reduced axes, Shape(X))"},
		"ReduceMean":      {Diff: in0, Shape: shapes.Reduce, Grad: gradReduce, Doc: "Expand(dY at the reduced axes, Shape(X)) / the reduced count"},
		"ReduceMax":       {Diff: in0, Shape: shapes.Reduce},
		"ReduceMin":       {Diff: in0, Shape: shapes.Reduce},
		"ReduceProd":      {Diff: in0, Shape: shapes.Reduce},
		"ReduceL1":        {Diff: in0, Shape: shapes.Reduce},
		"ReduceL2":        {Diff: in0, Shape: shapes.Reduce},
		"ReduceSumSquare": {Diff: in0, Shape: shapes.Reduce},
		"ReduceLogSum":    {Diff: in0, Shape: shapes.Reduce},
		"ReduceLogSumExp": {Diff: in0, Shape: shapes.Reduce},

		// No differentiable input: constants, shapes, integer or boolean results,
		// piecewise-constant functions and random generators. autodiff accepts
		// them on the path and sends them nothing.
		"ArgMax":            {Diff: none, Shape: shapes.Reduce},
		"ArgMin":            {Diff: none, Shape: shapes.Reduce},
		"Equal":             {Diff: none, Shape: shapes.Compare},
		"Less":              {Diff: none, Shape: shapes.Compare},
		"Greater":           {Diff: none, Shape: shapes.Compare},
		"LessOrEqual":       {Diff: none, Shape: shapes.Compare},
		"GreaterOrEqual":    {Diff: none, Shape: shapes.Compare},
		"And":               {Diff: none, Shape: shapes.Compare},
		"Or":                {Diff: none, Shape: shapes.Compare},
		"Xor":               {Diff: none, Shape: shapes.Compare},
		"Not":               {Diff: none, Shape: shapes.Not},
		"Floor":             {Diff: none, Shape: shapes.Unary},
		"Ceil":              {Diff: none, Shape: shapes.Unary},
		"Round":             {Diff: none, Shape: shapes.Unary},
		"Shape":             {Diff: none, Shape: shapes.Shape},
		"Size":              {Diff: none, Shape: shapes.Size},
		"ConstantOfShape":   {Diff: none, Shape: shapes.ConstantOfShape},
		"Constant":          {Diff: none, Shape: shapes.Constant},
		"Range":             {Diff: none, Shape: shapes.Range},
		"NonZero":           {Diff: none, Shape: shapes.NonZero},
		"RandomUniform":     {Diff: none},
		"RandomNormal":      {Diff: none},
		"RandomUniformLike": {Diff: none},
		"RandomNormalLike":  {Diff: none},
	}
	t := maps.Clone(builtin)
	table.Store(&t)
}

// lookup returns op's entry in the live table.
func lookup(op string) (Op, bool) {
	o, ok := (*table.Load())[op]
	return o, ok
}

var opName = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)

// Register adds an op to the table, or a gradient rule to an op the table
// lists without one, so that graph's parameter analysis (through
// graph/ops), shape inference and the gradient pass all see it: the one
// place an op is defined. A new op's Diff and Roles go to graph/ops; an op
// already listed must keep them (nil Shape keeps its shape rule). It
// refuses a name that is not an ai.onnx op type, an op that already has a
// gradient rule, a Grad without differentiable inputs or without Doc, and
// input indexes below ops.AllInputs. Call it before building graphs with
// the op, from an init function say.
func Register(name string, o Op) error {
	if !opName.MatchString(name) {
		return fmt.Errorf("autodiff: Register: %q is not an op type", name)
	}
	for _, i := range o.Diff {
		if i < ops.AllInputs {
			return fmt.Errorf("autodiff: Register %s: input index %d in Diff", name, i)
		}
	}
	if o.Grad != nil && (len(o.Diff) == 0 || o.Doc == "") {
		return fmt.Errorf("autodiff: Register %s: a gradient rule needs differentiable inputs (Diff) and a Doc line", name)
	}
	registerMu.Lock()
	defer registerMu.Unlock()
	old, listed := lookup(name)
	if listed {
		if old.Grad != nil {
			return fmt.Errorf("autodiff: Register %s: the op already has a gradient rule", name)
		}
		if !slices.Equal(old.Diff, o.Diff) || old.FloatResultOnly != o.FloatResultOnly || !maps.Equal(old.Roles, o.Roles) {
			return fmt.Errorf("autodiff: Register %s: Diff, FloatResultOnly and Roles must stay as the table lists them (%v)", name, old.def())
		}
		if o.Shape == nil {
			o.Shape = old.Shape
		}
		o.fwd = old.fwd
	} else if err := ops.Register(name, o.def()); err != nil {
		return fmt.Errorf("autodiff: Register %s: %w", name, err)
	}
	cur := *table.Load()
	next := maps.Clone(cur)
	next[name] = o
	table.Store(&next)
	return nil
}

// supported reports whether autodiff accepts op on the path from the
// parameters to the loss: it has a gradient rule, or the table lists it
// with no differentiable input.
func supported(op string) bool {
	o, ok := lookup(op)
	return ok && (o.Grad != nil || len(o.Diff) == 0)
}

// differentiable reports whether input i of n carries gradient: n has a
// rule and graph/ops marks the input differentiable (Cast only to a float
// type).
func differentiable(n *graph.Node, i int) bool {
	o, _ := lookup(n.OpType)
	return o.Grad != nil && graph.IsDifferentiableInput(n, i)
}

// Supported returns the op types autodiff accepts (sorted): ops with a
// gradient rule and ops that pass no gradient (Shape, Constant, …).
func Supported() []string {
	var out []string
	for op := range *table.Load() {
		if supported(op) {
			out = append(out, op)
		}
	}
	sort.Strings(out)
	return out
}

// gradOps lists the op types that have a gradient rule.
func gradOps() []string {
	var out []string
	for k, o := range *table.Load() {
		if o.Grad != nil {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
