package ops

// The op table: one entry per ai.onnx op the tool knows. A new op is one
// entry here (plus its case in ops_test.go); its gradient rule, where it
// has one, is registered by name in train/autodiff.

var (
	all  = []int{AllInputs}
	in0  = []int{0}
	none = []int(nil)
	// conv is the roles of Conv's and ConvTranspose's W and B.
	conv = map[int]string{1: Weight, 2: Bias}
	// gemm is the roles of Gemm's operands: C a bias, A and B weights.
	gemm = map[int]string{2: Bias, AllInputs: Weight}
	// weights is the role of every operand of MatMul and Einsum.
	weights = map[int]string{AllInputs: Weight}
	// norm is the roles of a normalization's scale and shift.
	norm = map[int]string{1: NormScale, 2: NormBias}
	// recurrent is the roles of LSTM's, GRU's and RNN's W, R and B.
	recurrent = map[int]string{1: Weight, 2: Weight, 3: Bias}
)

// builtin is the table as the tool ships it, keyed by the exact ai.onnx
// op_type. Register adds to the live table, not to this.
var builtin = map[string]Def{
	// Elementwise arithmetic (broadcasting).
	"Add":   {Diff: all, Shape: "Arith"},
	"Sub":   {Diff: all, Shape: "Arith"},
	"Mul":   {Diff: all, Shape: "Arith"},
	"Div":   {Diff: all, Shape: "Arith"},
	"Sum":   {Diff: all, Shape: "Arith"},
	"Pow":   {Diff: in0, Shape: "Arith"},
	"Neg":   {Diff: in0, Shape: "NegAbsSign"},
	"Max":   {Diff: all, Shape: "Arith"},
	"Min":   {Diff: all, Shape: "Arith"},
	"Mean":  {Diff: all, Shape: "Arith"},
	"Mod":   {Diff: all, Shape: "Arith"},
	"Abs":   {Diff: in0, Shape: "NegAbsSign"},
	"Sign":  {Diff: none, Shape: "NegAbsSign"},
	"PRelu": {Diff: all, Shape: "Arith"},

	// Activations and unary math.
	"Relu":            {Diff: in0, Shape: "Unary"},
	"LeakyRelu":       {Diff: in0, Shape: "Unary"},
	"Sigmoid":         {Diff: in0, Shape: "Unary"},
	"Tanh":            {Diff: in0, Shape: "Unary"},
	"Erf":             {Diff: in0, Shape: "Unary"},
	"Gelu":            {Diff: in0, Shape: "Unary"},
	"Sqrt":            {Diff: in0, Shape: "Unary"},
	"Reciprocal":      {Diff: in0, Shape: "Unary"},
	"Exp":             {Diff: in0, Shape: "Unary"},
	"Log":             {Diff: in0, Shape: "Unary"},
	"Clip":            {Diff: in0, Shape: "Unary"},
	"HardSigmoid":     {Diff: in0, Shape: "Unary"},
	"HardSwish":       {Diff: in0, Shape: "Unary"},
	"Softmax":         {Diff: in0, Shape: "Unary"},
	"LogSoftmax":      {Diff: in0, Shape: "Unary"},
	"Elu":             {Diff: in0, Shape: "Unary"},
	"Selu":            {Diff: in0, Shape: "Unary"},
	"Celu":            {Diff: in0},
	"Softplus":        {Diff: in0, Shape: "Unary"},
	"Softsign":        {Diff: in0},
	"Mish":            {Diff: in0},
	"ThresholdedRelu": {Diff: in0},
	"Shrink":          {Diff: in0},
	"Sin":             {Diff: in0, Shape: "Unary"},
	"Cos":             {Diff: in0, Shape: "Unary"},
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
	"Identity": {Diff: in0, Shape: "Identity"},
	"Cast":     {Diff: in0, FloatResultOnly: true, Shape: "Cast"},
	"CastLike": {Diff: in0, FloatResultOnly: true, Shape: "CastLike"},
	"Dropout":  {Diff: in0, Shape: "Dropout"},
	"Where":    {Diff: []int{1, 2}, Shape: "Where"},

	// Dense, convolution and recurrent layers.
	"Gemm":          {Kind: KindGemm, Diff: []int{0, 1, 2}, Roles: gemm, Shape: "Gemm"},
	"MatMul":        {Kind: KindMatMul, Diff: []int{0, 1}, Roles: weights, Shape: "MatMul"},
	"Conv":          {Kind: KindConv, Diff: []int{0, 1, 2}, Roles: conv, Shape: "Window"},
	"ConvTranspose": {Kind: KindConvTranspose, Diff: []int{0, 1, 2}, Roles: conv, Shape: "Window"},
	"Einsum":        {Diff: all, Roles: weights},
	"LSTM":          {Diff: []int{0, 1, 2, 3, 5, 6}, Roles: recurrent},
	"GRU":           {Diff: []int{0, 1, 2, 3, 5}, Roles: recurrent},
	"RNN":           {Diff: []int{0, 1, 2, 3, 5}, Roles: recurrent},

	// Pooling.
	"MaxPool":           {Diff: in0, Shape: "Window"},
	"AveragePool":       {Diff: in0, Shape: "Window"},
	"LpPool":            {Diff: in0, Shape: "Window"},
	"GlobalAveragePool": {Diff: in0, Shape: "GlobalPool"},
	"GlobalMaxPool":     {Diff: in0, Shape: "GlobalPool"},
	"GlobalLpPool":      {Diff: in0, Shape: "GlobalPool"},

	// Normalization: X, scale, bias; never the running statistics.
	"BatchNormalization":        {Kind: KindChannelNorm, Diff: []int{0, 1, 2}, Roles: norm, Shape: "BatchNormalization"},
	"LayerNormalization":        {Kind: KindTrailingNorm, Diff: []int{0, 1, 2}, Roles: norm, Shape: "LayerNormalization"},
	"InstanceNormalization":     {Kind: KindChannelNorm, Diff: []int{0, 1, 2}, Roles: norm},
	"GroupNormalization":        {Kind: KindGroupNorm, Diff: []int{0, 1, 2}, Roles: norm},
	"RMSNormalization":          {Kind: KindTrailingNorm, Diff: []int{0, 1}, Roles: norm},
	"LpNormalization":           {Diff: in0},
	"MeanVarianceNormalization": {Diff: in0},
	"LRN":                       {Diff: in0, Shape: "Unary"},

	// Shape and indexing.
	"Flatten":         {Diff: in0, Shape: "Flatten"},
	"Reshape":         {Diff: in0, Shape: "Reshape"},
	"Squeeze":         {Diff: in0, Shape: "Squeeze"},
	"Unsqueeze":       {Diff: in0, Shape: "Squeeze"},
	"Transpose":       {Diff: in0, Shape: "Transpose"},
	"Concat":          {Diff: all, Shape: "Concat"},
	"Split":           {Diff: in0, Shape: "Split"},
	"Slice":           {Diff: in0, Shape: "Slice"},
	"Gather":          {Diff: in0, Roles: map[int]string{0: Embedding}, Shape: "Gather"},
	"Expand":          {Diff: in0, Shape: "Expand"},
	"Pad":             {Diff: in0, Shape: "Pad"},
	"Tile":            {Diff: in0},
	"GatherElements":  {Diff: in0, Roles: map[int]string{0: Embedding}, Shape: "GatherElements"},
	"GatherND":        {Diff: in0, Roles: map[int]string{0: Embedding}},
	"ScatterElements": {Diff: []int{0, 2}, Shape: "Scatter"},
	"ScatterND":       {Diff: []int{0, 2}, Shape: "Scatter"},
	"Scatter":         {Diff: []int{0, 2}, Shape: "Scatter"},
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
	"ReduceSum":       {Diff: in0, Shape: "Reduce"},
	"ReduceMean":      {Diff: in0, Shape: "Reduce"},
	"ReduceMax":       {Diff: in0, Shape: "Reduce"},
	"ReduceMin":       {Diff: in0, Shape: "Reduce"},
	"ReduceProd":      {Diff: in0, Shape: "Reduce"},
	"ReduceL1":        {Diff: in0, Shape: "Reduce"},
	"ReduceL2":        {Diff: in0, Shape: "Reduce"},
	"ReduceSumSquare": {Diff: in0, Shape: "Reduce"},
	"ReduceLogSum":    {Diff: in0, Shape: "Reduce"},
	"ReduceLogSumExp": {Diff: in0, Shape: "Reduce"},

	// No differentiable input: constants, shapes, integer or boolean results,
	// piecewise-constant functions and random generators. autodiff accepts
	// them on the path and sends them nothing.
	"ArgMax":            {Diff: none, Shape: "Reduce"},
	"ArgMin":            {Diff: none, Shape: "Reduce"},
	"Equal":             {Diff: none, Shape: "Compare"},
	"Less":              {Diff: none, Shape: "Compare"},
	"Greater":           {Diff: none, Shape: "Compare"},
	"LessOrEqual":       {Diff: none, Shape: "Compare"},
	"GreaterOrEqual":    {Diff: none, Shape: "Compare"},
	"And":               {Diff: none, Shape: "Compare"},
	"Or":                {Diff: none, Shape: "Compare"},
	"Xor":               {Diff: none, Shape: "Compare"},
	"Not":               {Diff: none, Shape: "Not"},
	"Floor":             {Diff: none, Shape: "Unary"},
	"Ceil":              {Diff: none, Shape: "Unary"},
	"Round":             {Diff: none, Shape: "Unary"},
	"Shape":             {Diff: none, Shape: "Shape"},
	"Size":              {Diff: none, Shape: "Size"},
	"ConstantOfShape":   {Diff: none, Shape: "ConstantOfShape"},
	"Constant":          {Diff: none, Shape: "Constant"},
	"Range":             {Diff: none, Shape: "Range"},
	"NonZero":           {Diff: none, Shape: "NonZero"},
	"RandomUniform":     {Diff: none},
	"RandomNormal":      {Diff: none},
	"RandomUniformLike": {Diff: none},
	"RandomNormalLike":  {Diff: none},
}
