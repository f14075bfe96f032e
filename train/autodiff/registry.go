package autodiff

import (
	"sort"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/ops"
)

// opDef is one op's entry in the registry: what the op is (ops.Def, from
// graph/ops: its differentiable inputs, the table graph's analysis reads) and
// how autodiff handles it: the rule that infers its output types, its
// gradient rule and an optional forward lowering that replaces the plain
// copy of the node.
type opDef struct {
	ops.Def           // filled in from graph/ops, never written here
	shape   shapeRule // nil: shapeDefault
	grad    gradRule  // nil: no gradient rule
	fwd     fwdRule   // nil: the node is copied
}

// gradRule returns the gradients of a node's inputs (nil where an input
// needs none) from its outputs' (see ctx).
type gradRule func(c *ctx) []*graph.Value

// fwdRule emits node n into the training graph in place of a copy and
// returns the node that stands for it (nil when none does).
type fwdRule func(b *builder, n *graph.Node, p *planned) *graph.Node

// registry is the op registry, keyed by the exact ai.onnx op_type.
var registry map[string]opDef

func init() {
	registry = map[string]opDef{
		// Elementwise arithmetic (broadcasting).
		"Add":  {shape: shapeArith, grad: gradAdd},
		"Sub":  {shape: shapeArith, grad: gradSub},
		"Mul":  {shape: shapeArith, grad: gradMul},
		"Div":  {shape: shapeArith, grad: gradDiv},
		"Sum":  {shape: shapeArith, grad: gradSum},
		"Pow":  {shape: shapeArith, grad: gradPow},
		"Neg":  {shape: shapeNegAbsSign, grad: gradNeg},
		"Max":  {shape: shapeArith},
		"Min":  {shape: shapeArith},
		"Mean": {shape: shapeArith},
		"Mod":  {shape: shapeArith},
		"Abs":  {shape: shapeNegAbsSign},
		"Sign": {shape: shapeNegAbsSign},

		// Activations and unary math.
		"Relu":        {shape: shapeSame, grad: gradRelu},
		"LeakyRelu":   {shape: shapeSame, grad: gradLeakyRelu},
		"PRelu":       {shape: shapeArith},
		"Sigmoid":     {shape: shapeSame, grad: gradSigmoid},
		"Tanh":        {shape: shapeSame, grad: gradTanh},
		"Erf":         {shape: shapeSame, grad: gradErf},
		"Gelu":        {shape: shapeSame, grad: gradGelu},
		"Sqrt":        {shape: shapeSame, grad: gradSqrt},
		"Reciprocal":  {shape: shapeSame, grad: gradReciprocal},
		"Exp":         {shape: shapeSame, grad: gradExp},
		"Log":         {shape: shapeSame, grad: gradLog},
		"Clip":        {shape: shapeSame, grad: gradClip},
		"HardSigmoid": {shape: shapeSame, grad: gradHardSigmoid},
		"HardSwish":   {shape: shapeSame, grad: gradHardSwish},
		"Softmax":     {shape: shapeSame, grad: gradSoftmax},
		"LogSoftmax":  {shape: shapeSame, grad: gradLogSoftmax},
		"Elu":         {shape: shapeSame},
		"Selu":        {shape: shapeSame},
		"Softplus":    {shape: shapeSame},
		"Sin":         {shape: shapeSame},
		"Cos":         {shape: shapeSame},
		"LRN":         {shape: shapeSame},
		"Floor":       {shape: shapeSame},
		"Ceil":        {shape: shapeSame},
		"Round":       {shape: shapeSame},
		"Identity":    {shape: shapeIdentity, grad: gradIdentity},
		"Cast":        {shape: shapeCast, grad: gradCast},
		"CastLike":    {shape: shapeCastLike},
		"Dropout":     {shape: shapeDropout, grad: gradDropout, fwd: fwdDropout},
		"Where":       {shape: shapeWhere, grad: gradWhere},

		// Dense and convolution.
		"Gemm":          {shape: shapeGemm, grad: gradGemm},
		"MatMul":        {shape: shapeMatMul, grad: gradMatMul},
		"Conv":          {shape: shapeWindow, grad: gradConv, fwd: fwdConv},
		"ConvTranspose": {shape: shapeWindow, grad: gradConvTranspose},

		// Pooling.
		"MaxPool":           {shape: shapeWindow, grad: gradMaxPool, fwd: fwdMaxPool},
		"AveragePool":       {shape: shapeWindow, grad: gradAveragePool},
		"LpPool":            {shape: shapeWindow},
		"GlobalAveragePool": {shape: shapeGlobalPool, grad: gradGlobalAveragePool},
		"GlobalMaxPool":     {shape: shapeGlobalPool},
		"GlobalLpPool":      {shape: shapeGlobalPool},

		// Normalization.
		"BatchNormalization": {shape: shapeBatchNormalization, grad: gradBatchNormalization, fwd: fwdBatchNormalization},
		"LayerNormalization": {shape: shapeLayerNormalization, grad: gradLayerNormalization, fwd: fwdLayerNormalization},

		// Shape and indexing.
		"Flatten":         {shape: shapeFlatten, grad: gradReshape},
		"Reshape":         {shape: shapeReshape, grad: gradReshape},
		"Squeeze":         {shape: shapeSqueeze, grad: gradReshape},
		"Unsqueeze":       {shape: shapeSqueeze, grad: gradReshape},
		"Transpose":       {shape: shapeTranspose, grad: gradTranspose},
		"Concat":          {shape: shapeConcat, grad: gradConcat},
		"Split":           {shape: shapeSplit, grad: gradSplit},
		"Slice":           {shape: shapeSlice, grad: gradSlice},
		"Gather":          {shape: shapeGather, grad: gradGather},
		"Expand":          {shape: shapeExpand, grad: gradExpand},
		"Pad":             {shape: shapePad, grad: gradPad},
		"GatherElements":  {shape: shapeGatherElements},
		"ScatterElements": {shape: shapeScatter},
		"ScatterND":       {shape: shapeScatter},
		"Scatter":         {shape: shapeScatter},

		// Reductions.
		"ReduceSum":       {shape: shapeReduce, grad: gradReduce},
		"ReduceMean":      {shape: shapeReduce, grad: gradReduce},
		"ReduceMax":       {shape: shapeReduce},
		"ReduceMin":       {shape: shapeReduce},
		"ReduceProd":      {shape: shapeReduce},
		"ReduceL1":        {shape: shapeReduce},
		"ReduceL2":        {shape: shapeReduce},
		"ReduceSumSquare": {shape: shapeReduce},
		"ReduceLogSum":    {shape: shapeReduce},
		"ReduceLogSumExp": {shape: shapeReduce},

		// No differentiable input (graph/ops): autodiff sends them nothing.
		"ArgMax":          {shape: shapeReduce},
		"ArgMin":          {shape: shapeReduce},
		"Equal":           {shape: shapeCompare},
		"Less":            {shape: shapeCompare},
		"Greater":         {shape: shapeCompare},
		"LessOrEqual":     {shape: shapeCompare},
		"GreaterOrEqual":  {shape: shapeCompare},
		"And":             {shape: shapeCompare},
		"Or":              {shape: shapeCompare},
		"Xor":             {shape: shapeCompare},
		"Not":             {shape: shapeNot},
		"Shape":           {shape: shapeShape},
		"Size":            {shape: shapeSize},
		"ConstantOfShape": {shape: shapeConstantOfShape},
		"Constant":        {shape: shapeConstant},
		"Range":           {shape: shapeRange},
		"NonZero":         {shape: shapeNonZero},
	}
	for op, d := range registry {
		d.Def, _ = ops.Lookup(op)
		registry[op] = d
	}
}

