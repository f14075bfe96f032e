package autodiff

import (
	"math"
	"slices"

	"github.com/unlearn-tool/unlearn/graph"
)

// Static type inference for the ops the training graph contains. Shapes are
// []int64 with known sizes ≥ 0 and symbolic sizes ≤ symBase (each symbol a
// distinct unknown size; the batch dimension is one). A nil shape is an
// unknown rank. Small integer tensors also carry their values (which may
// contain symbols: Shape of a [batch, 17, 64] tensor is [sym, 17, 64]), so
// that Reshape targets built from Shape/Gather/Concat chains, as PyTorch
// exports them, resolve.

const symBase = -(int64(1) << 40)

func isSym(d int64) bool { return d <= symBase }

// maxVals bounds the size of tensors whose values are tracked.
const maxVals = 4096

type tinfo struct {
	dt    graph.DType
	shape []int64
	ival  []int64   // values of a small integer tensor, or nil
	fval  []float64 // values of a small float tensor, or nil
}

func allKnown(s []int64) bool {
	for _, d := range s {
		if d < 0 {
			return false
		}
	}
	return true
}

func equalShape(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func prod(s []int64) int64 {
	p := int64(1)
	for _, d := range s {
		p *= d
	}
	return p
}

func infoOfTensor(t *graph.Tensor) *tinfo {
	ti := &tinfo{dt: t.DType, shape: append([]int64{}, t.Shape...)}
	if t.Len() <= maxVals {
		switch {
		case t.DType.IsFloat():
			ti.fval = floatValues(t)
		case t.DType != graph.String:
			if v, err := t.Int64s(); err == nil {
				ti.ival = v
			}
		}
	}
	return ti
}

func floatValues(t *graph.Tensor) []float64 {
	n := int(t.Len())
	if t.Check() != nil {
		return nil
	}
	out := make([]float64, n)
	switch t.DType {
	case graph.Float:
		for i := range out {
			out[i] = float64(math.Float32frombits(leU32(t.Raw[4*i:])))
		}
	case graph.Double:
		for i := range out {
			out[i] = math.Float64frombits(leU64(t.Raw[8*i:]))
		}
	default:
		return nil
	}
	return out
}

func leU32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
func leU64(b []byte) uint64 { return uint64(leU32(b)) | uint64(leU32(b[4:]))<<32 }

func (b *builder) sym() int64 {
	b.nsym++
	return symBase - b.nsym
}

// annotate writes v's inferred type into the graph's value_info (a
// symbolic dimension under its dim_param where it has one), for ONNX
// Runtime's optimizer, whose fusions need shapes it cannot always infer.
// Values that already have a type, graph inputs and initializers are left
// alone.
func (b *builder) annotate(v *graph.Value) {
	t := b.ti(v)
	if v.Type != nil || v.Init != nil || t == nil || t.shape == nil || b.g.IsInput(v) {
		return
	}
	params := map[int64]string{}
	for p, s := range b.syms {
		params[s] = p
	}
	dims := make([]graph.Dim, len(t.shape))
	for i, d := range t.shape {
		switch {
		case d >= 0:
			dims[i] = graph.Dim{Size: d}
		case params[d] != "":
			dims[i] = graph.Dim{Size: -1, Param: params[d]}
		default:
			dims[i] = graph.Dim{Size: -1}
		}
	}
	v.Type = &graph.Type{DType: t.dt, Shape: dims}
	b.g.ValueInfo = append(b.g.ValueInfo, v)
}

func (b *builder) ti(v *graph.Value) *tinfo {
	if v == nil {
		return nil
	}
	if t, ok := b.info[v]; ok {
		return t
	}
	t := &tinfo{}
	if v.Init != nil {
		t = infoOfTensor(v.Init)
	} else if v.Type != nil {
		t.dt = v.Type.DType
		if v.Type.Shape != nil {
			t.shape = make([]int64, len(v.Type.Shape))
			for i, d := range v.Type.Shape {
				switch {
				case d.Known():
					t.shape[i] = d.Size
				case d.Param != "":
					s, ok := b.syms[d.Param]
					if !ok {
						s = b.sym()
						b.syms[d.Param] = s
					}
					t.shape[i] = s
				default:
					t.shape[i] = b.sym()
				}
			}
		}
	}
	b.info[v] = t
	return t
}

// declared runs after the forward of the original node n: an output whose
// rank the shape rules could not infer takes the shape the model declares
// for it (its value_info or graph output type, e.g. the logits' [batch,
// 10]), so that one op the inference cannot follow does not lose the rank
// of everything after it. It records the first node whose outputs stay
// without a rank although its inputs had one (builder.lostRank), for the
// error that needs that rank.
func (b *builder) declared(n *graph.Node) {
	for _, o := range n.Outputs() {
		v := b.vmap[o]
		if o == nil || v == nil || b.rank(v) >= 0 || o.Type == nil || o.Type.Shape == nil {
			continue
		}
		t, d := b.ti(v), b.ti(o)
		dt := t.dt
		if dt == graph.Undefined {
			dt = d.dt
		}
		b.info[v] = &tinfo{dt: dt, shape: append([]int64{}, d.shape...)}
	}
	if b.lostRank != nil {
		return
	}
	for _, in := range n.Inputs() {
		if v := b.vmap[in]; in != nil && (v == nil || b.rank(v) < 0) {
			return
		}
	}
	for _, o := range n.Outputs() {
		if v := b.vmap[o]; o != nil && v != nil && b.rank(v) < 0 {
			b.lostRank = n
			return
		}
	}
}

func (b *builder) shape(v *graph.Value) []int64 { return b.ti(v).shape }
func (b *builder) dtype(v *graph.Value) graph.DType {
	return b.ti(v).dt
}
func (b *builder) rank(v *graph.Value) int {
	s := b.ti(v).shape
	if s == nil {
		return -1
	}
	return len(s)
}

// ivals returns the known integer values of v, or nil.
func (b *builder) ivals(v *graph.Value) []int64 {
	if v == nil {
		return nil
	}
	return b.ti(v).ival
}

// fvals returns the known float values of v, or nil.
func (b *builder) fvals(v *graph.Value) []float64 {
	if v == nil {
		return nil
	}
	return b.ti(v).fval
}

func normAxis(a int64, r int) int64 {
	if a < 0 {
		a += int64(r)
	}
	return a
}

func (b *builder) bcast(shapes ...[]int64) []int64 {
	r := 0
	for _, s := range shapes {
		if s == nil {
			return nil
		}
		r = max(r, len(s))
	}
	out := make([]int64, r)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		off := r - len(s)
		for i, d := range s {
			o := out[off+i]
			switch {
			case d == 1:
			case o == 1:
				out[off+i] = d
			case o == d:
			case o >= 0 && isSym(d):
				// known size wins over a symbol
			case d >= 0 && isSym(o):
				out[off+i] = d
			default:
				out[off+i] = b.sym()
			}
		}
	}
	return out
}

