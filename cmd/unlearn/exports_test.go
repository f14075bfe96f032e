package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// TestPyTorchExports runs the main command with its defaults on one small
// CNN exported from PyTorch the four common ways
// (testdata/exports/make_exports.py, issue 29): every run completes; the
// default export, whose batch is fixed at 1, is run on batches of any size
// with a note saying so and written back with its declared shape; the two
// eval exports, which fold BatchNormalization into the convolutions, get
// the folded-model warning on the terminal before any work and in
// metrics.json, the others not; no run's test accuracy falls more than
// unlearn.MaxTestDrop below the input's; and the
// input model's accuracy ("before") of the exports that compute PyTorch's
// eval forward exactly (the PRESERVE export and the eval export with
// dynamic_axes) counts as many correct examples as PyTorch did
// (reference.json).
func TestPyTorchExports(t *testing.T) {
	testutil.RequireORT(t)
	root := testutil.RepoRoot(t)
	ref := exportsReference(t, root)
	for _, c := range []exportCase{
		{"a_default_fixed_batch.onnx", true, false, true},
		{"b_eval_dynamic.onnx", false, true, true},
		{"c_preserve_dynamic.onnx", false, true, false},
		{"d_training_dynamic.onnx", false, false, false},
	} {
		t.Run(strings.TrimSuffix(c.file, ".onnx"), func(t *testing.T) { runExport(t, root, ref, c) })
	}
}

// exportsRef is testdata/exports/reference.json: PyTorch's counts of
// correct examples of the exported weights.
type exportsRef struct {
	Train, Test struct {
		Correct, N int
	}
}

