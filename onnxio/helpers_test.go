package onnxio

import (
	"math/rand"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/onnxio/onnxpb"
)

// mlp builds y = Relu(x·W + B) followed by Softmax, with seeded random
// weights of the given sizes, using the graph API only (no Ext anywhere).
func mlp(t *testing.T, in, out int, seed int64) *graph.Model {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	g := graph.NewGraph("mlp")
	x, err := g.AddInput("x", &graph.Type{DType: graph.Float, Shape: []graph.Dim{{Size: -1, Param: "N"}, {Size: int64(in)}}})
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float32, in*out)
	for i := range w {
		w[i] = rng.Float32()*2 - 1
	}
	b := make([]float32, out)
	for i := range b {
		b[i] = rng.Float32()
	}
	W, err := g.AddInitializer(graph.NewFloat32("W", []int64{int64(in), int64(out)}, w))
	if err != nil {
		t.Fatal(err)
	}
	B, err := g.AddInitializer(graph.NewFloat32("B", []int64{int64(out)}, b))
	if err != nil {
		t.Fatal(err)
	}
	mm, err := g.AddNode("MatMul", "", "matmul", []*graph.Value{x, W}, []string{"xw"})
	if err != nil {
		t.Fatal(err)
	}
	add, err := g.AddNode("Add", "", "add", []*graph.Value{mm.Output(0), B}, []string{"h"})
	if err != nil {
		t.Fatal(err)
	}
	relu, err := g.AddNode("Relu", "", "relu", []*graph.Value{add.Output(0)}, []string{"r"})
	if err != nil {
		t.Fatal(err)
	}
	sm, err := g.AddNode("Softmax", "", "softmax", []*graph.Value{relu.Output(0)}, []string{"y"},
		&graph.Attribute{Name: "axis", Type: graph.AttrInt, I: -1})
	if err != nil {
		t.Fatal(err)
	}
	y := sm.Output(0)
	y.Type = &graph.Type{DType: graph.Float, Shape: []graph.Dim{{Size: -1, Param: "N"}, {Size: int64(out)}}}
	g.Outputs = append(g.Outputs, y)
	return &graph.Model{
		Graph:        g,
		IRVersion:    8,
		Opsets:       []graph.OpsetImport{{Domain: "", Version: 17}},
		ProducerName: "onnxio-test",
		Metadata:     map[string]string{"purpose": "test"},
	}
}

func mustEncode(t *testing.T, m *graph.Model) []byte {
	t.Helper()
	b, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustDecode(t *testing.T, b []byte) *graph.Model {
	t.Helper()
	m, err := Decode(b, "")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func unmarshalModel(t *testing.T, b []byte) *onnxpb.ModelProto {
	t.Helper()
	mp := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(b, mp); err != nil {
		t.Fatal(err)
	}
	return mp
}

func mustMarshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// modelProto wraps nodes, initializers, inputs and outputs in a ModelProto.
func modelProto(g *onnxpb.GraphProto) *onnxpb.ModelProto {
	return &onnxpb.ModelProto{
		IrVersion:   proto.Int64(8),
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(17)}},
		Graph:       g,
	}
}

func tensorType(dt graph.DType, dims ...int64) *onnxpb.TypeProto {
	return typeProto(&graph.Type{DType: dt, Shape: graph.DimsOf(dims)})
}

func vinfo(name string, dt graph.DType, dims ...int64) *onnxpb.ValueInfoProto {
	return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: tensorType(dt, dims...)}
}

func node(op, name string, in, out []string, attrs ...*onnxpb.AttributeProto) *onnxpb.NodeProto {
	return &onnxpb.NodeProto{OpType: proto.String(op), Name: proto.String(name), Input: in, Output: out, Attribute: attrs}
}

// bitsEqual compares float32 slices bit for bit.
func bitsEqual(a, b []float32) bool { return float32sEqual(a, b) }