// dimProd multiplies dims; a symbol makes the result a fresh symbol, except
// that the product of one symbol and ones is the symbol.
func (b *builder) dimProd(s []int64) int64 {
	p := int64(1)
	var sym int64
	nsym := 0
	for _, d := range s {
		if isSym(d) {
			nsym++
			sym = d
			continue
		}
		p *= d
	}
	switch {
	case nsym == 0:
		return p
	case nsym == 1 && p == 1:
		return sym
	}
	return b.sym()
}

func attrAxes(n *graph.Node) []int64 { return n.AttrInts("axes", nil) }

// shapeCtx is what a shape rule sees: the node, the type information of its
// input 0 (x) and the builder whose tables it reads and writes.
type shapeCtx struct {
	b *builder
	n *graph.Node
	x *tinfo
}

// shapeRule sets the types of a node's outputs.
type shapeRule func(s *shapeCtx)

// in is the type information of input i (empty when absent).
func (s *shapeCtx) in(i int) *tinfo {
	if v := s.n.Input(i); v != nil {
		return s.b.ti(v)
	}
	return &tinfo{}
}

// set records output i's type information.
func (s *shapeCtx) set(i int, t *tinfo) {
	if outs := s.n.Outputs(); i < len(outs) && outs[i] != nil {
		s.b.info[outs[i]] = t
	}
}

// same is input 0's type and shape (without its values).
func (s *shapeCtx) same() *tinfo { return &tinfo{dt: s.x.dt, shape: s.x.shape} }

// infer sets the types of n's outputs by n's shape rule (registry), found by
// op type alone: the NCHWc lowering's com.microsoft.nchwc Conv takes Conv's.
// Ops without one get shapeDefault.
func (b *builder) infer(n *graph.Node) {
	s := &shapeCtx{b: b, n: n}
	s.x = s.in(0)
	if d, ok := registry[n.OpType]; ok && d.shape != nil {
		d.shape(s)
		return
	}
	shapeDefault(s)
}

// shapeIdentity: Identity.
func shapeIdentity(sc *shapeCtx) {
	x, set := sc.x, sc.set
	set(0, x)
}

// shapeSame: Relu, LeakyRelu, Sigmoid, Tanh, Erf, Gelu, Sqrt, Reciprocal, Exp, Log, Softmax, LogSoftmax, HardSigmoid, HardSwish, Clip, Elu, Selu, Softplus, Floor, Ceil, Round, Sin, Cos, LRN.
func shapeSame(sc *shapeCtx) {
	set, same := sc.set, sc.same()
	set(0, same)
}

// shapeNegAbsSign: Neg, Abs, Sign.
func shapeNegAbsSign(sc *shapeCtx) {
	n, x, set := sc.n, sc.x, sc.set
	t := &tinfo{dt: x.dt, shape: x.shape}
	if x.ival != nil {
		t.ival = make([]int64, len(x.ival))
		for i, v := range x.ival {
			if isSym(v) {
				t.ival = nil
				break
			}
			switch n.OpType {
			case "Neg":
				t.ival[i] = -v
			case "Abs":
				t.ival[i] = max(v, -v)
			default:
				t.ival[i] = min(max(v, -1), 1)
			}
		}
	}
	set(0, t)
}

// shapeNot: Not.
func shapeNot(sc *shapeCtx) {
	x, set := sc.x, sc.set
	set(0, &tinfo{dt: graph.Bool, shape: x.shape})
}

// shapeCast: Cast.
func shapeCast(sc *shapeCtx) {
	n, x, set := sc.n, sc.x, sc.set
	dt := graph.DType(n.AttrInt("to", 0))
	t := &tinfo{dt: dt, shape: x.shape}
	if !dt.IsFloat() && dt != graph.Bool && x.ival != nil {
		t.ival = x.ival
	}
	if dt != graph.Bool && !dt.IsFloat() && x.fval != nil {
		t.ival = make([]int64, len(x.fval))
		for i, f := range x.fval {
			t.ival[i] = int64(f)
		}
	}
	if dt.IsFloat() {
		t.fval = x.fval
		if x.ival != nil && allKnown(x.ival) {
			t.fval = make([]float64, len(x.ival))
			for i, v := range x.ival {
				t.fval[i] = float64(v)
			}
		}
	}
	set(0, t)
}

// shapeCastLike: CastLike.
func shapeCastLike(sc *shapeCtx) {
	x, in, set := sc.x, sc.in, sc.set
	set(0, &tinfo{dt: in(1).dt, shape: x.shape})
}

// shapeDropout: Dropout.
func shapeDropout(sc *shapeCtx) {
	x, set, same := sc.x, sc.set, sc.same()
	set(0, same)
	set(1, &tinfo{dt: graph.Bool, shape: x.shape})
}