// noGradRule lists the ops that graph/ops marks differentiable and that have
// no gradient rule yet. A model with one of them on the path from its
// parameters to the loss is refused (ErrUnsupported), while graph's analysis
// still counts the initializers they consume as parameters. TestRegistry
// keeps the list equal to what the two tables say.
var noGradRule = []string{
	"Abs", "Acos", "Acosh", "AffineGrid", "Asin", "Asinh", "Atan", "Atanh",
	"CastLike", "Celu", "CenterCropPad", "Col2Im", "Compress", "Cos", "Cosh",
	"CumSum", "DepthToSpace", "Einsum", "Elu", "GRU", "GatherElements",
	"GatherND", "GlobalLpPool", "GlobalMaxPool", "GridSample",
	"GroupNormalization", "InstanceNormalization", "LRN", "LSTM", "LpNormalization",
	"LpPool", "Max", "Mean", "MeanVarianceNormalization", "Min", "Mish", "PRelu",
	"RMSNormalization", "RNN", "ReduceL1", "ReduceL2", "ReduceLogSum",
	"ReduceLogSumExp", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare",
	"Resize", "ReverseSequence", "Scatter", "ScatterElements", "ScatterND", "Selu",
	"Shrink", "Sin", "Sinh", "Softplus", "Softsign", "SpaceToDepth", "Tan",
	"ThresholdedRelu", "Tile", "TopK", "Trilu", "Upsample",
}

// supported reports whether autodiff accepts op on the path from the
// parameters to the loss: it has a gradient rule, or graph/ops lists it with
// no differentiable input.
func supported(op string) bool {
	if registry[op].grad != nil {
		return true
	}
	d, ok := ops.Lookup(op)
	return ok && len(d.Diff) == 0
}

// differentiable reports whether input i of n carries gradient: n has a
// rule and graph/ops marks the input differentiable (Cast only to a float
// type).
func differentiable(n *graph.Node, i int) bool {
	return registry[n.OpType].grad != nil && graph.IsDifferentiableInput(n, i)
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
	for op, d := range registry {
		if _, listed := ops.Lookup(op); !listed && d.grad != nil {
			out = append(out, op)
		}
	}
	sort.Strings(out)
	return out
}

// gradOps lists the op types that have a gradient rule.
func gradOps() []string {
	var out []string
	for k, r := range registry {
		if r.grad != nil {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
