package onnxio

import (
	"fmt"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/proto"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/onnxio/onnxpb"
)

// ReadTensorFile decodes a file holding one serialized TensorProto, the
// format of the ONNX backend test data (test_data_set_N/input_M.pb). External
// data is resolved relative to the file's folder.
func ReadTensorFile(path string) (*graph.Tensor, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	tp := &onnxpb.TensorProto{}
	if err := proto.Unmarshal(data, tp); err != nil {
		return nil, fmt.Errorf("%s: %w: not a TensorProto: %v", path, ErrInvalid, err)
	}
	d := &decoder{baseDir: filepath.Dir(path)}
	defer d.close()
	t, err := d.decodeTensor(tp)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}