// shapeArith: Add, Sub, Mul, Div, Pow, Max, Min, Sum, Mean, PRelu, Mod.
func shapeArith(sc *shapeCtx) {
	b, n, x, in, set := sc.b, sc.n, sc.x, sc.in, sc.set
	shapes := make([][]int64, 0, len(n.Inputs()))
	for i := range n.Inputs() {
		shapes = append(shapes, in(i).shape)
	}
	t := &tinfo{dt: x.dt, shape: b.bcast(shapes...)}
	if len(n.Inputs()) == 2 && !x.dt.IsFloat() {
		op := n.OpType
		if op == "Mod" && n.AttrInt("fmod", 0) != 0 {
			op = "Fmod"
		}
		t.ival = arith(op, x.ival, in(1).ival, b.sym)
	}
	if len(n.Inputs()) == 2 && x.dt.IsFloat() {
		t.fval = farith(n.OpType, x.fval, in(1).fval)
	}
	set(0, t)
}

// shapeCompare: Equal, Less, Greater, LessOrEqual, GreaterOrEqual, And, Or, Xor.
func shapeCompare(sc *shapeCtx) {
	b, n, x, in, set := sc.b, sc.n, sc.x, sc.in, sc.set
	t := &tinfo{dt: graph.Bool, shape: b.bcast(x.shape, in(1).shape)}
	if n.OpType == "Equal" {
		t.ival = equalVals(x.ival, in(1).ival)
	}
	set(0, t)
}

// shapeWhere: Where.
func shapeWhere(sc *shapeCtx) {
	b, x, in, set := sc.b, sc.x, sc.in, sc.set
	set(0, &tinfo{dt: in(1).dt, shape: b.bcast(x.shape, in(1).shape, in(2).shape),
		ival: whereVals(x.ival, in(1).ival, in(2).ival)})
}

// shapePad: Pad.
func shapePad(sc *shapeCtx) {
	b, n, x, set := sc.b, sc.n, sc.x, sc.set
	set(0, &tinfo{dt: x.dt, shape: b.padShape(n, x.shape)})
}

// shapeMatMul: MatMul.
func shapeMatMul(sc *shapeCtx) {
	b, x, in, set := sc.b, sc.x, sc.in, sc.set
	set(0, &tinfo{dt: x.dt, shape: b.matmulShape(x.shape, in(1).shape)})
}

// shapeGemm: Gemm.
func shapeGemm(sc *shapeCtx) {
	n, x, in, set := sc.n, sc.x, sc.in, sc.set
	var s []int64
	a, w := x.shape, in(1).shape
	if len(a) == 2 && len(w) == 2 {
		m, k := a[0], a[1]
		if n.AttrInt("transA", 0) != 0 {
			m = k
		}
		nn := w[1]
		if n.AttrInt("transB", 0) != 0 {
			nn = w[0]
		}
		s = []int64{m, nn}
	}
	set(0, &tinfo{dt: x.dt, shape: s})
}

// shapeWindow: Conv, ConvTranspose, MaxPool, AveragePool, LpPool.
func shapeWindow(sc *shapeCtx) {
	b, n, x, set := sc.b, sc.n, sc.x, sc.set
	set(0, &tinfo{dt: x.dt, shape: b.convShape(n)})
	if n.OpType == "MaxPool" {
		set(1, &tinfo{dt: graph.Int64, shape: b.convShape(n)})
	}
}

// shapeGlobalPool: GlobalAveragePool, GlobalMaxPool, GlobalLpPool.
func shapeGlobalPool(sc *shapeCtx) {
	x, set := sc.x, sc.set
	var s []int64
	if x.shape != nil {
		s = append([]int64{}, x.shape...)
		for i := 2; i < len(s); i++ {
			s[i] = 1
		}
	}
	set(0, &tinfo{dt: x.dt, shape: s})
}

// shapeBatchNormalization: BatchNormalization.
func shapeBatchNormalization(sc *shapeCtx) {
	x, set, outs, same := sc.x, sc.set, sc.n.Outputs(), sc.same()
	set(0, same)
	var c []int64
	if len(x.shape) > 1 {
		c = []int64{x.shape[1]}
	}
	for i := 1; i < len(outs); i++ {
		set(i, &tinfo{dt: x.dt, shape: c})
	}
}

// shapeLayerNormalization: LayerNormalization.
func shapeLayerNormalization(sc *shapeCtx) {
	n, x, set, same := sc.n, sc.x, sc.set, sc.same()
	set(0, same)
	var s []int64
	if x.shape != nil {
		ax := normAxis(n.AttrInt("axis", -1), len(x.shape))
		s = append([]int64{}, x.shape...)
		for i := ax; i < int64(len(s)); i++ {
			s[i] = 1
		}
	}
	dt := x.dt
	if n.AttrInt("stash_type", 1) == 1 {
		dt = graph.Float
	}
	set(1, &tinfo{dt: dt, shape: s})
	set(2, &tinfo{dt: dt, shape: s})
}

// shapeFlatten: Flatten.
func shapeFlatten(sc *shapeCtx) {
	b, n, x, set := sc.b, sc.n, sc.x, sc.set
	var s []int64
	if x.shape != nil {
		ax := normAxis(n.AttrInt("axis", 1), len(x.shape))
		s = []int64{b.dimProd(x.shape[:ax]), b.dimProd(x.shape[ax:])}
	}
	set(0, &tinfo{dt: x.dt, shape: s, ival: x.ival})
}

