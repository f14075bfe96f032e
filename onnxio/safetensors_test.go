// The tests of Safetensors are an external test package: they read the
// bundled models through internal/testutil, which imports onnxrt, which
// imports onnxio.
package onnxio_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/unlearn-tool/unlearn/internal/safetensors"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxio"
)

func TestSafetensorsBundledModel(t *testing.T) {
	m, err := onnxio.Load(testutil.Testdata(t, "resnet_small_train.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := onnxio.Safetensors(m, onnxio.SafetensorsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ts, meta, err := safetensors.Read(bytes.NewReader(f.Data))
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != f.Tensors || meta["format"] != "pt" || f.Params == 0 {
		t.Fatalf("%d tensors read, %d reported, %d params, metadata %v", len(ts), f.Tensors, f.Params, meta)
	}
	byName := map[string]safetensors.Tensor{}
	for _, x := range ts {
		if onnxio.GeneratedName(x.Name) {
			t.Errorf("exporter-made name %q written without All", x.Name)
		}
		byName[x.Name] = x
	}
	// The classifier's weight goes out under its state_dict key with the
	// initializer's bytes.
	w, ok := byName["fc.weight"]
	if !ok || w.DType != "F32" || len(w.Shape) != 2 {
		t.Fatalf("fc.weight: %+v (present %v)", w.Shape, ok)
	}
	if v := m.Graph.Value("fc.weight"); v == nil || !bytes.Equal(v.Init.Raw, w.Data) {
		t.Error("fc.weight data differs from the initializer")
	}
}

func TestSafetensorsRefusesGeneratedParameterNames(t *testing.T) {
	path := testutil.Testdata(t, "resnet_small_fused.onnx")
	m, err := onnxio.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = onnxio.Safetensors(m, onnxio.SafetensorsOptions{})
	var ge *onnxio.GeneratedParamsError
	if !errors.As(err, &ge) || ge.Generated == 0 || ge.Generated > ge.Params || !onnxio.GeneratedName(ge.Example) {
		t.Fatalf("error %v; want a *onnxio.GeneratedParamsError", err)
	}
	if m, err = onnxio.Load(path); err != nil {
		t.Fatal(err)
	}
	f, err := onnxio.Safetensors(m, onnxio.SafetensorsOptions{All: true})
	if err != nil || f.Tensors < ge.Params || len(f.Skipped) != 0 {
		t.Fatalf("with All: %v, %+v", err, f)
	}
}
