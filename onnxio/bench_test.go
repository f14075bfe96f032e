package onnxio

import (
	"path/filepath"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
)

// bigModel is an Identity over one float initializer of n elements.
func bigModel(tb testing.TB, n int) *graph.Model {
	g := graph.NewGraph("big")
	w, err := g.AddInitializer(&graph.Tensor{Name: "W", DType: graph.Float, Shape: []int64{int64(n)}, Raw: make([]byte, 4*n)})
	if err != nil {
		tb.Fatal(err)
	}
	id, err := g.AddNode("Identity", "", "id", []*graph.Value{w}, []string{"y"})
	if err != nil {
		tb.Fatal(err)
	}
	g.Outputs = append(g.Outputs, id.Output(0))
	return &graph.Model{Graph: g, IRVersion: 8, Opsets: []graph.OpsetImport{{Version: 17}}}
}

// BenchmarkLoad100MB loads a model holding 100 MB of weights inline.
func BenchmarkLoad100MB(b *testing.B) {
	path := filepath.Join(b.TempDir(), "big.onnx")
	if err := Save(bigModel(b, 25<<20), path, nil); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(100 << 20)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(path); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncode100MB encodes a loaded 100 MB model with one tensor edited.
func BenchmarkEncode100MB(b *testing.B) {
	path := filepath.Join(b.TempDir(), "big.onnx")
	if err := Save(bigModel(b, 25<<20), path, nil); err != nil {
		b.Fatal(err)
	}
	m, err := Load(path)
	if err != nil {
		b.Fatal(err)
	}
	m.Graph.Initializers[0].Init.Raw[0] = 1
	b.SetBytes(100 << 20)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(m); err != nil {
			b.Fatal(err)
		}
	}
}