// shapeReshape: Reshape.
func shapeReshape(sc *shapeCtx) {
	b, n, x, in, set := sc.b, sc.n, sc.x, sc.in, sc.set
	rs := b.reshapeShape(x.shape, in(1).ival, n.AttrInt("allowzero", 0) != 0)
	if ts := in(1).shape; rs == nil && len(ts) == 1 && ts[0] >= 0 {
		// Target values unknown, its length known: the rank is.
		rs = make([]int64, ts[0])
		for i := range rs {
			rs[i] = b.sym()
		}
	}
	set(0, &tinfo{dt: x.dt, shape: rs, ival: x.ival})
}

// shapeTranspose: Transpose.
func shapeTranspose(sc *shapeCtx) {
	n, x, set := sc.n, sc.x, sc.set
	var s []int64
	if x.shape != nil {
		perm := n.AttrInts("perm", nil)
		if perm == nil {
			for i := len(x.shape) - 1; i >= 0; i-- {
				perm = append(perm, int64(i))
			}
		}
		s = make([]int64, len(perm))
		for i, p := range perm {
			if p < 0 || p >= int64(len(x.shape)) {
				s = nil
				break
			}
			s[i] = x.shape[p]
		}
	}
	t := &tinfo{dt: x.dt, shape: s}
	if s != nil {
		// Output element o is input element i with i[perm[k]] = o[k].
		perm := n.AttrInts("perm", nil)
		if perm == nil {
			perm = iota64(0, len(s))
			slices.Reverse(perm)
		}
		t.ival = mapVals(x.shape, x.ival, s, func(o, i []int64) {
			for k, p := range perm {
				i[p] = o[k]
			}
		})
	}
	set(0, t)
}

// mapVals returns the tracked values of an output of shape os computed
// from an input of shape xs with values xv, where src writes into i the
// input index of output index o; nil when a shape is not fully known or
// the values are not tracked. PyTorch's export of F.pad with computed pads
// reverses them through Reshape, Slice (step −1) and Transpose, so values
// are followed through those ops in any rank, not only in 1-D.
func mapVals(xs, xv, os []int64, src func(o, i []int64)) []int64 {
	if xv == nil || !allKnown(xs) || !allKnown(os) || prod(xs) != int64(len(xv)) || prod(os) > maxVals {
		return nil
	}
	out := make([]int64, prod(os))
	o, i := make([]int64, len(os)), make([]int64, len(xs))
	for k := range out {
		copy(i, o)
		src(o, i)
		flat := int64(0)
		for a, d := range xs {
			if i[a] < 0 || i[a] >= d {
				return nil
			}
			flat = flat*d + i[a]
		}
		out[k] = xv[flat]
		for a := len(os) - 1; a >= 0; a-- {
			if o[a]++; o[a] < os[a] {
				break
			}
			o[a] = 0
		}
	}
	return out
}

// shapeSqueeze: Squeeze, Unsqueeze.
func shapeSqueeze(sc *shapeCtx) {
	n, x, in, set := sc.n, sc.x, sc.in, sc.set
	axes := attrAxes(n)
	if n.Input(1) != nil {
		axes = in(1).ival
	}
	t := &tinfo{dt: x.dt, ival: x.ival}
	if x.shape != nil {
		if n.OpType == "Squeeze" {
			if axes == nil && n.Input(1) != nil {
				return
			}
			drop := map[int64]bool{}
			for _, a := range axes {
				drop[normAxis(a, len(x.shape))] = true
			}
			for i, d := range x.shape {
				if (axes == nil && d == 1) || drop[int64(i)] {
					continue
				}
				t.shape = append(t.shape, d)
			}
			if t.shape == nil {
				t.shape = []int64{}
			}
		} else if axes != nil {
			r := len(x.shape) + len(axes)
			ins := map[int64]bool{}
			for _, a := range axes {
				ins[normAxis(a, r)] = true
			}
			k := 0
			t.shape = make([]int64, r)
			for i := range t.shape {
				if ins[int64(i)] {
					t.shape[i] = 1
				} else {
					t.shape[i] = x.shape[k]
					k++
				}
			}
		}
	}
	set(0, t)
}

// shapeConcat: Concat.
func shapeConcat(sc *shapeCtx) {
	b, n, x, in, set := sc.b, sc.n, sc.x, sc.in, sc.set
	t := &tinfo{dt: x.dt}
	if x.shape != nil {
		ax := normAxis(n.AttrInt("axis", 0), len(x.shape))
		s := append([]int64{}, x.shape...)
		var parts []int64
		vals := []int64{}
		for i := range n.Inputs() {
			si := in(i).shape
			if si == nil || len(si) != len(s) {
				s = nil
				break
			}
			if i > 0 {
				parts = append(parts, si[ax])
			}
			if vals != nil && in(i).ival != nil {
				vals = append(vals, in(i).ival...)
			} else {
				vals = nil
			}
		}
		if s != nil {
			for i := range s {
				if int64(i) != ax {
					for k := 1; k < len(n.Inputs()); k++ {
						if d := in(k).shape[i]; d >= 0 && isSym(s[i]) {
							s[i] = d
						}
					}
				}
			}
			tot := x.shape[ax]
			for _, p := range parts {
				if tot < 0 || p < 0 {
					tot = b.sym()
					break
				}
				tot += p
			}
			s[ax] = tot
		}
		t.shape = s
		if len(s) == 1 {
			t.ival = vals
		}
	}
	set(0, t)
}

// shapeSplit: Split.
func shapeSplit(sc *shapeCtx) {
	b, n, x := sc.b, sc.n, sc.x
	b.inferSplit(n, x, sc.in)
}

// shapeSlice: Slice.
func shapeSlice(sc *shapeCtx) {
	b, n, x := sc.b, sc.n, sc.x
	b.inferSlice(n, x, sc.in)
}

