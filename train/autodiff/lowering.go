package autodiff

import (
	"fmt"
	"slices"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/shapes"
	"github.com/unlearn-tool/unlearn/train/lowering"
)

// lower is the Lowering the graph is built with: Spec.Lowering, or the
// plain forms.
func (b *builder) lower() lowering.Lowering {
	if b.spec.Lowering == nil {
		return lowering.Plain{}
	}
	return b.spec.Lowering
}

// normalizer is the Lowering's choice of BatchNormalization's affine
// maps, or Plain's.
func (b *builder) normalizer() lowering.Normalizer {
	if n, ok := b.lower().(lowering.Normalizer); ok {
		return n
	}
	return lowering.Plain{}
}

// fwdConv emits a forward Conv as the Lowering chooses: its own nodes,
// named as the model's output (the geometry goes to b.fwdGeom, for the
// rule), or a copy of the model's Conv.
func fwdConv(b *builder, n *graph.Node, p *planned) *graph.Node {
	x, w := b.mappedOrNil(n.Input(0)), b.mappedOrNil(n.Input(1))
	if x == nil || w == nil || n.Output(0) == nil || len(n.Outputs()) != 1 {
		return b.copyNode(n, nil, nil)
	}
	geo, ok := b.types.ConvGeom(n, b.shape(x))
	if !ok {
		return b.copyNode(n, nil, nil)
	}
	var bias *graph.Value
	if n.Input(2) != nil {
		bias = b.mapped(n.Input(2))
	}
	y := b.lower().ConvForward(emitter{b}, x, w, bias, geo, n.Output(0).Name)
	if y == nil {
		return b.copyNode(n, nil, nil)
	}
	b.vmap[n.Output(0)] = y
	b.fwdGeom[n] = geo
	fn, _ := y.Producer()
	return fn
}

// emitter is the builder as the lowering.Emitter a Lowering emits through.
type emitter struct{ b *builder }

func (e emitter) Op(opType string, ins []*graph.Value, nout int, attrs ...*graph.Attribute) []*graph.Value {
	return e.b.op(opType, ins, nout, attrs...)
}

func (e emitter) Op1(opType string, ins []*graph.Value, attrs ...*graph.Attribute) *graph.Value {
	return e.b.op1(opType, ins, attrs...)
}

func (e emitter) Named(opType string, ins []*graph.Value, out string, attrs ...*graph.Attribute) *graph.Value {
	return e.b.emit(opType, ins, []string{out}, attrs...).Output(0)
}

func (e emitter) Contrib(domain string, version int64, opType string, ins []*graph.Value, out string,
	dt graph.DType, shape []int64, attrs ...*graph.Attribute) *graph.Value {
	b := e.b
	n, err := b.g.AddNode(opType, domain, out, ins, []string{out}, attrs...)
	if err != nil {
		b.fail("autodiff: %v", err)
	}
	b.types.Set(n.Output(0), &shapes.Info{DType: dt, Shape: append([]int64{}, shape...)})
	if v, ok := b.domains[domain]; ok && v != version {
		b.fail("autodiff: domain %s used at opset versions %d and %d", domain, v, version)
	}
	b.domains[domain] = version
	return n.Output(0)
}

func (e emitter) Name(base string) string            { return e.b.name(base) }
func (e emitter) Const(t *graph.Tensor) *graph.Value { return e.b.constT(t) }
func (e emitter) ConstF(dt graph.DType, shape []int64, vals []float64) *graph.Value {
	return e.b.constF(dt, shape, vals)
}
func (e emitter) I64(vals ...int64) *graph.Value { return e.b.i64(vals...) }
func (e emitter) Reshape(x *graph.Value, shape []int64) *graph.Value {
	return e.b.reshape(x, shape)
}
func (e emitter) Transpose(x *graph.Value, perm []int64) *graph.Value {
	return e.b.transpose(x, perm)
}
func (e emitter) Unsqueeze(x *graph.Value, axes []int64) *graph.Value {
	return e.b.unsqueeze(x, axes)
}
func (e emitter) ReduceSum(x *graph.Value, axes []int64, keep bool) *graph.Value {
	return e.b.reduceSum(x, axes, keep)
}
func (e emitter) Annotate(v *graph.Value)          { e.b.annotate(v) }
func (e emitter) Threads() int                     { return e.b.spec.Threads }
func (e emitter) Shape(v *graph.Value) []int64     { return e.b.shape(v) }
func (e emitter) DType(v *graph.Value) graph.DType { return e.b.dtype(v) }

func (e emitter) Memo(key any, make func() *graph.Value) *graph.Value {
	if v, ok := e.b.memo[key]; ok {
		return v
	}
	v := make()
	e.b.memo[key] = v
	return v
}

func (e emitter) Note(form string)                { e.b.convForms = append(e.b.convForms, form) }
func (e emitter) Fail(format string, args ...any) { e.b.fail(format, args...) }
func (e emitter) Unsupported(format string, args ...any) {
	e.b.fail("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}

// Standalone emits one lowering's nodes into a graph of their own, outside
// any training graph: for tests and timings of a Lowering's forms (package
// cpu's TestConvFormTimings).
type Standalone struct{ b *builder }

// NewStandalone starts an empty graph named name at ai.onnx opset opset.
func NewStandalone(name string, opset int64) *Standalone {
	return &Standalone{newBuilder(graph.NewGraph(name), opset, Spec{})}
}

// Input adds a graph input of type t.
func (s *Standalone) Input(name string, t *graph.Type) (*graph.Value, error) {
	v, err := s.b.g.AddInput(name, t)
	if err != nil {
		return nil, err
	}
	s.b.ti(v)
	return v, nil
}

// Sym is a fresh symbolic dimension (−1 in shapes is unknown; symbols
// below it name one unknown size).
func (s *Standalone) Sym() int64 { return s.b.types.Sym() }

// Emitter is the lowering.Emitter that emits into the graph. Its Fail and
// Unsupported panic; Run turns that into an error.
func (s *Standalone) Emitter() lowering.Emitter { return emitter{s.b} }

// Run calls f, returning the error an Emitter's Fail raised inside it.
func (s *Standalone) Run(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			bo, ok := r.(bailout)
			if !ok {
				panic(r)
			}
			err = bo.err
		}
	}()
	f()
	return nil
}

// Model returns the model with out as its one output, named "out".
func (s *Standalone) Model(out *graph.Value) *graph.Model {
	b := s.b
	o := b.identityAs(out, "out")
	o.Type = &graph.Type{DType: b.dtype(out)}
	b.g.Outputs = []*graph.Value{o}
	return &graph.Model{Graph: b.g, IRVersion: 8, Opsets: opsets(&graph.Model{}, b.opset, b.domains)}
}

// Lowered lists the forms chosen so far (Artifacts.Lowered).
func (s *Standalone) Lowered() []string { return slices.Clone(s.b.convForms) }