func exportsReference(t *testing.T, root string) exportsRef {
	t.Helper()
	var ref exportsRef
	b, err := os.ReadFile(filepath.Join(root, "testdata", "exports", "reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ref); err != nil || ref.Train.N != 4000 || ref.Test.N != 1000 {
		t.Fatalf("reference.json: %v: %s", err, b)
	}
	return ref
}

// exportCase is one export of testdata/exports and what the main command
// must say about it.
type exportCase struct {
	file       string
	fixedBatch bool
	exact      bool // before accuracy equals PyTorch's
	folded     bool
}

// runExport runs the main command with its defaults on one export and
// checks what TestPyTorchExports lists.
func runExport(t *testing.T, root string, ref exportsRef, c exportCase) {
	dir := t.TempDir()
	out := filepath.Join(dir, "u.onnx")
	in := filepath.Join("testdata", "exports", c.file)
	r := runCLI(t, "--model", in, "--forget", "testdata/demo/forget_nonIID.txt", "--data", "testdata/fashion",
		"--no-mia", "--out", out, "--threads", "2")
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
	t.Logf("before: train %d/%d, test %d/%d correct (PyTorch: %d, %d); after: train %.4f, test %.4f, forget %.4f",
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
	const folded = "note: the export folded BatchNormalization into 2 convolution(s)"
	if got := strings.Contains(note, folded[len("note: "):]); got != c.folded {
		t.Errorf("notes %q: folded-model warning = %v, want %v", doc.Unlearning.Notes, got, c.folded)
	}
	// Before any work: ahead of the localization line.
	if i, j := strings.Index(r.stderr, folded), strings.Index(r.stderr, "localizing:"); c.folded && (i < 0 || j < 0 || i > j) {
		t.Errorf("the folded-model warning is not printed before localizing:\n%s", r.stderr)
	}
	// The written model's audit line names the convolution weights
	// outside the mask that carry the restored normalization's
	// statistics.
	if got := strings.Contains(r.stdout+r.stderr, "carry their channels' updated normalization statistics"); got != c.folded {
		t.Errorf("audit line names folded statistics = %v, want %v:\n%s", got, c.folded, r.stdout)
	}
	if drop := doc.Before.Accuracy["test"] - doc.Accuracy["test"]; drop > unlearn.MaxTestDrop {
		t.Errorf("test accuracy collapsed: %.4f → %.4f", doc.Before.Accuracy["test"], doc.Accuracy["test"])
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

// TestInspectFoldedBatchNorm: inspect says that an eval export folded
// BatchNormalization into the convolutions, and that a TRAINING export
// moved the running statistics, each with what it costs and how to
// re-export, and what normalization the model records; the PRESERVE
// export gets neither line (also in --json).
func TestInspectFoldedBatchNorm(t *testing.T) {
	r := runCLI(t, "inspect", "--model", "testdata/exports/b_eval_dynamic.onnx")
	// The paragraphs are wrapped onto indented lines: read them as one.
	words := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	for _, want := range []string{"batchnorm none: the export folded BatchNormalization into 2 convolution(s)", "onnx::Conv_26", "lower learning rate", "training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False"} {
		if r.code != 0 || !strings.Contains(words(r.stdout), want) {
			t.Errorf("exit %d, stdout lacks %q:\n%s", r.code, want, r.stdout)
		}
	}
	r = runCLI(t, "inspect", "--json", "-", "--model", "testdata/exports/c_preserve_dynamic.onnx")
	if r.code != 0 || strings.Contains(r.stdout, "folded_batchnorm") || strings.Contains(r.stdout, "training_export") || !strings.Contains(r.stdout, `"batchnorm": 2`) {
		t.Errorf("BN kept: exit %d, stdout:\n%s", r.code, r.stdout)
	}
	r = runCLI(t, "inspect", "--model", "testdata/exports/d_training_dynamic.onnx")
	for _, want := range []string{"2 BatchNormalization node(s) are in training form", "TrainingMode.TRAINING", "running mean and variance", "state_dict", "TrainingMode.PRESERVE", "normalize none recorded", "--mean/--std"} {
		if r.code != 0 || !strings.Contains(words(r.stdout), want) {
			t.Errorf("TRAINING export: exit %d, stdout lacks %q:\n%s", r.code, want, r.stdout)
		}
	}
	r = runCLI(t, "inspect", "--json", "-", "--model", "testdata/exports/a_default_fixed_batch.onnx")
	if r.code != 0 || !strings.Contains(r.stdout, `"folded_batchnorm": "the export folded`) {
		t.Errorf("folded, --json: exit %d, stdout:\n%s", r.code, r.stdout)
	}
}

// TestDynamicBatchOutput: with --dynamic-batch the default export's output
// is written with a symbolic batch dimension (input and logits), which
// eval then runs without the fixed-batch note; without it the declared
// shape stays (TestPyTorchExports).
func TestDynamicBatchOutput(t *testing.T) {
	testutil.RequireORT(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "u.onnx")
	r := runCLI(t, "--model", "testdata/exports/a_default_fixed_batch.onnx", "--forget", "testdata/demo/forget_nonIID.txt",
		"--data", "testdata/fashion", "--method", "finetune", "--epochs", "1", "--no-mia", "--dynamic-batch", "--out", out, "--threads", "2")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	um, err := onnxio.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []*graph.Value{um.Graph.Inputs[0], um.Graph.Outputs[0]} {
		if d := v.Type.Shape[0]; d.Known() || d.Param != graph.BatchParam {
			t.Errorf("%s: first dimension %v, want symbolic %q", v.Name, d, graph.BatchParam)
		}
	}
	r = runCLI(t, "eval", "--model", out, "--data", "testdata/fashion", "--no-mia")
	if r.code != 0 || strings.Contains(r.stderr, "fixed batch") {
		t.Errorf("eval of the output: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// TestDynamoExport runs the checks of TestPyTorchExports on the small CNN
// exported by PyTorch's default exporter of PyTorch 2.9 and later (dynamo),
// with README's recipe as written (testdata/exports/make_dynamo.py, which
// needs such a PyTorch: this Debian's is 1.13): the run completes, the input
// model's accuracy counts PyTorch's correct examples, and the folded-model
// warning appears exactly when the file has no BatchNormalization left.
func TestDynamoExport(t *testing.T) {
	testutil.RequireORT(t)
	root := testutil.RepoRoot(t)
	ref := exportsReference(t, root)
	b, err := os.ReadFile(filepath.Join(root, "testdata", "exports", "dynamo.json"))
	if os.IsNotExist(err) {
		t.Skip("testdata/exports/dynamo.json: not generated yet (make_dynamo.py needs PyTorch 2.9 or later)")
	}
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Torch          string
		Error          string
		PyTorchCorrect struct{ Train, Test int } `json:"pytorch_correct"`
		File           struct {
			OpTypes map[string]int `json:"op_types"`
		}
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("dynamo.json: %v", err)
	}
	if doc.Error != "" {
		t.Skipf("PyTorch %s's default exporter failed on README's recipe (dynamo.json): %s", doc.Torch, doc.Error)
	}
	if doc.PyTorchCorrect.Train != ref.Train.Correct || doc.PyTorchCorrect.Test != ref.Test.Correct {
		t.Fatalf("dynamo.json: PyTorch %s counts %d and %d correct, reference.json %d and %d: not the same weights",
			doc.Torch, doc.PyTorchCorrect.Train, doc.PyTorchCorrect.Test, ref.Train.Correct, ref.Test.Correct)
	}
	runExport(t, root, ref, exportCase{file: "f_dynamo_default.onnx", exact: true, folded: doc.File.OpTypes["BatchNormalization"] == 0})
	r := runCLI(t, "inspect", "--model", "testdata/exports/f_dynamo_default.onnx")
	if r.code != 0 {
		t.Errorf("inspect: exit %d: %s", r.code, r.stderr)
	}
}