// shapeGather: Gather.
func shapeGather(sc *shapeCtx) {
	n, x, in, set := sc.n, sc.x, sc.in, sc.set
	t := &tinfo{dt: x.dt}
	idx := in(1)
	if x.shape != nil && idx.shape != nil {
		ax := normAxis(n.AttrInt("axis", 0), len(x.shape))
		t.shape = append(append(append([]int64{}, x.shape[:ax]...), idx.shape...), x.shape[ax+1:]...)
		if len(x.shape) == 1 && x.ival != nil && idx.ival != nil {
			t.ival = make([]int64, len(idx.ival))
			for i, k := range idx.ival {
				if k < 0 {
					k += int64(len(x.ival))
				}
				if k < 0 || k >= int64(len(x.ival)) {
					t.ival = nil
					break
				}
				t.ival[i] = x.ival[k]
			}
		}
	}
	set(0, t)
}

// shapeGatherElements: GatherElements.
func shapeGatherElements(sc *shapeCtx) {
	x, in, set := sc.x, sc.in, sc.set
	set(0, &tinfo{dt: x.dt, shape: in(1).shape})
}

// shapeScatter: ScatterElements, ScatterND, Scatter.
func shapeScatter(sc *shapeCtx) {
	set, same := sc.set, sc.same()
	set(0, same)
}

// shapeExpand: Expand.
func shapeExpand(sc *shapeCtx) {
	b, x, in, set := sc.b, sc.x, sc.in, sc.set
	t := &tinfo{dt: x.dt}
	if sv := in(1).ival; sv != nil {
		t.shape = b.bcast(x.shape, sv)
	}
	set(0, t)
}

// shapeShape: Shape.
func shapeShape(sc *shapeCtx) {
	b, n, x, set := sc.b, sc.n, sc.x, sc.set
	t := &tinfo{dt: graph.Int64}
	if x.shape != nil {
		r := int64(len(x.shape))
		st, en := n.AttrInt("start", 0), n.AttrInt("end", r)
		if st < 0 {
			st += r
		}
		if en < 0 {
			en += r
		}
		st, en = min(max(st, 0), r), min(max(en, 0), r)
		en = max(en, st)
		t.ival = append([]int64{}, x.shape[st:en]...)
		t.shape = []int64{en - st}
	} else {
		t.shape = []int64{b.sym()}
	}
	set(0, t)
}

// shapeSize: Size.
func shapeSize(sc *shapeCtx) {
	x, set := sc.x, sc.set
	t := &tinfo{dt: graph.Int64, shape: []int64{}}
	if x.shape != nil && allKnown(x.shape) {
		t.ival = []int64{prod(x.shape)}
	}
	set(0, t)
}

// shapeConstantOfShape: ConstantOfShape.
func shapeConstantOfShape(sc *shapeCtx) {
	b, n, in, set := sc.b, sc.n, sc.in, sc.set
	t := &tinfo{dt: graph.Float}
	var val *graph.Tensor
	if a := n.Attr("value"); a != nil && a.T != nil {
		val = a.T
		t.dt = a.T.DType
	}
	if sv := in(0).ival; sv != nil {
		t.shape = append([]int64{}, sv...)
		if allKnown(sv) && prod(sv) <= maxVals && val != nil {
			vi := infoOfTensor(val)
			k := int(prod(sv))
			if vi.ival != nil {
				t.ival = make([]int64, k)
				for i := range t.ival {
					t.ival[i] = vi.ival[0]
				}
			}
			if vi.fval != nil {
				t.fval = make([]float64, k)
				for i := range t.fval {
					t.fval[i] = vi.fval[0]
				}
			}
		}
	} else if in(0).shape != nil && allKnown(in(0).shape) {
		t.shape = make([]int64, in(0).shape[0])
		for i := range t.shape {
			t.shape[i] = b.sym()
		}
	}
	set(0, t)
}

// shapeConstant: Constant.
func shapeConstant(sc *shapeCtx) {
	n, set := sc.n, sc.set
	var t *tinfo
	if a := n.Attr("value"); a != nil && a.T != nil {
		t = infoOfTensor(a.T)
	} else if a := n.Attr("value_int"); a != nil {
		t = &tinfo{dt: graph.Int64, shape: []int64{}, ival: []int64{a.I}}
	} else if a := n.Attr("value_ints"); a != nil {
		t = &tinfo{dt: graph.Int64, shape: []int64{int64(len(a.Ints))}, ival: a.Ints}
	} else if a := n.Attr("value_float"); a != nil {
		t = &tinfo{dt: graph.Float, shape: []int64{}, fval: []float64{float64(a.F)}}
	} else if a := n.Attr("value_floats"); a != nil {
		f := make([]float64, len(a.Floats))
		for i, v := range a.Floats {
			f[i] = float64(v)
		}
		t = &tinfo{dt: graph.Float, shape: []int64{int64(len(f))}, fval: f}
	} else {
		t = &tinfo{}
	}
	set(0, t)
}

// shapeRange: Range.
func shapeRange(sc *shapeCtx) {
	b, x, in, set := sc.b, sc.x, sc.in, sc.set
	t := &tinfo{dt: x.dt, shape: []int64{b.sym()}}
	s, l, d := x.ival, in(1).ival, in(2).ival
	if len(s) == 1 && len(l) == 1 && len(d) == 1 && d[0] != 0 && !isSym(s[0]) && !isSym(l[0]) {
		cnt := max(int64(math.Ceil(float64(l[0]-s[0])/float64(d[0]))), 0)
		t.shape = []int64{cnt}
		if cnt <= maxVals {
			t.ival = make([]int64, cnt)
			for i := range t.ival {
				t.ival[i] = s[0] + int64(i)*d[0]
			}
		}
	}
	set(0, t)
}

// shapeNonZero: NonZero.
func shapeNonZero(sc *shapeCtx) {
	b, x, set := sc.b, sc.x, sc.set
	var s []int64
	if x.shape != nil {
		s = []int64{int64(len(x.shape)), b.sym()}
	}
	set(0, &tinfo{dt: graph.Int64, shape: s})
}

