package onnxrt

import (
	"bytes"
	"os"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/onnxio"
)

// TestNCHWcProbeModel: the embedded probe is the model its comment
// describes, as graph and onnxio encode it.
func TestNCHWcProbeModel(t *testing.T) {
	g := graph.NewGraph("nchwc_probe")
	x, err := g.AddInput("x", &graph.Type{DType: graph.Float, Shape: graph.DimsOf([]int64{1, 4, 1, 1})})
	if err != nil {
		t.Fatal(err)
	}
	n, err := g.AddNode("ReorderInput", "com.microsoft.nchwc", "reorder", []*graph.Value{x}, []string{"y"})
	if err != nil {
		t.Fatal(err)
	}
	y := n.Output(0)
	y.Type = &graph.Type{DType: graph.Float}
	g.Outputs = []*graph.Value{y}
	want, err := onnxio.Encode(&graph.Model{Graph: g, IRVersion: 8,
		Opsets: []graph.OpsetImport{{Domain: "", Version: 17}, {Domain: "com.microsoft.nchwc", Version: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("UNLEARN_WRITE_PROBE") == "1" {
		if err := os.WriteFile("nchwc_probe.onnx", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(nchwcProbe, want) {
		t.Fatalf("nchwc_probe.onnx (%d bytes) is not the probe model (%d bytes); run UNLEARN_WRITE_PROBE=1 go test ./onnxrt -run TestNCHWcProbeModel", len(nchwcProbe), len(want))
	}
}
