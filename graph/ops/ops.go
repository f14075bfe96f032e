package ops

import "sort"

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

// Lookup returns the definition of a default-domain op.
func Lookup(op string) (Def, bool) {
	d, ok := table[op]
	return d, ok
}

// Known returns the listed op types, sorted.
func Known() []string {
	out := make([]string, 0, len(table))
	for k := range table {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var (
	all  = []int{AllInputs}
	in0  = []int{0}
	none = []int(nil)
)

// weights is the role of every operand of MatMul and Einsum.
var weights = map[int]string{AllInputs: Weight}

// norm is the roles of a normalization's scale and shift.
var norm = map[int]string{1: NormScale, 2: NormBias}

var table = map[string]Def{
	// Layers.
	"Conv":          {Diff: []int{0, 1, 2}, Roles: map[int]string{1: Weight, 2: Bias}},
	"ConvTranspose": {Diff: []int{0, 1, 2}, Roles: map[int]string{1: Weight, 2: Bias}},
	"Gemm":          {Diff: []int{0, 1, 2}, Roles: map[int]string{2: Bias, AllInputs: Weight}},
	"MatMul":        {Diff: []int{0, 1}, Roles: weights},
	"Einsum":        {Diff: all, Roles: weights},
	"LSTM":          {Diff: []int{0, 1, 2, 3, 5, 6}, Roles: map[int]string{1: Weight, 2: Weight, 3: Bias}},
	"GRU":           {Diff: []int{0, 1, 2, 3, 5}, Roles: map[int]string{1: Weight, 2: Weight, 3: Bias}},
	"RNN":           {Diff: []int{0, 1, 2, 3, 5}, Roles: map[int]string{1: Weight, 2: Weight, 3: Bias}},

	// Normalization: X, scale, bias; never the running statistics.
	"BatchNormalization":        {Diff: []int{0, 1, 2}, Roles: norm},
	"LayerNormalization":        {Diff: []int{0, 1, 2}, Roles: norm},
	"InstanceNormalization":     {Diff: []int{0, 1, 2}, Roles: norm},
	"GroupNormalization":        {Diff: []int{0, 1, 2}, Roles: norm},
	"RMSNormalization":          {Diff: []int{0, 1}, Roles: norm},
	"LpNormalization":           {Diff: in0},
	"MeanVarianceNormalization": {Diff: in0},
	"LRN":                       {Diff: in0},

	// Elementwise with several differentiable operands.
	"Add": {Diff: all}, "Sub": {Diff: all}, "Mul": {Diff: all}, "Div": {Diff: all},
	"Sum": {Diff: all}, "Mean": {Diff: all}, "Max": {Diff: all}, "Min": {Diff: all},
	"PRelu": {Diff: all}, "Concat": {Diff: all},
	"Where":           {Diff: []int{1, 2}},
	"ScatterND":       {Diff: []int{0, 2}},
	"ScatterElements": {Diff: []int{0, 2}},
	"Scatter":         {Diff: []int{0, 2}},
	"GridSample":      {Diff: []int{0, 1}},

	// Differentiable in the data input only.
	"Pow": {Diff: in0}, "Clip": {Diff: in0}, "Pad": {Diff: in0}, "Reshape": {Diff: in0},
	"Expand": {Diff: in0}, "Slice": {Diff: in0}, "Tile": {Diff: in0}, "Split": {Diff: in0},
	"Gather":         {Diff: in0, Roles: map[int]string{0: Embedding}},
	"GatherElements": {Diff: in0, Roles: map[int]string{0: Embedding}},
	"GatherND":       {Diff: in0, Roles: map[int]string{0: Embedding}},
	"Squeeze":        {Diff: in0}, "Unsqueeze": {Diff: in0}, "Flatten": {Diff: in0}, "Transpose": {Diff: in0},
	"Identity": {Diff: in0},
	"Cast":     {Diff: in0, FloatResultOnly: true}, "CastLike": {Diff: in0, FloatResultOnly: true},
	"Dropout": {Diff: in0}, "Resize": {Diff: in0}, "Upsample": {Diff: in0},
	"DepthToSpace": {Diff: in0}, "SpaceToDepth": {Diff: in0}, "TopK": {Diff: in0}, "Compress": {Diff: in0},
	"ReverseSequence": {Diff: in0}, "Trilu": {Diff: in0}, "CumSum": {Diff: in0}, "CenterCropPad": {Diff: in0},
	"Col2Im": {Diff: in0}, "AffineGrid": {Diff: in0},

	// Activations and unary math.
	"Relu": {Diff: in0}, "LeakyRelu": {Diff: in0}, "Elu": {Diff: in0}, "Selu": {Diff: in0},
	"Celu": {Diff: in0}, "Gelu": {Diff: in0}, "Sigmoid": {Diff: in0}, "HardSigmoid": {Diff: in0},
	"HardSwish": {Diff: in0}, "Tanh": {Diff: in0}, "Softplus": {Diff: in0}, "Softsign": {Diff: in0},
	"Mish": {Diff: in0}, "ThresholdedRelu": {Diff: in0}, "Shrink": {Diff: in0},
	"Softmax": {Diff: in0}, "LogSoftmax": {Diff: in0},
	"Abs": {Diff: in0}, "Neg": {Diff: in0}, "Exp": {Diff: in0}, "Log": {Diff: in0},
	"Sqrt": {Diff: in0}, "Reciprocal": {Diff: in0}, "Erf": {Diff: in0},
	"Sin": {Diff: in0}, "Cos": {Diff: in0}, "Tan": {Diff: in0}, "Asin": {Diff: in0},
	"Acos": {Diff: in0}, "Atan": {Diff: in0}, "Sinh": {Diff: in0}, "Cosh": {Diff: in0},
	"Asinh": {Diff: in0}, "Acosh": {Diff: in0}, "Atanh": {Diff: in0},

	// Pooling and reductions.
	"MaxPool": {Diff: in0}, "AveragePool": {Diff: in0}, "LpPool": {Diff: in0},
	"GlobalAveragePool": {Diff: in0}, "GlobalMaxPool": {Diff: in0}, "GlobalLpPool": {Diff: in0},
	"ReduceSum": {Diff: in0}, "ReduceMean": {Diff: in0}, "ReduceMax": {Diff: in0},
	"ReduceMin": {Diff: in0}, "ReduceProd": {Diff: in0}, "ReduceL1": {Diff: in0},
	"ReduceL2": {Diff: in0}, "ReduceLogSum": {Diff: in0}, "ReduceLogSumExp": {Diff: in0},
	"ReduceSumSquare": {Diff: in0},

	// No differentiable input: constants, shapes, integer or boolean results,
	// piecewise-constant functions and random generators. autodiff accepts
	// them on the path and sends them nothing.
	"Constant": {Diff: none}, "ConstantOfShape": {Diff: none}, "Shape": {Diff: none},
	"Size": {Diff: none}, "Range": {Diff: none}, "NonZero": {Diff: none},
	"Equal": {Diff: none}, "Less": {Diff: none}, "Greater": {Diff: none},
	"LessOrEqual": {Diff: none}, "GreaterOrEqual": {Diff: none},
	"Not": {Diff: none}, "And": {Diff: none}, "Or": {Diff: none}, "Xor": {Diff: none},
	"ArgMax": {Diff: none}, "ArgMin": {Diff: none},
	"Floor": {Diff: none}, "Ceil": {Diff: none}, "Round": {Diff: none}, "Sign": {Diff: none},
	"RandomUniform": {Diff: none}, "RandomNormal": {Diff: none},
	"RandomUniformLike": {Diff: none}, "RandomNormalLike": {Diff: none},
}