// shapeReduce: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp, ArgMax, ArgMin.
func shapeReduce(sc *shapeCtx) {
	b, n, x, set := sc.b, sc.n, sc.x, sc.set
	t := &tinfo{dt: x.dt}
	if n.OpType == "ArgMax" || n.OpType == "ArgMin" {
		t.dt = graph.Int64
	}
	axes, ok := b.reduceAxes(n)
	if ok && x.shape != nil {
		keep := n.AttrInt("keepdims", 1) != 0
		red := map[int64]bool{}
		for _, a := range axes {
			red[normAxis(a, len(x.shape))] = true
		}
		t.shape = []int64{}
		for i, d := range x.shape {
			switch {
			case !red[int64(i)]:
				t.shape = append(t.shape, d)
			case keep:
				t.shape = append(t.shape, 1)
			}
		}
	}
	set(0, t)
}

// shapeDefault: any other op.
func shapeDefault(sc *shapeCtx) {
	x, set, outs := sc.x, sc.set, sc.n.Outputs()
	dt := graph.Undefined
	if x.dt.IsFloat() {
		dt = x.dt
	}
	for i := range outs {
		set(i, &tinfo{dt: dt})
	}
}

// reduceAxes returns the axes a reduction node reduces (all axes when the
// list is empty and noop_with_empty_axes=0); ok is false when unknown.
func (b *builder) reduceAxes(n *graph.Node) ([]int64, bool) {
	x := b.ti(n.Input(0))
	var axes []int64
	if n.OpType == "ArgMax" || n.OpType == "ArgMin" {
		axes = []int64{n.AttrInt("axis", 0)}
	} else if n.Input(1) != nil {
		axes = b.ivals(n.Input(1))
		if axes == nil {
			return nil, false
		}
	} else {
		axes = n.AttrInts("axes", nil)
	}
	if len(axes) == 0 {
		if n.AttrInt("noop_with_empty_axes", 0) != 0 {
			return []int64{}, true
		}
		if x.shape == nil {
			return nil, false
		}
		for i := range x.shape {
			axes = append(axes, int64(i))
		}
	}
	return axes, true
}

// equalVals compares tracked integer values elementwise (1-D broadcasting
// of a single value only). A symbol is an unknown size ≥ 0: it equals
// itself, differs from every negative constant, and is otherwise unknown.
func equalVals(a, c []int64) []int64 {
	if a == nil || c == nil || (len(a) != len(c) && len(a) != 1 && len(c) != 1) {
		return nil
	}
	out := make([]int64, max(len(a), len(c)))
	for i := range out {
		x, y := a[min(i, len(a)-1)], c[min(i, len(c)-1)]
		switch {
		case x == y:
			out[i] = 1
		case isSym(x) && isSym(y):
			return nil
		case isSym(x) && y >= 0, isSym(y) && x >= 0:
			return nil
		}
	}
	return out
}

// whereVals selects tracked values by a tracked condition, as PyTorch's
// export of expand(-1, ...) does with Where(Equal(shape, -1), 1, shape).
func whereVals(cond, a, c []int64) []int64 {
	if cond == nil || a == nil || c == nil {
		return nil
	}
	n := max(len(cond), len(a), len(c))
	for _, l := range []int{len(cond), len(a), len(c)} {
		if l != n && l != 1 {
			return nil
		}
	}
	out := make([]int64, n)
	for i := range out {
		if cond[min(i, len(cond)-1)] != 0 {
			out[i] = a[min(i, len(a)-1)]
		} else {
			out[i] = c[min(i, len(c)-1)]
		}
	}
	return out
}

// padShape is the output shape of a Pad with constant pads (and axes);
// a padded symbolic size becomes a fresh symbol. Pad keeps the rank, so
// with pads or axes the inference cannot follow every size is a fresh
// symbol and the rank stays known (Pad's gradient rule still refuses such
// a node, naming it).
func (b *builder) padShape(n *graph.Node, x []int64) []int64 {
	if x == nil {
		return nil
	}
	r := len(x)
	unknown := func() []int64 {
		out := make([]int64, r)
		for i := range out {
			out[i] = b.sym()
		}
		return out
	}
	pads := b.ivals(n.Input(1))
	if pads == nil {
		return unknown()
	}
	axes := iota64(0, r)
	if av := n.Input(3); av != nil {
		if axes = b.ivals(av); axes == nil {
			return unknown()
		}
	}
	if len(pads) != 2*len(axes) {
		return nil
	}
	out := append([]int64{}, x...)
	for i, a := range axes {
		a = normAxis(a, r)
		if a < 0 || a >= int64(r) {
			return nil
		}
		d := pads[i] + pads[len(axes)+i]
		switch {
		case d == 0:
		case isSym(out[a]):
			out[a] = b.sym()
		default:
			out[a] += d
		}
	}
	return out
}

// arith evaluates integer arithmetic on tracked values: Add, Sub, Mul,
// Div (truncating, as ONNX Runtime's integer Div), Mod (ONNX's default
// fmod = 0: the remainder takes the divisor's sign, as Python's %, which
// PyTorch exports for the padding of windowed attention) and Fmod (fmod =
// 1: the dividend's sign). A result that involves a symbol (other than
// multiplying it by 1) is a fresh symbol: still an unknown size, so the
// rank of a shape built from it is known.
func arith(op string, a, c []int64, fresh func() int64) []int64 {
	if a == nil || c == nil || (len(a) != len(c) && len(a) != 1 && len(c) != 1) {
		return nil
	}
	n := max(len(a), len(c))
	out := make([]int64, n)
	for i := range out {
		x, y := a[min(i, len(a)-1)], c[min(i, len(c)-1)]
		if isSym(x) || isSym(y) {
			if op == "Mul" && (x == 1 || y == 1) {
				if x == 1 {
					out[i] = y
				} else {
					out[i] = x
				}
				continue
			}
			switch op {
			case "Add", "Sub", "Mul", "Div", "Mod", "Fmod":
				out[i] = fresh()
				continue
			}
			return nil
		}
		switch op {
		case "Add":
			out[i] = x + y
		case "Sub":
			out[i] = x - y
		case "Mul":
			out[i] = x * y
		case "Div":
			if y == 0 {
				return nil
			}
			out[i] = x / y
		case "Mod", "Fmod":
			if y == 0 {
				return nil
			}
			out[i] = x % y
			if op == "Mod" && out[i] != 0 && (out[i] < 0) != (y < 0) {
				out[i] += y
			}
		default:
			return nil
		}
	}
	return out
}

