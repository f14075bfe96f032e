package shapes

import (
	"math"
	"slices"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/ops"
)

// SymBase bounds the symbolic sizes: a size ≤ SymBase is a symbol, each
// symbol a distinct unknown size.
const SymBase = -(int64(1) << 40)

// IsSym reports whether d is a symbolic size.
func IsSym(d int64) bool { return d <= SymBase }

// maxVals bounds the size of tensors whose values are tracked.
const maxVals = 4096

// Info is what inference knows of one value: its element type, its shape
// (nil: rank unknown) and, for small tensors, its values.
type Info struct {
	DType  graph.DType
	Shape  []int64
	Ints   []int64   // values of a small integer tensor, or nil
	Floats []float64 // values of a small float tensor, or nil
}

// AllKnown reports whether every size of s is known.
func AllKnown(s []int64) bool {
	for _, d := range s {
		if d < 0 {
			return false
		}
	}
	return true
}

// OfTensor is the Info of a constant tensor, with its values when small.
func OfTensor(t *graph.Tensor) *Info {
	ti := &Info{DType: t.DType, Shape: append([]int64{}, t.Shape...)}
	if t.Len() <= maxVals {
		switch {
		case t.DType.IsFloat():
			ti.Floats = FloatValues(t)
		case t.DType != graph.String:
			if v, err := t.Int64s(); err == nil {
				ti.Ints = v
			}
		}
	}
	return ti
}

// FloatValues returns the values of a float or double tensor as float64
// (nil for other types or a malformed tensor).
func FloatValues(t *graph.Tensor) []float64 {
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

// Inferrer holds the types inferred for the values of one graph under
// construction and the symbols that stand for unknown sizes. Values are
// keyed by pointer; a value seen for the first time takes the type of its
// initializer or declaration.
type Inferrer struct {
	info map[*graph.Value]*Info
	syms map[string]int64 // symbols by dim_param
	nsym int64
}

// New returns an empty Inferrer.
func New() *Inferrer {
	return &Inferrer{info: map[*graph.Value]*Info{}, syms: map[string]int64{}}
}

// Infer sets the types of n's outputs by rule (Default when nil).
func (inf *Inferrer) Infer(n *graph.Node, rule Rule) {
	s := &Ctx{inf: inf, n: n}
	s.x = s.In(0)
	if rule == nil {
		rule = Default
	}
	rule(s)
}

// Set records v's type information.
func (inf *Inferrer) Set(v *graph.Value, t *Info) { inf.info[v] = t }

// Params maps each symbol that stands for a named dimension to its
// dim_param.
func (inf *Inferrer) Params() map[int64]string {
	out := make(map[int64]string, len(inf.syms))
	for p, s := range inf.syms {
		out[s] = p
	}
	return out
}

// Sym returns a fresh symbol.
func (inf *Inferrer) Sym() int64 {
	inf.nsym++
	return SymBase - inf.nsym
}

// Of returns v's type information (nil for a nil v), taken from its
// initializer or declared type the first time v is seen.
func (inf *Inferrer) Of(v *graph.Value) *Info {
	if v == nil {
		return nil
	}
	if t, ok := inf.info[v]; ok {
		return t
	}
	t := &Info{}
	if v.Init != nil {
		t = OfTensor(v.Init)
	} else if v.Type != nil {
		t.DType = v.Type.DType
		if v.Type.Shape != nil {
			t.Shape = make([]int64, len(v.Type.Shape))
			for i, d := range v.Type.Shape {
				switch {
				case d.Known():
					t.Shape[i] = d.Size
				case d.Param != "":
					s, ok := inf.syms[d.Param]
					if !ok {
						s = inf.Sym()
						inf.syms[d.Param] = s
					}
					t.Shape[i] = s
				default:
					t.Shape[i] = inf.Sym()
				}
			}
		}
	}
	inf.info[v] = t
	return t
}

// Shape is v's shape (nil: rank unknown).
func (inf *Inferrer) Shape(v *graph.Value) []int64 { return inf.Of(v).Shape }

// DType is v's element type.
func (inf *Inferrer) DType(v *graph.Value) graph.DType {
	return inf.Of(v).DType
}

// Rank is the length of v's shape, −1 when unknown.
func (inf *Inferrer) Rank(v *graph.Value) int {
	s := inf.Of(v).Shape
	if s == nil {
		return -1
	}
	return len(s)
}

// Ints returns the known integer values of v, or nil.
func (inf *Inferrer) Ints(v *graph.Value) []int64 {
	if v == nil {
		return nil
	}
	return inf.Of(v).Ints
}

// Floats returns the known float values of v, or nil.
func (inf *Inferrer) Floats(v *graph.Value) []float64 {
	if v == nil {
		return nil
	}
	return inf.Of(v).Floats
}

// NormAxis turns a negative axis into its position in a rank-r shape.
func NormAxis(a int64, r int) int64 {
	if a < 0 {
		a += int64(r)
	}
	return a
}

// bcast is the shape the inputs broadcast to (a fresh symbol where two
// symbols meet).
func (inf *Inferrer) bcast(shapes ...[]int64) []int64 {
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
			case o >= 0 && IsSym(d):
				// known size wins over a symbol
			case d >= 0 && IsSym(o):
				out[off+i] = d
			default:
				out[off+i] = inf.Sym()
			}
		}
	}
	return out
}

