package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/inspect"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxio"
)

// The CLI is tested as users run it: the binary is built once and executed,
// so exit codes, stderr and the files left behind are what a pipeline sees.

var binPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "unlearn-cli-")
	if err != nil {
		panic(err)
	}
	binPath = filepath.Join(dir, "unlearn")
	// The binary lives in a temporary folder with no library beside it and
	// onnxrt does not search the working directory: it finds the
	// repository's .ort/ through ONNXRUNTIME_LIB, which it inherits.
	if err := testutil.ExportLibPath(); err != nil {
		fmt.Fprintln(os.Stderr, "setting ONNXRUNTIME_LIB:", err)
		os.Exit(1)
	}
	out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
	if err != nil {
		os.Stderr.Write(out)
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	code           int
	stdout, stderr string
	// peakKB is the process's peak resident set size (0 in process);
	// wall the time it ran.
	peakKB int64
	wall   time.Duration
}

func runCLI(t *testing.T, args ...string) result {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Dir = testutil.RepoRoot(t)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var peak int64
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peak = ru.Maxrss // kilobytes on Linux
		}
	}
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("running %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return result{code, so.String(), se.String(), peak, wall}
}

// wantError checks the contract for bad input: the given exit code, exactly
// one line on stderr that starts with "unlearn: error:" and contains every
// culprit string.
func wantError(t *testing.T, r result, code int, culprits ...string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d; stderr: %s", r.code, code, r.stderr)
	}
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "unlearn: error: ") {
		t.Fatalf("want one error line on stderr, got %q", r.stderr)
	}
	for _, c := range culprits {
		if !strings.Contains(lines[0], c) {
			t.Errorf("error %q does not name %q", lines[0], c)
		}
	}
}

func model(t *testing.T) string {
	return filepath.Join(testutil.RepoRoot(t), "testdata", "resnet_small_train.onnx")
}

func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestInspectBundledModels(t *testing.T) {
	// BN preserved: every conv's channels with their BN scale and shift, by
	// state_dict name.
	r := runCLI(t, "inspect", "--model", model(t), "--json", "-")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var rep inspect.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Schema != "unlearn.inspect/v1" || rep.Parameters.Elements != 77754 || rep.Classifier != "fc.weight" {
		t.Fatalf("summary %+v classifier %q", rep.Parameters, rep.Classifier)
	}
	if len(rep.Unsupported) != 0 {
		t.Errorf("unsupported ops reported: %v", rep.Unsupported)
	}
	found := false
	for _, l := range rep.Layers {
		if l.Name != "layer1.conv1.weight" {
			continue
		}
		found = true
		var names []string
		for _, m := range l.Members {
			names = append(names, m.Name+":"+m.Role)
		}
		want := "layer1.conv1.weight:weight layer1.bn1.weight:norm_scale layer1.bn1.bias:norm_bias"
		if strings.Join(names, " ") != want || l.Channels != 16 {
			t.Errorf("layer1.conv1: %d channels, members %v; want 16 and %s", l.Channels, names, want)
		}
	}
	if !found {
		t.Error("layer1.conv1.weight not listed")
	}
	// The text form names the state_dict keys too.
	r = runCLI(t, "inspect", "--model", model(t))
	if r.code != 0 || !strings.Contains(r.stdout, "layer1.bn1.weight [16] norm_scale@0") {
		t.Errorf("text output lacks the BN members:\n%s", r.stdout)
	}

	// Fused export: no BN, channels still grouped (weight + folded bias).
	r = runCLI(t, "inspect", "--model", "testdata/resnet_small_fused.onnx", "--json", "-")
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v: %s", err, r.stderr)
	}
	if rep.Model.BatchNorm != 0 || len(rep.Layers) != 10 || rep.Parameters.Neurons != 346 {
		t.Fatalf("fused: %d BN, %d layers, %d neurons", rep.Model.BatchNorm, len(rep.Layers), rep.Parameters.Neurons)
	}
	for _, l := range rep.Layers {
		if l.Op == "Conv" && (len(l.Members) != 2 || l.Members[1].Role != graph.KindBias) {
			t.Errorf("fused conv %s members %v", l.Name, l.Members)
		}
	}
}