func farith(op string, a, c []float64) []float64 {
	if a == nil || c == nil || (len(a) != len(c) && len(a) != 1 && len(c) != 1) {
		return nil
	}
	n := max(len(a), len(c))
	out := make([]float64, n)
	for i := range out {
		x, y := a[min(i, len(a)-1)], c[min(i, len(c)-1)]
		switch op {
		case "Add":
			out[i] = x + y
		case "Sub":
			out[i] = x - y
		case "Mul":
			out[i] = x * y
		case "Div":
			out[i] = x / y
		case "Pow":
			out[i] = math.Pow(x, y)
		default:
			return nil
		}
	}
	return out
}

func (b *builder) matmulShape(a, c []int64) []int64 {
	if a == nil || c == nil || len(a) == 0 || len(c) == 0 {
		return nil
	}
	a1, c1 := len(a) == 1, len(c) == 1
	if a1 {
		a = []int64{1, a[0]}
	}
	if c1 {
		c = []int64{c[0], 1}
	}
	batch := b.bcast(a[:len(a)-2], c[:len(c)-2])
	out := append(batch, a[len(a)-2], c[len(c)-1])
	if a1 {
		out = append(out[:len(out)-2], out[len(out)-1])
	}
	if c1 {
		out = out[:len(out)-1]
	}
	return out
}

// convGeom is the resolved geometry of a Conv, ConvTranspose or pooling node.
type convGeom struct {
	k, s, d, pb, pe, op []int64
	group               int64
}

// geom resolves kernel, strides, dilations and explicit pads (auto_pad
// turned into pads) of n, with x the input shape (static spatial dims needed
// for SAME padding).
func (b *builder) geom(n *graph.Node, xs []int64) (convGeom, bool) {
	var g convGeom
	if xs == nil || len(xs) < 3 {
		return g, false
	}
	sp := len(xs) - 2
	g.k = n.AttrInts("kernel_shape", nil)
	if g.k == nil && (n.OpType == "Conv" || n.OpType == "ConvTranspose") {
		ws := b.shape(n.Input(1))
		if ws == nil || len(ws) != len(xs) {
			return g, false
		}
		g.k = append([]int64{}, ws[2:]...)
	}
	if len(g.k) != sp {
		return g, false
	}
	ones := func() []int64 {
		o := make([]int64, sp)
		for i := range o {
			o[i] = 1
		}
		return o
	}
	g.s = n.AttrInts("strides", ones())
	g.d = n.AttrInts("dilations", ones())
	g.group = n.AttrInt("group", 1)
	g.op = n.AttrInts("output_padding", make([]int64, sp))
	pads := n.AttrInts("pads", make([]int64, 2*sp))
	if len(pads) != 2*sp || len(g.s) != sp || len(g.d) != sp {
		return g, false
	}
	g.pb, g.pe = append([]int64{}, pads[:sp]...), append([]int64{}, pads[sp:]...)
	switch ap := n.AttrString("auto_pad", "NOTSET"); ap {
	case "NOTSET", "":
	case "VALID":
		g.pb, g.pe = make([]int64, sp), make([]int64, sp)
	case "SAME_UPPER", "SAME_LOWER":
		if n.OpType == "ConvTranspose" {
			return g, false
		}
		for i := 0; i < sp; i++ {
			h := xs[2+i]
			if h < 0 {
				return g, false
			}
			out := (h + g.s[i] - 1) / g.s[i]
			total := max((out-1)*g.s[i]+g.d[i]*(g.k[i]-1)+1-h, 0)
			if ap == "SAME_UPPER" {
				g.pb[i], g.pe[i] = total/2, total-total/2
			} else {
				g.pb[i], g.pe[i] = total-total/2, total/2
			}
		}
	default:
		return g, false
	}
	return g, true
}

// poolOut is the output size of a pooling or convolution window along one
// axis (ONNX and ORT: ceil_mode drops a last window that would start in the
// end padding).
func poolOut(h, k, s, d, pb, pe int64, ceil bool) int64 {
	span := h + pb + pe - d*(k-1) - 1
	if !ceil {
		return span/s + 1
	}
	out := (span+s-1)/s + 1
	if (out-1)*s >= h+pb {
		out--
	}
	return out
}

func (b *builder) convShape(n *graph.Node) []int64 {
	xs := b.shape(n.Input(0))
	g, ok := b.geom(n, xs)
	if !ok {
		return nil
	}
	out := append([]int64{}, xs...)
	switch n.OpType {
	case "Conv":
		ws := b.shape(n.Input(1))
		if ws == nil {
			return nil
		}
		out[1] = ws[0]
	case "ConvTranspose":
		ws := b.shape(n.Input(1))
		if ws == nil {
			return nil
		}
		out[1] = ws[1] * g.group
	}
	ceil := n.AttrInt("ceil_mode", 0) != 0
	for i := range g.k {
		h := xs[2+i]
		if h < 0 {
			out[2+i] = b.sym()
			continue
		}
		if n.OpType == "ConvTranspose" {
			if os := n.AttrInts("output_shape", nil); os != nil {
				out[2+i] = os[len(os)-len(g.k)+i]
				continue
			}
			out[2+i] = g.s[i]*(h-1) + g.op[i] + (g.k[i]-1)*g.d[i] + 1 - g.pb[i] - g.pe[i]
			continue
		}
		out[2+i] = poolOut(h, g.k[i], g.s[i], g.d[i], g.pb[i], g.pe[i], ceil)
	}
	return out
}

