package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/unlearn-tool/unlearn/onnxio"
)

func TestTrainOracleEpoch(t *testing.T) {
	in, err := os.ReadFile(model(t))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "oracle.onnx")
	r := runCLI(t, "train", "--model", model(t), "--data", "testdata/fashion", "--exclude", "testdata/demo/forget_nonIID.txt",
		"--epochs", "1", "--lr", "0.01", "--out", out, "--threads", "2")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	after, _ := os.ReadFile(model(t))
	if !bytes.Equal(in, after) {
		t.Fatal("the input model changed")
	}
	m, err := onnxio.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := onnxio.Load(model(t))
	// Same graph, names and opset; BatchNormalization in inference form.
	if len(m.Graph.Nodes()) != len(orig.Graph.Nodes()) || m.Opset("") != orig.Opset("") {
		t.Fatalf("graph changed: %d nodes opset %d, was %d opset %d", len(m.Graph.Nodes()), m.Opset(""), len(orig.Graph.Nodes()), orig.Opset(""))
	}
	for _, n := range m.Graph.Nodes() {
		if n.OpType == "BatchNormalization" && (n.AttrInt("training_mode", 0) != 0 || len(n.Outputs()) != 1) {
			t.Fatalf("%s left in training form", n.Name)
		}
	}
	changed := 0
	for _, v := range orig.Graph.Initializers {
		w := m.Graph.LocalValue(v.Name)
		if w == nil || w.Init == nil {
			t.Fatalf("initializer %s missing", v.Name)
		}
		if !bytes.Equal(w.Init.Raw, v.Init.Raw) {
			changed++
		}
	}
	if changed == 0 {
		t.Fatal("training changed no initializer")
	}
}

func TestTrainBadInput(t *testing.T) {
	dir := t.TempDir()
	wantError(t, runCLI(t, "train", "--model", model(t), "--out", model(t)), exitUsage, "--out", "input model")
	wantError(t, runCLI(t, "train", "--model", model(t), "--out", filepath.Join(dir, "no", "m.onnx")), exitError, "does not exist")
	wantError(t, runCLI(t, "train", "--model", model(t), "--out", filepath.Join(dir, "m.onnx"), "--epochs", "-1"), exitUsage, "--epochs")
	wantError(t, runCLI(t, "train", "--model", model(t), "--out", filepath.Join(dir, "m.onnx"), "--lr", "0"), exitUsage, "--lr")
	wantError(t, runCLI(t, "train", "--model", model(t), "--out", filepath.Join(dir, "m.onnx"), "--schedule", "zigzag"), exitUsage, "--schedule")
	if _, err := os.Stat(filepath.Join(dir, "m.onnx")); err == nil {
		t.Fatal("output written despite errors")
	}
}