func TestInspectUnsupportedOp(t *testing.T) {
	g := graph.NewGraph("g")
	x, _ := g.AddInput("x", &graph.Type{DType: graph.Float, Shape: []graph.Dim{{Param: "N"}, {Size: 4}}})
	w, _ := g.AddInitializer(graph.NewFloat32("w", []int64{4, 3}, make([]float32, 12)))
	mm, _ := g.AddNode("MatMul", "", "mm", []*graph.Value{x, w}, []string{"h"})
	odd, _ := g.AddNode("Frobnicate", "example.com", "odd", []*graph.Value{mm.Output(0)}, []string{"y"})
	g.Outputs = []*graph.Value{odd.Output(0)}
	m := &graph.Model{Graph: g, IRVersion: 8, Opsets: []graph.OpsetImport{{Version: 17}, {Domain: "example.com", Version: 1}}}
	p := filepath.Join(t.TempDir(), "odd.onnx")
	if err := onnxio.Save(m, p, nil); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "inspect", "--model", p, "--json", "-")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var rep inspect.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Unsupported) != 1 || rep.Unsupported[0].Op != "Frobnicate" || rep.Unsupported[0].Node != "odd" {
		t.Fatalf("unsupported = %+v", rep.Unsupported)
	}
}

func TestBadModels(t *testing.T) {
	good, err := os.ReadFile(model(t))
	if err != nil {
		t.Fatal(err)
	}
	noParams := func() string {
		g := graph.NewGraph("g")
		x, _ := g.AddInput("x", &graph.Type{DType: graph.Float, Shape: []graph.Dim{{Size: 1}, {Size: 4}}})
		n, _ := g.AddNode("Relu", "", "r", []*graph.Value{x}, []string{"y"})
		g.Outputs = []*graph.Value{n.Output(0)}
		p := filepath.Join(t.TempDir(), "noparams.onnx")
		if err := onnxio.Save(&graph.Model{Graph: g, IRVersion: 8, Opsets: []graph.OpsetImport{{Version: 17}}}, p, nil); err != nil {
			t.Fatal(err)
		}
		return p
	}()
	cases := []struct {
		name, path string
		culprits   []string
	}{
		{"truncated", writeFile(t, "truncated.onnx", good[:len(good)/3]), []string{"truncated.onnx"}},
		{"empty", writeFile(t, "empty.onnx", nil), []string{"empty.onnx"}},
		{"not onnx", writeFile(t, "notes.onnx", []byte("these are not the weights you are looking for\n")), []string{"notes.onnx", "not an ONNX model"}},
		{"missing", filepath.Join(t.TempDir(), "nope.onnx"), []string{"nope.onnx"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, runCLI(t, "inspect", "--model", c.path), exitError, c.culprits...)
			wantError(t, runCLI(t, "eval", "--model", c.path, "--data", "testdata/fashion"), exitError, c.culprits...)
		})
	}
	// Evaluating a parameter-free model is harmless; inspecting it says
	// there is nothing to unlearn.
	wantError(t, runCLI(t, "inspect", "--model", noParams), exitError, "noparams.onnx", "no trainable parameters")
}