func (b *builder) reshapeShape(xs, target []int64, allowzero bool) []int64 {
	if target == nil {
		return nil
	}
	out := make([]int64, len(target))
	inferAt := -1
	for i, t := range target {
		switch {
		case t == 0 && !allowzero:
			if xs == nil || i >= len(xs) {
				return nil
			}
			out[i] = xs[i]
		case t == -1:
			inferAt = i
		default:
			out[i] = t
		}
	}
	if inferAt >= 0 {
		if xs == nil {
			out[inferAt] = b.sym()
			return out
		}
		// Cancel symbols that appear on both sides.
		rest := map[int64]int{}
		num := int64(1)
		for _, d := range xs {
			if isSym(d) {
				rest[d]++
			} else {
				num *= d
			}
		}
		den := int64(1)
		ok := true
		for i, d := range out {
			if i == inferAt {
				continue
			}
			if isSym(d) {
				if rest[d] > 0 {
					rest[d]--
				} else {
					ok = false
				}
			} else {
				den *= d
			}
		}
		left := 0
		var lsym int64
		for s, c := range rest {
			left += c
			lsym = s
		}
		switch {
		case !ok || den == 0:
			out[inferAt] = b.sym()
		case left == 0:
			out[inferAt] = num / den
		case left == 1 && num == den:
			out[inferAt] = lsym
		default:
			out[inferAt] = b.sym()
		}
	}
	return out
}

func (b *builder) inferSplit(n *graph.Node, x *tinfo, in func(int) *tinfo) {
	outs := n.Outputs()
	var sizes []int64
	if n.Input(1) != nil {
		sizes = in(1).ival
	} else {
		sizes = n.AttrInts("split", nil)
	}
	for i, o := range outs {
		t := &tinfo{dt: x.dt}
		if x.shape != nil {
			ax := normAxis(n.AttrInt("axis", 0), len(x.shape))
			s := append([]int64{}, x.shape...)
			switch {
			case sizes != nil && i < len(sizes):
				s[ax] = sizes[i]
			case sizes == nil && x.shape[ax] >= 0:
				total, k := x.shape[ax], int64(len(outs))
				if no := n.AttrInt("num_outputs", 0); no > 0 {
					k = no
				}
				per := (total + k - 1) / k
				s[ax] = min(per, total-per*int64(i))
			default:
				s[ax] = b.sym()
			}
			t.shape = s
		}
		if o != nil {
			b.info[o] = t
		}
	}
}

// sliceParams returns per-axis normalized (start, end, step) for a Slice
// node over a data shape, when the parameters are constants; dims of
// symbolic axes may not be resolved (ok false then for those axes).
type sliceAxis struct {
	axis, start, end, step int64
	resolved               bool // start/end clamped against a known dim
}

func (b *builder) sliceParams(n *graph.Node, xs []int64) ([]sliceAxis, bool) {
	var starts, ends, axes, steps []int64
	if n.Input(1) != nil {
		starts, ends = b.ivals(n.Input(1)), b.ivals(n.Input(2))
		axes, steps = b.ivals(n.Input(3)), b.ivals(n.Input(4))
		if starts == nil || ends == nil || (n.Input(3) != nil && axes == nil) || (n.Input(4) != nil && steps == nil) {
			return nil, false
		}
	} else {
		starts, ends, axes = n.AttrInts("starts", nil), n.AttrInts("ends", nil), n.AttrInts("axes", nil)
	}
	if xs == nil || len(starts) != len(ends) {
		return nil, false
	}
	out := make([]sliceAxis, len(starts))
	for i := range starts {
		a := int64(i)
		if axes != nil {
			a = normAxis(axes[i], len(xs))
		}
		st := int64(1)
		if steps != nil {
			st = steps[i]
		}
		sa := sliceAxis{axis: a, start: starts[i], end: ends[i], step: st}
		if d := xs[a]; d >= 0 && st != 0 {
			clamp := func(v int64, lo, hi int64) int64 {
				if v < 0 {
					v += d
				}
				return min(max(v, lo), hi)
			}
			if st > 0 {
				sa.start, sa.end = clamp(sa.start, 0, d), clamp(sa.end, 0, d)
			} else {
				sa.start, sa.end = clamp(sa.start, 0, d-1), clamp(sa.end, -1, d-1)
			}
			sa.resolved = true
		}
		out[i] = sa
	}
	return out, true
}

func (b *builder) inferSlice(n *graph.Node, x *tinfo, in func(int) *tinfo) {
	t := &tinfo{dt: x.dt}
	if ax, ok := b.sliceParams(n, x.shape); ok {
		s := append([]int64{}, x.shape...)
		for _, a := range ax {
			if !a.resolved {
				s[a.axis] = b.sym()
				continue
			}
			var cnt int64
			if a.step > 0 {
				cnt = max((a.end-a.start+a.step-1)/a.step, 0)
			} else {
				cnt = max((a.start-a.end-a.step-1)/(-a.step), 0)
			}
			s[a.axis] = cnt
		}
		t.shape = s
		t.ival = mapVals(x.shape, x.ival, s, func(o, i []int64) {
			for _, a := range ax {
				i[a.axis] = a.start + o[a.axis]*a.step
			}
		})
	} else if x.shape != nil {
		t.shape = make([]int64, len(x.shape))
		for i := range t.shape {
			t.shape[i] = b.sym()
		}
	}
	set := n.Outputs()
	if len(set) > 0 && set[0] != nil {
		b.info[set[0]] = t
	}
}
