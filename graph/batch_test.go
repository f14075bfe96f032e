package graph_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
)

// fixedCNN builds input [1,1,4,4] → Conv → flatten → Gemm → logits [1,3],
// with value_info [1,2,4,4] on the Conv output; flatten is made by mk.
func fixedCNN(t *testing.T, mk func(b *builder, x *graph.Value) *graph.Value) (*builder, *graph.Value, *graph.Value) {
	b := newBuilder(t)
	x := b.input("input.1", 1, 1, 4, 4)
	c := b.op("Conv", vals(x, b.w("conv.weight", 2, 1, 3, 3)), attrInts("pads", 1, 1, 1, 1))
	c.Type = &graph.Type{DType: graph.Float, Shape: graph.DimsOf([]int64{1, 2, 4, 4})}
	b.g.ValueInfo = append(b.g.ValueInfo, c)
	y := b.op("Gemm", vals(mk(b, c), b.w("fc.weight", 3, 32)), attrI("transB", 1))
	y.Type = &graph.Type{DType: graph.Float, Shape: graph.DimsOf([]int64{1, 3})}
	b.output(y)
	return b, x, y
}

func TestMakeBatchSymbolicFlatten(t *testing.T) {
	b, x, y := fixedCNN(t, func(b *builder, c *graph.Value) *graph.Value {
		return b.op("Flatten", vals(c), attrI("axis", 1))
	})
	orig := graph.NewGraph("orig")
	xo, _ := orig.AddInput("input.1", &graph.Type{DType: graph.Float, Shape: graph.DimsOf([]int64{1, 1, 4, 4})})
	if n, err := graph.FixedBatch(b.g); n != 1 || err != nil {
		t.Fatalf("FixedBatch = %d, %v; want 1, nil", n, err)
	}
	changed, err := graph.MakeBatchSymbolic(b.g)
	if err != nil || !changed {
		t.Fatalf("MakeBatchSymbolic = %v, %v", changed, err)
	}
	for _, v := range []*graph.Value{x, y, b.g.ValueInfo[0]} {
		if d := v.Type.Shape[0]; d.Param != graph.BatchParam {
			t.Errorf("%s: first dim %v, want %q", v.Name, d, graph.BatchParam)
		}
	}
	if got := x.Type.Shape[1:]; !got[0].Known() || got[0].Size != 1 || got[2].Size != 4 {
		t.Errorf("input's other dims changed: %v", x.Type.Shape)
	}
	// A second call finds nothing to do.
	if changed, err := graph.MakeBatchSymbolic(b.g); changed || err != nil {
		t.Errorf("second call = %v, %v", changed, err)
	}
	graph.RestoreDeclaredShapes(b.g, orig)
	if d := x.Type.Shape[0]; !d.Known() || d.Size != 1 {
		t.Errorf("restored input first dim %v, want 1", d)
	}
	if xo.Type.Shape[0].Size != 1 {
		t.Error("RestoreDeclaredShapes changed the source")
	}
}

func TestMakeBatchSymbolicShapeChain(t *testing.T) {
	// x.view(x.size(0), -1) with a dynamic batch: Shape → Gather → Unsqueeze
	// → Concat → Reshape follows the batch.
	b, _, _ := fixedCNN(t, func(b *builder, c *graph.Value) *graph.Value {
		s := b.op("Shape", vals(c))
		n := b.op("Gather", vals(s, b.i64("zero", 0)))
		shape := b.op("Concat", vals(n, b.i64("minus1", -1)), attrI("axis", 0))
		return b.op("Reshape", vals(c, shape))
	})
	if changed, err := graph.MakeBatchSymbolic(b.g); !changed || err != nil {
		t.Fatalf("MakeBatchSymbolic = %v, %v", changed, err)
	}
	// [-1, 32] and [0, -1] follow the batch too.
	for _, first := range []int64{-1, 0} {
		b, _, _ := fixedCNN(t, func(b *builder, c *graph.Value) *graph.Value {
			return b.op("Reshape", vals(c, b.i64("shape", first, 32)))
		})
		if changed, err := graph.MakeBatchSymbolic(b.g); !changed || err != nil {
			t.Errorf("Reshape to [%d, 32]: MakeBatchSymbolic = %v, %v", first, changed, err)
		}
	}
}

func TestMakeBatchSymbolicRefusesHardCodedReshape(t *testing.T) {
	b, x, y := fixedCNN(t, func(b *builder, c *graph.Value) *graph.Value {
		// A Constant node, as PyTorch writes x.view(1, -1).
		k, err := b.g.AddNode("Constant", "", "/Constant", nil, []string{"/Constant_output_0"},
			&graph.Attribute{Name: "value", Type: graph.AttrTensor, T: graph.NewInt64("", []int64{2}, []int64{1, -1})})
		if err != nil {
			t.Fatal(err)
		}
		r, err := b.g.AddNode("Reshape", "", "/Reshape", vals(c, k.Output(0)), []string{"/Reshape_output_0"})
		if err != nil {
			t.Fatal(err)
		}
		return r.Output(0)
	})
	y.Name = "logits"
	changed, err := graph.MakeBatchSymbolic(b.g)
	var be *graph.BatchError
	if changed || !errors.As(err, &be) {
		t.Fatalf("MakeBatchSymbolic = %v, %v; want a *BatchError", changed, err)
	}
	msg := err.Error()
	for _, want := range []string{`Reshape node "/Reshape"`, `[1 -1]`, `dynamic_axes={"input.1": {0: "batch"}, "logits": {0: "batch"}}`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if d := x.Type.Shape[0]; !d.Known() || d.Size != 1 {
		t.Errorf("refused graph changed: input first dim %v", d)
	}
}

func TestMakeBatchSymbolicLeavesDynamicAndShapeValues(t *testing.T) {
	b := newBuilder(t)
	x, _ := b.g.AddInput("x", &graph.Type{DType: graph.Float, Shape: []graph.Dim{{Size: -1, Param: "N"}, {Size: 3}}})
	b.output(b.op("Relu", vals(x)))
	if n, err := graph.FixedBatch(b.g); n != 0 || err != nil {
		t.Errorf("FixedBatch of a symbolic batch = %d, %v", n, err)
	}
	if changed, err := graph.MakeBatchSymbolic(b.g); changed || err != nil {
		t.Errorf("MakeBatchSymbolic of a symbolic batch = %v, %v", changed, err)
	}
	// An int64 value computed from the input ([1] from Unsqueeze of a
	// Gather of Shape) keeps its shape: it is not the batch.
	b2 := newBuilder(t)
	x2 := b2.input("x", 1, 3)
	s := b2.op("Shape", vals(x2))
	s.Type = &graph.Type{DType: graph.Int64, Shape: graph.DimsOf([]int64{1})}
	b2.output(b2.op("Relu", vals(x2)))
	b2.output(s)
	if changed, err := graph.MakeBatchSymbolic(b2.g); !changed || err != nil {
		t.Fatalf("MakeBatchSymbolic = %v, %v", changed, err)
	}
	if d := s.Type.Shape[0]; !d.Known() || d.Size != 1 {
		t.Errorf("int64 Shape output's dim became %v", d)
	}
}
