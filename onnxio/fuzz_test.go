package onnxio

import (
	"os"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
)

// FuzzDecode: no input may panic or hang the decoder; whatever decodes must
// encode again and decode to the same node count.
func FuzzDecode(f *testing.F) {
	g := graph.NewGraph("g")
	x, _ := g.AddInput("x", &graph.Type{DType: graph.Float, Shape: []graph.Dim{{Param: "N"}, {Size: 3}}})
	w, _ := g.AddInitializer(graph.NewFloat32("w", []int64{3, 2}, []float32{1, 2, 3, 4, 5, 6}))
	n, _ := g.AddNode("MatMul", "", "mm", []*graph.Value{x, w}, []string{"y"},
		&graph.Attribute{Name: "note", Type: graph.AttrString, S: []byte("seed")})
	g.Outputs = []*graph.Value{n.Output(0)}
	seed, err := Encode(&graph.Model{Graph: g, IRVersion: 8, Opsets: []graph.OpsetImport{{Version: 17}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Add([]byte{})
	f.Add([]byte("not a model"))
	if b, err := os.ReadFile("../testdata/resnet_small_fused.onnx"); err == nil {
		f.Add(b[:4096])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data, t.TempDir())
		if err != nil {
			return
		}
		out, err := Encode(m)
		if err != nil {
			return // e.g. a tensor whose data does not fit its shape
		}
		m2, err := Decode(out, t.TempDir())
		if err != nil {
			t.Fatalf("our own encoding does not decode: %v", err)
		}
		if len(m2.Graph.Nodes()) != len(m.Graph.Nodes()) {
			t.Fatalf("%d nodes after a round trip, %d before", len(m2.Graph.Nodes()), len(m.Graph.Nodes()))
		}
	})
}