// dimProd multiplies dims; a symbol makes the result a fresh symbol, except
// that the product of one symbol and ones is the symbol.
func (inf *Inferrer) dimProd(s []int64) int64 {
	p := int64(1)
	var sym int64
	nsym := 0
	for _, d := range s {
		if IsSym(d) {
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
	return inf.Sym()
}

func attrAxes(n *graph.Node) []int64 { return n.AttrInts("axes", nil) }

// Ctx is what a shape rule sees: the node, the type information of its
// input 0 (x) and the Inferrer whose tables it reads and writes.
type Ctx struct {
	inf *Inferrer
	n   *graph.Node
	x   *Info
}

// Rule sets the types of a node's outputs.
type Rule func(s *Ctx)

// In is the type information of input i (empty when absent).
func (s *Ctx) In(i int) *Info {
	if v := s.n.Input(i); v != nil {
		return s.inf.Of(v)
	}
	return &Info{}
}

// Set records output i's type information.
func (s *Ctx) Set(i int, t *Info) {
	if outs := s.n.Outputs(); i < len(outs) && outs[i] != nil {
		s.inf.info[outs[i]] = t
	}
}

// Node is the node whose outputs the rule types.
func (s *Ctx) Node() *graph.Node { return s.n }

// Inferrer is the Inferrer the rule reads and writes.
func (s *Ctx) Inferrer() *Inferrer { return s.inf }

// Same is input 0's type and shape (without its values).
func (s *Ctx) Same() *Info { return &Info{DType: s.x.DType, Shape: s.x.Shape} }

// Identity: Identity.
func Identity(sc *Ctx) {
	x, set := sc.x, sc.Set
	set(0, x)
}

// Unary: Relu, LeakyRelu, Sigmoid, Tanh, Erf, Gelu, Sqrt, Reciprocal, Exp,
// Log, Softmax, LogSoftmax, HardSigmoid, HardSwish, Clip, Elu, Selu,
// Softplus, Floor, Ceil, Round, Sin, Cos, LRN.
func Unary(sc *Ctx) {
	set, same := sc.Set, sc.Same()
	set(0, same)
}

// NegAbsSign: Neg, Abs, Sign.
func NegAbsSign(sc *Ctx) {
	n, x, set := sc.n, sc.x, sc.Set
	t := &Info{DType: x.DType, Shape: x.Shape}
	if x.Ints != nil {
		t.Ints = make([]int64, len(x.Ints))
		for i, v := range x.Ints {
			if IsSym(v) {
				t.Ints = nil
				break
			}
			switch n.OpType {
			case "Neg":
				t.Ints[i] = -v
			case "Abs":
				t.Ints[i] = max(v, -v)
			default:
				t.Ints[i] = min(max(v, -1), 1)
			}
		}
	}
	set(0, t)
}

// Not: Not.
func Not(sc *Ctx) {
	x, set := sc.x, sc.Set
	set(0, &Info{DType: graph.Bool, Shape: x.Shape})
}

// Cast: Cast.
func Cast(sc *Ctx) {
	n, x, set := sc.n, sc.x, sc.Set
	dt := graph.DType(n.AttrInt("to", 0))
	t := &Info{DType: dt, Shape: x.Shape}
	if !dt.IsFloat() && dt != graph.Bool && x.Ints != nil {
		t.Ints = x.Ints
	}
	if dt != graph.Bool && !dt.IsFloat() && x.Floats != nil {
		t.Ints = make([]int64, len(x.Floats))
		for i, f := range x.Floats {
			t.Ints[i] = int64(f)
		}
	}
	if dt.IsFloat() {
		t.Floats = x.Floats
		if x.Ints != nil && AllKnown(x.Ints) {
			t.Floats = make([]float64, len(x.Ints))
			for i, v := range x.Ints {
				t.Floats[i] = float64(v)
			}
		}
	}
	set(0, t)
}

// CastLike: CastLike.
func CastLike(sc *Ctx) {
	x, in, set := sc.x, sc.In, sc.Set
	set(0, &Info{DType: in(1).DType, Shape: x.Shape})
}

// Dropout: Dropout.
func Dropout(sc *Ctx) {
	x, set, same := sc.x, sc.Set, sc.Same()
	set(0, same)
	set(1, &Info{DType: graph.Bool, Shape: x.Shape})
}

// Arith: Add, Sub, Mul, Div, Pow, Max, Min, Sum, Mean, PRelu, Mod.
func Arith(sc *Ctx) {
	inf, n, x, in, set := sc.inf, sc.n, sc.x, sc.In, sc.Set
	shapes := make([][]int64, 0, len(n.Inputs()))
	for i := range n.Inputs() {
		shapes = append(shapes, in(i).Shape)
	}
	t := &Info{DType: x.DType, Shape: inf.bcast(shapes...)}
	if len(n.Inputs()) == 2 && !x.DType.IsFloat() {
		op := n.OpType
		if op == "Mod" && n.AttrInt("fmod", 0) != 0 {
			op = "Fmod"
		}
		t.Ints = arith(op, x.Ints, in(1).Ints, inf.Sym)
	}
	if len(n.Inputs()) == 2 && x.DType.IsFloat() {
		t.Floats = farith(n.OpType, x.Floats, in(1).Floats)
	}
	set(0, t)
}

// Compare: Equal, Less, Greater, LessOrEqual, GreaterOrEqual, And, Or, Xor.
func Compare(sc *Ctx) {
	inf, n, x, in, set := sc.inf, sc.n, sc.x, sc.In, sc.Set
	t := &Info{DType: graph.Bool, Shape: inf.bcast(x.Shape, in(1).Shape)}
	if n.OpType == "Equal" {
		t.Ints = equalVals(x.Ints, in(1).Ints)
	}
	set(0, t)
}

// Where: Where.
func Where(sc *Ctx) {
	inf, x, in, set := sc.inf, sc.x, sc.In, sc.Set
	set(0, &Info{DType: in(1).DType, Shape: inf.bcast(x.Shape, in(1).Shape, in(2).Shape),
		Ints: whereVals(x.Ints, in(1).Ints, in(2).Ints)})
}

// Pad: Pad.
func Pad(sc *Ctx) {
	inf, n, x, set := sc.inf, sc.n, sc.x, sc.Set
	set(0, &Info{DType: x.DType, Shape: inf.padShape(n, x.Shape)})
}

// MatMul: MatMul.
func MatMul(sc *Ctx) {
	inf, x, in, set := sc.inf, sc.x, sc.In, sc.Set
	set(0, &Info{DType: x.DType, Shape: inf.matMulShape(x.Shape, in(1).Shape)})
}

// Gemm: Gemm.
func Gemm(sc *Ctx) {
	n, x, in, set := sc.n, sc.x, sc.In, sc.Set
	var s []int64
	a, w := x.Shape, in(1).Shape
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
	set(0, &Info{DType: x.DType, Shape: s})
}

// Window: Conv, ConvTranspose, MaxPool, AveragePool, LpPool.
func Window(sc *Ctx) {
	inf, n, x, set := sc.inf, sc.n, sc.x, sc.Set
	set(0, &Info{DType: x.DType, Shape: inf.convShape(n)})
	if n.OpType == "MaxPool" {
		set(1, &Info{DType: graph.Int64, Shape: inf.convShape(n)})
	}
}

// GlobalPool: GlobalAveragePool, GlobalMaxPool, GlobalLpPool.
func GlobalPool(sc *Ctx) {
	x, set := sc.x, sc.Set
	var s []int64
	if x.Shape != nil {
		s = append([]int64{}, x.Shape...)
		for i := 2; i < len(s); i++ {
			s[i] = 1
		}
	}
	set(0, &Info{DType: x.DType, Shape: s})
}

// BatchNormalization: BatchNormalization.
func BatchNormalization(sc *Ctx) {
	x, set, outs, same := sc.x, sc.Set, sc.n.Outputs(), sc.Same()
	set(0, same)
	var c []int64
	if len(x.Shape) > 1 {
		c = []int64{x.Shape[1]}
	}
	for i := 1; i < len(outs); i++ {
		set(i, &Info{DType: x.DType, Shape: c})
	}
}

// LayerNormalization: LayerNormalization.
func LayerNormalization(sc *Ctx) {
	n, x, set, same := sc.n, sc.x, sc.Set, sc.Same()
	set(0, same)
	var s []int64
	if x.Shape != nil {
		ax := NormAxis(n.AttrInt("axis", -1), len(x.Shape))
		s = append([]int64{}, x.Shape...)
		for i := ax; i < int64(len(s)); i++ {
			s[i] = 1
		}
	}
	dt := x.DType
	if n.AttrInt("stash_type", 1) == 1 {
		dt = graph.Float
	}
	set(1, &Info{DType: dt, Shape: s})
	set(2, &Info{DType: dt, Shape: s})
}

// Flatten: Flatten.
func Flatten(sc *Ctx) {
	inf, n, x, set := sc.inf, sc.n, sc.x, sc.Set
	var s []int64
	if x.Shape != nil {
		ax := NormAxis(n.AttrInt("axis", 1), len(x.Shape))
		s = []int64{inf.dimProd(x.Shape[:ax]), inf.dimProd(x.Shape[ax:])}
	}
	set(0, &Info{DType: x.DType, Shape: s, Ints: x.Ints})
}

// Reshape: Reshape.
func Reshape(sc *Ctx) {
	inf, n, x, in, set := sc.inf, sc.n, sc.x, sc.In, sc.Set
	rs := inf.reshapeShape(x.Shape, in(1).Ints, n.AttrInt("allowzero", 0) != 0)
	if ts := in(1).Shape; rs == nil && len(ts) == 1 && ts[0] >= 0 {
		// Target values unknown, its length known: the rank is.
		rs = make([]int64, ts[0])
		for i := range rs {
			rs[i] = inf.Sym()
		}
	}
	set(0, &Info{DType: x.DType, Shape: rs, Ints: x.Ints})
}

// Transpose: Transpose.
func Transpose(sc *Ctx) {
	n, x, set := sc.n, sc.x, sc.Set
	var s []int64
	if x.Shape != nil {
		perm := n.AttrInts("perm", nil)
		if perm == nil {
			for i := len(x.Shape) - 1; i >= 0; i-- {
				perm = append(perm, int64(i))
			}
		}
		s = make([]int64, len(perm))
		for i, p := range perm {
			if p < 0 || p >= int64(len(x.Shape)) {
				s = nil
				break
			}
			s[i] = x.Shape[p]
		}
	}
	t := &Info{DType: x.DType, Shape: s}
	if s != nil {
		// Output element o is input element i with i[perm[k]] = o[k].
		perm := n.AttrInts("perm", nil)
		if perm == nil {
			perm = iota64(0, len(s))
			slices.Reverse(perm)
		}
		t.Ints = mapVals(x.Shape, x.Ints, s, func(o, i []int64) {
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
	if xv == nil || !AllKnown(xs) || !AllKnown(os) || graph.NumElements(xs) != int64(len(xv)) ||
		graph.NumElements(os) > maxVals {
		return nil
	}
	out := make([]int64, graph.NumElements(os))
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

// Squeeze: Squeeze, Unsqueeze.
func Squeeze(sc *Ctx) {
	n, x, in, set := sc.n, sc.x, sc.In, sc.Set
	axes := attrAxes(n)
	if n.Input(1) != nil {
		axes = in(1).Ints
	}
	t := &Info{DType: x.DType, Ints: x.Ints}
	if x.Shape != nil {
		if n.OpType == "Squeeze" {
			if axes == nil && n.Input(1) != nil {
				return
			}
			drop := map[int64]bool{}
			for _, a := range axes {
				drop[NormAxis(a, len(x.Shape))] = true
			}
			for i, d := range x.Shape {
				if (axes == nil && d == 1) || drop[int64(i)] {
					continue
				}
				t.Shape = append(t.Shape, d)
			}
			if t.Shape == nil {
				t.Shape = []int64{}
			}
		} else if axes != nil {
			r := len(x.Shape) + len(axes)
			ins := map[int64]bool{}
			for _, a := range axes {
				ins[NormAxis(a, r)] = true
			}
			k := 0
			t.Shape = make([]int64, r)
			for i := range t.Shape {
				if ins[int64(i)] {
					t.Shape[i] = 1
				} else {
					t.Shape[i] = x.Shape[k]
					k++
				}
			}
		}
	}
	set(0, t)
}

// Concat: Concat.
func Concat(sc *Ctx) {
	inf, n, x, in, set := sc.inf, sc.n, sc.x, sc.In, sc.Set
	t := &Info{DType: x.DType}
	if x.Shape != nil {
		ax := NormAxis(n.AttrInt("axis", 0), len(x.Shape))
		s := append([]int64{}, x.Shape...)
		var parts []int64
		vals := []int64{}
		for i := range n.Inputs() {
			si := in(i).Shape
			if si == nil || len(si) != len(s) {
				s = nil
				break
			}
			if i > 0 {
				parts = append(parts, si[ax])
			}
			if vals != nil && in(i).Ints != nil {
				vals = append(vals, in(i).Ints...)
			} else {
				vals = nil
			}
		}
		if s != nil {
			for i := range s {
				if int64(i) != ax {
					for k := 1; k < len(n.Inputs()); k++ {
						if d := in(k).Shape[i]; d >= 0 && IsSym(s[i]) {
							s[i] = d
						}
					}
				}
			}
			tot := x.Shape[ax]
			for _, p := range parts {
				if tot < 0 || p < 0 {
					tot = inf.Sym()
					break
				}
				tot += p
			}
			s[ax] = tot
		}
		t.Shape = s
		if len(s) == 1 {
			t.Ints = vals
		}
	}
	set(0, t)
}

// Split: Split.
func Split(sc *Ctx) {
	inf, n, x := sc.inf, sc.n, sc.x
	inf.inferSplit(n, x, sc.In)
}

// Slice: Slice.
func Slice(sc *Ctx) {
	inf, n, x := sc.inf, sc.n, sc.x
	inf.inferSlice(n, x, sc.In)
}

// Gather: Gather.
func Gather(sc *Ctx) {
	n, x, in, set := sc.n, sc.x, sc.In, sc.Set
	t := &Info{DType: x.DType}
	idx := in(1)
	if x.Shape != nil && idx.Shape != nil {
		ax := NormAxis(n.AttrInt("axis", 0), len(x.Shape))
		t.Shape = append(append(append([]int64{}, x.Shape[:ax]...), idx.Shape...), x.Shape[ax+1:]...)
		if len(x.Shape) == 1 && x.Ints != nil && idx.Ints != nil {
			t.Ints = make([]int64, len(idx.Ints))
			for i, k := range idx.Ints {
				if k < 0 {
					k += int64(len(x.Ints))
				}
				if k < 0 || k >= int64(len(x.Ints)) {
					t.Ints = nil
					break
				}
				t.Ints[i] = x.Ints[k]
			}
		}
	}
	set(0, t)
}

// GatherElements: GatherElements.
func GatherElements(sc *Ctx) {
	x, in, set := sc.x, sc.In, sc.Set
	set(0, &Info{DType: x.DType, Shape: in(1).Shape})
}

// Scatter: ScatterElements, ScatterND, Scatter.
func Scatter(sc *Ctx) {
	set, same := sc.Set, sc.Same()
	set(0, same)
}

// Expand: Expand.
func Expand(sc *Ctx) {
	inf, x, in, set := sc.inf, sc.x, sc.In, sc.Set
	t := &Info{DType: x.DType}
	if sv := in(1).Ints; sv != nil {
		t.Shape = inf.bcast(x.Shape, sv)
	}
	set(0, t)
}

// Shape: Shape.
func Shape(sc *Ctx) {
	inf, n, x, set := sc.inf, sc.n, sc.x, sc.Set
	t := &Info{DType: graph.Int64}
	if x.Shape != nil {
		r := int64(len(x.Shape))
		st, en := n.AttrInt("start", 0), n.AttrInt("end", r)
		if st < 0 {
			st += r
		}
		if en < 0 {
			en += r
		}
		st, en = min(max(st, 0), r), min(max(en, 0), r)
		en = max(en, st)
		t.Ints = append([]int64{}, x.Shape[st:en]...)
		t.Shape = []int64{en - st}
	} else {
		t.Shape = []int64{inf.Sym()}
	}
	set(0, t)
}

// Size: Size.
func Size(sc *Ctx) {
	x, set := sc.x, sc.Set
	t := &Info{DType: graph.Int64, Shape: []int64{}}
	if x.Shape != nil && AllKnown(x.Shape) {
		t.Ints = []int64{graph.NumElements(x.Shape)}
	}
	set(0, t)
}

// ConstantOfShape: ConstantOfShape.
func ConstantOfShape(sc *Ctx) {
	inf, n, in, set := sc.inf, sc.n, sc.In, sc.Set
	t := &Info{DType: graph.Float}
	var val *graph.Tensor
	if a := n.Attr("value"); a != nil && a.T != nil {
		val = a.T
		t.DType = a.T.DType
	}
	if sv := in(0).Ints; sv != nil {
		t.Shape = append([]int64{}, sv...)
		if AllKnown(sv) && graph.NumElements(sv) <= maxVals && val != nil {
			vi := OfTensor(val)
			k := int(graph.NumElements(sv))
			if vi.Ints != nil {
				t.Ints = make([]int64, k)
				for i := range t.Ints {
					t.Ints[i] = vi.Ints[0]
				}
			}
			if vi.Floats != nil {
				t.Floats = make([]float64, k)
				for i := range t.Floats {
					t.Floats[i] = vi.Floats[0]
				}
			}
		}
	} else if in(0).Shape != nil && AllKnown(in(0).Shape) {
		t.Shape = make([]int64, in(0).Shape[0])
		for i := range t.Shape {
			t.Shape[i] = inf.Sym()
		}
	}
	set(0, t)
}

// Constant: Constant.
func Constant(sc *Ctx) {
	n, set := sc.n, sc.Set
	var t *Info
	if a := n.Attr("value"); a != nil && a.T != nil {
		t = OfTensor(a.T)
	} else if a := n.Attr("value_int"); a != nil {
		t = &Info{DType: graph.Int64, Shape: []int64{}, Ints: []int64{a.I}}
	} else if a := n.Attr("value_ints"); a != nil {
		t = &Info{DType: graph.Int64, Shape: []int64{int64(len(a.Ints))}, Ints: a.Ints}
	} else if a := n.Attr("value_float"); a != nil {
		t = &Info{DType: graph.Float, Shape: []int64{}, Floats: []float64{float64(a.F)}}
	} else if a := n.Attr("value_floats"); a != nil {
		f := make([]float64, len(a.Floats))
		for i, v := range a.Floats {
			f[i] = float64(v)
		}
		t = &Info{DType: graph.Float, Shape: []int64{int64(len(f))}, Floats: f}
	} else {
		t = &Info{}
	}
	set(0, t)
}

// Range: Range.
func Range(sc *Ctx) {
	inf, x, in, set := sc.inf, sc.x, sc.In, sc.Set
	t := &Info{DType: x.DType, Shape: []int64{inf.Sym()}}
	s, l, d := x.Ints, in(1).Ints, in(2).Ints
	if len(s) == 1 && len(l) == 1 && len(d) == 1 && d[0] != 0 && !IsSym(s[0]) && !IsSym(l[0]) {
		cnt := max(int64(math.Ceil(float64(l[0]-s[0])/float64(d[0]))), 0)
		t.Shape = []int64{cnt}
		if cnt <= maxVals {
			t.Ints = make([]int64, cnt)
			for i := range t.Ints {
				t.Ints[i] = s[0] + int64(i)*d[0]
			}
		}
	}
	set(0, t)
}

// NonZero: NonZero.
func NonZero(sc *Ctx) {
	inf, x, set := sc.inf, sc.x, sc.Set
	var s []int64
	if x.Shape != nil {
		s = []int64{int64(len(x.Shape)), inf.Sym()}
	}
	set(0, &Info{DType: graph.Int64, Shape: s})
}

// Reduce: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
// ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp, ArgMax, ArgMin.
func Reduce(sc *Ctx) {
	inf, n, x, set := sc.inf, sc.n, sc.x, sc.Set
	t := &Info{DType: x.DType}
	if n.OpType == "ArgMax" || n.OpType == "ArgMin" {
		t.DType = graph.Int64
	}
	axes, ok := inf.ReduceAxes(n)
	if ok && x.Shape != nil {
		keep := n.AttrInt("keepdims", 1) != 0
		red := map[int64]bool{}
		for _, a := range axes {
			red[NormAxis(a, len(x.Shape))] = true
		}
		t.Shape = []int64{}
		for i, d := range x.Shape {
			switch {
			case !red[int64(i)]:
				t.Shape = append(t.Shape, d)
			case keep:
				t.Shape = append(t.Shape, 1)
			}
		}
	}
	set(0, t)
}

// Default: any other op.
func Default(sc *Ctx) {
	x, set, outs := sc.x, sc.Set, sc.n.Outputs()
	dt := graph.Undefined
	if x.DType.IsFloat() {
		dt = x.DType
	}
	for i := range outs {
		set(i, &Info{DType: dt})
	}
}

// ReduceAxes returns the axes a reduction node reduces (all axes when the
// list is empty and noop_with_empty_axes=0); ok is false when unknown.
func (inf *Inferrer) ReduceAxes(n *graph.Node) ([]int64, bool) {
	x := inf.Of(n.Input(0))
	var axes []int64
	if n.OpType == "ArgMax" || n.OpType == "ArgMin" {
		axes = []int64{n.AttrInt("axis", 0)}
	} else if n.Input(1) != nil {
		axes = inf.Ints(n.Input(1))
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
		if x.Shape == nil {
			return nil, false
		}
		for i := range x.Shape {
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
		case IsSym(x) && IsSym(y):
			return nil
		case IsSym(x) && y >= 0, IsSym(y) && x >= 0:
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
func (inf *Inferrer) padShape(n *graph.Node, x []int64) []int64 {
	if x == nil {
		return nil
	}
	r := len(x)
	unknown := func() []int64 {
		out := make([]int64, r)
		for i := range out {
			out[i] = inf.Sym()
		}
		return out
	}
	pads := inf.Ints(n.Input(1))
	if pads == nil {
		return unknown()
	}
	axes := iota64(0, r)
	if av := n.Input(3); av != nil {
		if axes = inf.Ints(av); axes == nil {
			return unknown()
		}
	}
	if len(pads) != 2*len(axes) {
		return nil
	}
	out := append([]int64{}, x...)
	for i, a := range axes {
		a = NormAxis(a, r)
		if a < 0 || a >= int64(r) {
			return nil
		}
		d := pads[i] + pads[len(axes)+i]
		switch {
		case d == 0:
		case IsSym(out[a]):
			out[a] = inf.Sym()
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
		if IsSym(x) || IsSym(y) {
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

// matMulShape is the shape of MatMul(A, B) for operand shapes a and c
// (numpy semantics; nil when unknown).
func (inf *Inferrer) matMulShape(a, c []int64) []int64 {
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
	batch := inf.bcast(a[:len(a)-2], c[:len(c)-2])
	out := append(batch, a[len(a)-2], c[len(c)-1])
	if a1 {
		out = append(out[:len(out)-2], out[len(out)-1])
	}
	if c1 {
		out = out[:len(out)-1]
	}
	return out
}

// Geom is the resolved geometry of a Conv, ConvTranspose or pooling node.
type Geom struct {
	// Per spatial axis: kernel size, stride, dilation, padding at the
	// beginning and at the end, and ConvTranspose's output_padding.
	K, S, D, PB, PE, OP []int64
	Group               int64
}

// InputAt returns the position on spatial axis i of X (unpadded; outside
// [0, S) in the padding) that kernel offset j meets at output position o.
func (geo Geom) InputAt(i int, o, j int64) int64 {
	return o*geo.S[i] + j*geo.D[i] - geo.PB[i]
}

// IdentityWindow reports whether the one window of a 1×1 kernel at stride
// 1 without padding is X itself .
func (geo Geom) IdentityWindow() bool {
	if graph.NumElements(geo.K) != 1 {
		return false
	}
	for i := range geo.K {
		if geo.S[i] != 1 || geo.PB[i] != 0 || geo.PE[i] != 0 {
			return false
		}
	}
	return true
}

// ConvGeom resolves kernel, strides, dilations and explicit pads (auto_pad
// turned into pads) of n, with x the input shape (static spatial dims needed
// for SAME padding).
func (inf *Inferrer) ConvGeom(n *graph.Node, xs []int64) (Geom, bool) {
	var g Geom
	if xs == nil || len(xs) < 3 {
		return g, false
	}
	sp := len(xs) - 2
	g.K = n.AttrInts("kernel_shape", nil)
	kind := ops.KindOf(n.OpType)
	if g.K == nil && (kind == ops.KindConv || kind == ops.KindConvTranspose) {
		ws := inf.Shape(n.Input(1))
		if ws == nil || len(ws) != len(xs) {
			return g, false
		}
		g.K = append([]int64{}, ws[2:]...)
	}
	if len(g.K) != sp {
		return g, false
	}
	ones := func() []int64 {
		o := make([]int64, sp)
		for i := range o {
			o[i] = 1
		}
		return o
	}
	g.S = n.AttrInts("strides", ones())
	g.D = n.AttrInts("dilations", ones())
	g.Group = n.AttrInt("group", 1)
	g.OP = n.AttrInts("output_padding", make([]int64, sp))
	pads := n.AttrInts("pads", make([]int64, 2*sp))
	if len(pads) != 2*sp || len(g.S) != sp || len(g.D) != sp {
		return g, false
	}
	g.PB, g.PE = append([]int64{}, pads[:sp]...), append([]int64{}, pads[sp:]...)
	switch ap := n.AttrString("auto_pad", "NOTSET"); ap {
	case "NOTSET", "":
	case "VALID":
		g.PB, g.PE = make([]int64, sp), make([]int64, sp)
	case "SAME_UPPER", "SAME_LOWER":
		if kind == ops.KindConvTranspose {
			return g, false
		}
		for i := 0; i < sp; i++ {
			h := xs[2+i]
			if h < 0 {
				return g, false
			}
			out := (h + g.S[i] - 1) / g.S[i]
			total := max((out-1)*g.S[i]+g.D[i]*(g.K[i]-1)+1-h, 0)
			if ap == "SAME_UPPER" {
				g.PB[i], g.PE[i] = total/2, total-total/2
			} else {
				g.PB[i], g.PE[i] = total-total/2, total/2
			}
		}
	default:
		return g, false
	}
	return g, true
}

// PoolOut is the output size of a pooling or convolution window along one
// axis (ONNX and ORT: ceil_mode drops a last window that would start in the
// end padding).
func PoolOut(h, k, s, d, pb, pe int64, ceil bool) int64 {
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

// convShape is the output shape of a Conv, ConvTranspose or pooling node
// (nil when unknown).
func (inf *Inferrer) convShape(n *graph.Node) []int64 {
	xs := inf.Shape(n.Input(0))
	g, ok := inf.ConvGeom(n, xs)
	if !ok {
		return nil
	}
	out := append([]int64{}, xs...)
	kind := ops.KindOf(n.OpType)
	switch kind {
	case ops.KindConv:
		ws := inf.Shape(n.Input(1))
		if ws == nil {
			return nil
		}
		out[1] = ws[0]
	case ops.KindConvTranspose:
		ws := inf.Shape(n.Input(1))
		if ws == nil {
			return nil
		}
		out[1] = ws[1] * g.Group
	}
	ceil := n.AttrInt("ceil_mode", 0) != 0
	for i := range g.K {
		h := xs[2+i]
		if h < 0 {
			out[2+i] = inf.Sym()
			continue
		}
		if kind == ops.KindConvTranspose {
			if os := n.AttrInts("output_shape", nil); os != nil {
				out[2+i] = os[len(os)-len(g.K)+i]
				continue
			}
			out[2+i] = g.S[i]*(h-1) + g.OP[i] + (g.K[i]-1)*g.D[i] + 1 - g.PB[i] - g.PE[i]
			continue
		}
		out[2+i] = PoolOut(h, g.K[i], g.S[i], g.D[i], g.PB[i], g.PE[i], ceil)
	}
	return out
}

// reshapeShape is Reshape's output shape for input shape xs and target
// (0 copies the input's size unless allowzero, −1 is inferred).
func (inf *Inferrer) reshapeShape(xs, target []int64, allowzero bool) []int64 {
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
			out[inferAt] = inf.Sym()
			return out
		}
		// Cancel symbols that appear on both sides.
		rest := map[int64]int{}
		num := int64(1)
		for _, d := range xs {
			if IsSym(d) {
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
			if IsSym(d) {
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
			out[inferAt] = inf.Sym()
		case left == 0:
			out[inferAt] = num / den
		case left == 1 && num == den:
			out[inferAt] = lsym
		default:
			out[inferAt] = inf.Sym()
		}
	}
	return out
}

func (inf *Inferrer) inferSplit(n *graph.Node, x *Info, in func(int) *Info) {
	outs := n.Outputs()
	var sizes []int64
	if n.Input(1) != nil {
		sizes = in(1).Ints
	} else {
		sizes = n.AttrInts("split", nil)
	}
	for i, o := range outs {
		t := &Info{DType: x.DType}
		if x.Shape != nil {
			ax := NormAxis(n.AttrInt("axis", 0), len(x.Shape))
			s := append([]int64{}, x.Shape...)
			switch {
			case sizes != nil && i < len(sizes):
				s[ax] = sizes[i]
			case sizes == nil && x.Shape[ax] >= 0:
				total, k := x.Shape[ax], int64(len(outs))
				if no := n.AttrInt("num_outputs", 0); no > 0 {
					k = no
				}
				per := (total + k - 1) / k
				s[ax] = min(per, total-per*int64(i))
			default:
				s[ax] = inf.Sym()
			}
			t.Shape = s
		}
		if o != nil {
			inf.info[o] = t
		}
	}
}

// SliceAxis is one sliced axis of a Slice node, normalized.
type SliceAxis struct {
	Axis, Start, End, Step int64
	Resolved               bool // start/end clamped against a known dim
}

// SliceParams returns per-axis normalized (start, end, step) for a Slice
// node over a data shape, when the parameters are constants; dims of
// symbolic axes may not be resolved (Resolved false then for those axes).
func (inf *Inferrer) SliceParams(n *graph.Node, xs []int64) ([]SliceAxis, bool) {
	var starts, ends, axes, steps []int64
	if n.Input(1) != nil {
		starts, ends = inf.Ints(n.Input(1)), inf.Ints(n.Input(2))
		axes, steps = inf.Ints(n.Input(3)), inf.Ints(n.Input(4))
		if starts == nil || ends == nil || (n.Input(3) != nil && axes == nil) || (n.Input(4) != nil && steps == nil) {
			return nil, false
		}
	} else {
		starts, ends, axes = n.AttrInts("starts", nil), n.AttrInts("ends", nil), n.AttrInts("axes", nil)
	}
	if xs == nil || len(starts) != len(ends) {
		return nil, false
	}
	out := make([]SliceAxis, len(starts))
	for i := range starts {
		a := int64(i)
		if axes != nil {
			a = NormAxis(axes[i], len(xs))
		}
		st := int64(1)
		if steps != nil {
			st = steps[i]
		}
		sa := SliceAxis{Axis: a, Start: starts[i], End: ends[i], Step: st}
		if d := xs[a]; d >= 0 && st != 0 {
			clamp := func(v int64, lo, hi int64) int64 {
				if v < 0 {
					v += d
				}
				return min(max(v, lo), hi)
			}
			if st > 0 {
				sa.Start, sa.End = clamp(sa.Start, 0, d), clamp(sa.End, 0, d)
			} else {
				sa.Start, sa.End = clamp(sa.Start, 0, d-1), clamp(sa.End, -1, d-1)
			}
			sa.Resolved = true
		}
		out[i] = sa
	}
	return out, true
}

func (inf *Inferrer) inferSlice(n *graph.Node, x *Info, in func(int) *Info) {
	t := &Info{DType: x.DType}
	if ax, ok := inf.SliceParams(n, x.Shape); ok {
		s := append([]int64{}, x.Shape...)
		for _, a := range ax {
			if !a.Resolved {
				s[a.Axis] = inf.Sym()
				continue
			}
			var cnt int64
			if a.Step > 0 {
				cnt = max((a.End-a.Start+a.Step-1)/a.Step, 0)
			} else {
				cnt = max((a.Start-a.End-a.Step-1)/(-a.Step), 0)
			}
			s[a.Axis] = cnt
		}
		t.Shape = s
		t.Ints = mapVals(x.Shape, x.Ints, s, func(o, i []int64) {
			for _, a := range ax {
				i[a.Axis] = a.Start + o[a.Axis]*a.Step
			}
		})
	} else if x.Shape != nil {
		t.Shape = make([]int64, len(x.Shape))
		for i := range t.Shape {
			t.Shape[i] = inf.Sym()
		}
	}
	set := n.Outputs()
	if len(set) > 0 && set[0] != nil {
		inf.info[set[0]] = t
	}
}

// iota64 is [from, to) as int64s.
func iota64(from, to int) []int64 {
	var out []int64
	for i := from; i < to; i++ {
		out = append(out, int64(i))
	}
	return out
}