func TestEvalBundled(t *testing.T) {
	out := filepath.Join(t.TempDir(), "metrics.json")
	r := runCLI(t, "eval", "--model", model(t), "--data", "testdata/fashion", "--forget", "testdata/demo/forget_nonIID.txt", "--json", out)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema   string             `json:"schema"`
		Accuracy map[string]float64 `json:"accuracy"`
		Counts   map[string]int     `json:"counts"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != "unlearn.metrics/v1" || doc.Counts["forget"] != 400 || doc.Counts["retain"] != 3600 || doc.Counts["test"] != 1000 {
		t.Fatalf("doc %+v", doc)
	}
	// PyTorch's accuracies for the same model and data (testdata/ref/manifest.json).
	var man struct {
		Models map[string]struct {
			TrainAcc  float64 `json:"train_acc"`
			TestAcc   float64 `json:"test_acc"`
			ForgetAcc float64 `json:"forget_nonIID_acc"`
			RetainAcc float64 `json:"retain_acc"`
		} `json:"models"`
	}
	mb, err := os.ReadFile(testutil.Testdata(t, "ref", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(mb, &man); err != nil {
		t.Fatal(err)
	}
	ref := man.Models["resnet_small_train"]
	// One example of 1000 is 0.001; float32 differences may flip a borderline
	// prediction or two.
	for k, want := range map[string]float64{"train": ref.TrainAcc, "test": ref.TestAcc, "forget": ref.ForgetAcc, "retain": ref.RetainAcc} {
		if d := doc.Accuracy[k] - want; d > 0.0025 || d < -0.0025 {
			t.Errorf("%s accuracy %.4f, PyTorch %.4f", k, doc.Accuracy[k], want)
		}
	}
}

func TestEvalBadData(t *testing.T) {
	dir := t.TempDir()
	// A dataset of 3×32×32 images for a 1×28×28 model.
	npz := filepath.Join(dir, "rgb32.npz")
	err := data.WriteNPZ(npz, map[string]*data.Array{
		"x_train": data.NewF32([]int{4, 3, 32, 32}, make([]float32, 4*3*32*32)),
		"y_train": data.NewI64([]int{4}, []int64{0, 1, 2, 3}),
		"x_test":  data.NewF32([]int{2, 3, 32, 32}, make([]float32, 2*3*32*32)),
		"y_test":  data.NewI64([]int{2}, []int64{0, 1}),
	})
	if err != nil {
		t.Fatal(err)
	}
	wantError(t, runCLI(t, "eval", "--model", model(t), "--data", npz), exitError, "resnet_small_train.onnx", "input", "28")
	wantError(t, runCLI(t, "eval", "--model", model(t), "--data", filepath.Join(dir, "missing")), exitError, "missing")
}

func TestEvalBadIDs(t *testing.T) {
	cases := []struct {
		name, content string
		culprits      []string
	}{
		{"out of range", "1\n2\n4000\n", []string{"ids.txt:3:", "4000"}},
		{"negative", "# comment\n-1\n", []string{"ids.txt:2:", "-1"}},
		{"duplicate", "5\n7\n5\n", []string{"ids.txt:3:", "5"}},
		{"non-integer", "5\nfive\n", []string{"ids.txt:2:", "five"}},
		{"fraction", "5\n2.5\n", []string{"ids.txt:2:", "2.5"}},
		{"empty", "# nothing\n\n", []string{"ids.txt", "no ids"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeFile(t, "ids.txt", []byte(c.content))
			out := filepath.Join(t.TempDir(), "m.json")
			r := runCLI(t, "eval", "--model", model(t), "--data", "testdata/fashion", "--forget", p, "--json", out)
			wantError(t, r, exitError, c.culprits...)
			if _, err := os.Stat(out); err == nil {
				t.Error("metrics written despite the error")
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	wantError(t, runCLI(t, "inspect"), exitUsage, "model")
	wantError(t, runCLI(t, "eval", "--model", model(t), "--batch-size", "0"), exitUsage, "--batch-size")
	wantError(t, runCLI(t, "eval", "--model", model(t), "--threads", "-2"), exitUsage, "--threads")
	wantError(t, runCLI(t, "eval", "--model", model(t), "--device", "tpu"), exitUsage, "--device")
	wantError(t, runCLI(t, "eval", "--model", model(t), "--std", "0.5,0"), exitUsage, "--std")
	wantError(t, runCLI(t, "frobnicate"), exitUsage, "frobnicate")
}

func TestJSONToMissingFolder(t *testing.T) {
	out := filepath.Join(t.TempDir(), "no", "such", "dir", "m.json")
	r := runCLI(t, "eval", "--model", model(t), "--data", "testdata/fashion", "--json", out)
	wantError(t, r, exitError, out)
}
