package onnxio

import (
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/onnxio/onnxpb"
)

func TestReadTensorFile(t *testing.T) {
	dir := t.TempDir()
	// Typed field (float_data), not raw_data: the decoder must convert it.
	tp := &onnxpb.TensorProto{
		Name:      proto.String("x"),
		DataType:  proto.Int32(int32(graph.Float)),
		Dims:      []int64{2, 2},
		FloatData: []float32{1, -2, 3.5, 4},
	}
	b, err := proto.Marshal(tp)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "input_0.pb")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadTensorFile(p)
	if err != nil {
		t.Fatal(err)
	}
	v, err := got.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "x" || len(got.Shape) != 2 || got.Shape[0] != 2 || v[2] != 3.5 || v[1] != -2 {
		t.Fatalf("got %s %v %v", got.Name, got.Shape, v)
	}
	// Data that does not fit the shape is refused, naming the file.
	tp.Dims = []int64{3, 2}
	b, _ = proto.Marshal(tp)
	os.WriteFile(p, b, 0o644)
	if _, err := ReadTensorFile(p); err == nil {
		t.Fatal("short tensor accepted")
	}
	if _, err := ReadTensorFile(filepath.Join(dir, "missing.pb")); err == nil {
		t.Fatal("missing file accepted")
	}
}
