package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxio"
)

// TestPyTorchExports runs the main command with a short fixed recipe on
// one small CNN exported from PyTorch the four common ways
// (testdata/exports/make_exports.py, issue 29): every run completes; the
// default export, whose batch is fixed at 1, is run on batches of any size
// with a note saying so and written back with its declared shape; and the
// input model's accuracy ("before") of the exports that compute PyTorch's
// eval forward exactly (the PRESERVE export and the eval export with
// dynamic_axes) counts as many correct examples as PyTorch did
// (reference.json).
func TestPyTorchExports(t *testing.T) {
	testutil.RequireORT(t)
	root := testutil.RepoRoot(t)
	var ref struct {
		Train, Test struct {
			Correct, N int
		}
	}
	b, err := os.ReadFile(filepath.Join(root, "testdata", "exports", "reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ref); err != nil || ref.Train.N != 4000 || ref.Test.N != 1000 {
		t.Fatalf("reference.json: %v: %s", err, b)
	}
	for _, c := range []struct {
		file       string
		fixedBatch bool
		exact      bool // before accuracy equals PyTorch's
	}{
		{"a_default_fixed_batch.onnx", true, false},
		{"b_eval_dynamic.onnx", false, true},
		{"c_preserve_dynamic.onnx", false, true},
		{"d_training_dynamic.onnx", false, false},
	} {
		t.Run(strings.TrimSuffix(c.file, ".onnx"), func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "u.onnx")
			in := filepath.Join("testdata", "exports", c.file)
			r := runCLI(t, "--model", in, "--forget", "testdata/demo/forget_nonIID.txt", "--data", "testdata/fashion",
				"--epochs", "1", "--no-mia", "--out", out, "--threads", "2")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			b, err := os.ReadFile(filepath.Join(dir, "u.metrics.json"))
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Accuracy map[string]float64 `json:"accuracy"`
				Before   struct {
					Accuracy map[string]float64 `json:"accuracy"`
				} `json:"before"`
				Unlearning struct {
					Notes []string `json:"notes"`
				} `json:"unlearning"`
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			correct := func(acc float64, n int) int { return int(math.Round(acc * float64(n))) }
			trainOK, testOK := correct(doc.Before.Accuracy["train"], ref.Train.N), correct(doc.Before.Accuracy["test"], ref.Test.N)
			t.Logf("before: train %d/%d, test %d/%d correct (PyTorch: %d, %d); after 1 epoch: train %.4f, test %.4f, forget %.4f",
				trainOK, ref.Train.N, testOK, ref.Test.N, ref.Train.Correct, ref.Test.Correct,
				doc.Accuracy["train"], doc.Accuracy["test"], doc.Accuracy["forget"])
			if c.exact && (trainOK != ref.Train.Correct || testOK != ref.Test.Correct) {
				t.Errorf("before accuracy: %d train and %d test examples correct, PyTorch %d and %d", trainOK, testOK, ref.Train.Correct, ref.Test.Correct)
			}
			note := strings.Join(doc.Unlearning.Notes, "\n")
			if got := strings.Contains(note, "made symbolic"); got != c.fixedBatch {
				t.Errorf("notes %q: mention of the symbolic batch = %v, want %v", doc.Unlearning.Notes, got, c.fixedBatch)
			}
			if c.fixedBatch && !strings.Contains(note, `"input.1"`) {
				t.Errorf("notes %q do not name the input", doc.Unlearning.Notes)
			}
			// The written model keeps the declared input and output shapes.
			orig, err := onnxio.Load(filepath.Join(root, in))
			if err != nil {
				t.Fatal(err)
			}
			um, err := onnxio.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range orig.Graph.Inputs {
				if got, want := um.Graph.Inputs[i].Type.Shape, v.Type.Shape; !slices.Equal(got, want) {
					t.Errorf("output model's input %q has shape %v, the input model declares %v", v.Name, got, want)
				}
			}
			if got, want := um.Graph.Outputs[0].Type.Shape, orig.Graph.Outputs[0].Type.Shape; !slices.Equal(got, want) {
				t.Errorf("output model's logits have shape %v, the input model declares %v", got, want)
			}
		})
	}
}

// TestInspectFixedBatch: inspect says that the default export's batch is
// fixed and how to re-export it; an export with dynamic_axes gets no such
// line.
func TestInspectFixedBatch(t *testing.T) {
	r := runCLI(t, "inspect", "--model", "testdata/exports/a_default_fixed_batch.onnx")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"batch     fixed at 1", "makes the batch symbolic", `dynamic_axes={"input.1": {0: "batch"}, "24": {0: "batch"}}`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	r = runCLI(t, "inspect", "--model", "testdata/exports/e_fixed_batch_view.onnx")
	if r.code != 0 || !strings.Contains(r.stdout, "refuses") || !strings.Contains(r.stdout, `Reshape node "/Reshape"`) {
		t.Errorf("hard-coded batch: exit %d, stdout:\n%s", r.code, r.stdout)
	}
	r = runCLI(t, "inspect", "--model", "testdata/exports/c_preserve_dynamic.onnx")
	if r.code != 0 || strings.Contains(r.stdout, "fixed at") {
		t.Errorf("dynamic batch: exit %d, stdout:\n%s", r.code, r.stdout)
	}
}
