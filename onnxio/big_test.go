package onnxio

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/onnxio/onnxpb"
)

// TestOver2GB writes a model file of more than 2 GB without external data
// (as some exporters do), loads it, and saves it back, which must switch to
// external data. It needs about 10 GB of memory and 5 GB of disk, so it runs
// only with ONNXIO_TEST_2GB=1.
func TestOver2GB(t *testing.T) {
	if os.Getenv("ONNXIO_TEST_2GB") != "1" {
		t.Skip("set ONNXIO_TEST_2GB=1 to run (needs ~10 GB of memory)")
	}
	const n = (1<<31)/4 + 1<<20 // float32 elements: 2 GB + 4 MB
	raw := make([]byte, 4*n)
	raw[0], raw[len(raw)-1] = 7, 9
	mp := modelProto(&onnxpb.GraphProto{
		Node: []*onnxpb.NodeProto{node("Identity", "id", []string{"W"}, []string{"y"})},
		Initializer: []*onnxpb.TensorProto{{Name: proto.String("W"), DataType: proto.Int32(int32(graph.Float)),
			Dims: []int64{n}, RawData: raw}},
		Output: []*onnxpb.ValueInfoProto{vinfo("y", graph.Float, n)},
	})
	data := mustMarshal(t, mp)
	raw, mp = nil, nil
	dir := t.TempDir()
	path := filepath.Join(dir, "big.onnx")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d bytes without external data", len(data))
	data = nil
	runtime.GC()
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	w := m.Graph.Value("W").Init
	if len(w.Raw) != 4*n || w.Raw[0] != 7 || w.Raw[len(w.Raw)-1] != 9 {
		t.Fatalf("W: %d bytes, ends %d %d", len(w.Raw), w.Raw[0], w.Raw[len(w.Raw)-1])
	}
	out := filepath.Join(dir, "out.onnx")
	if err := Save(m, out, nil); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(out + ".data")
	if err != nil || st.Size() != 4*n {
		t.Fatalf("external data: %v %v", st, err)
	}
}
