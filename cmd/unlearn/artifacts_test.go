package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/train/autodiff"
)

var onnxGo struct {
	once sync.Once
	path string
	err  error
}

// decodeWithOnnxGo checks that github.com/owulveryck/onnx-go, an independent
// reader, decodes a model the tool wrote (through onnxio's helper command:
// both packages register the same protobuf names, so it runs in its own
// process).
func decodeWithOnnxGo(t *testing.T, path string) {
	t.Helper()
	onnxGo.once.Do(func() {
		onnxGo.path = filepath.Join(filepath.Dir(binPath), "onnxgoread") // removed with the CLI binary
		cmd := exec.Command("go", "build", "-o", onnxGo.path, "./onnxio/internal/onnxgoread")
		cmd.Dir = testutil.RepoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			onnxGo.err = err
			onnxGo.path = string(out)
		}
	})
	if onnxGo.err != nil {
		t.Fatalf("building onnxgoread: %v\n%s", onnxGo.err, onnxGo.path)
	}
	out, err := exec.Command(onnxGo.path, path).Output()
	if err != nil {
		t.Fatalf("onnxgoread %s: %v", path, err)
	}
	var rep struct {
		Ops   []string `json:"ops"`
		Error string   `json:"error"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Error != "" || len(rep.Ops) == 0 {
		t.Fatalf("onnx-go cannot decode %s: %q (%d ops)", path, rep.Error, len(rep.Ops))
	}
}

func TestArtifacts(t *testing.T) {
	for _, name := range []string{"resnet_small_train.onnx", "vit_small.onnx"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "art")
			r := runCLI(t, "artifacts", "--model", filepath.Join("testdata", name), "--out", dir)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			b, err := os.ReadFile(filepath.Join(dir, "artifacts.json"))
			if err != nil {
				t.Fatal(err)
			}
			var doc autodiff.ArtifactsDoc
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			roles := map[string]int{}
			for _, io := range doc.Training.Inputs {
				roles[io.Role]++
			}
			for _, io := range doc.Training.Outputs {
				roles[io.Role]++
			}
			if doc.Schema != "unlearn.artifacts/v1" || roles["images"] != 1 || roles["labels"] != 1 || roles["weights"] != 1 ||
				roles["loss"] != 1 || roles["logits"] != 1 || roles["param"] != len(doc.Params) || roles["grad"] != len(doc.Params) {
				t.Fatalf("roles %v, %d params", roles, len(doc.Params))
			}
			for _, f := range []string{"training.onnx", "inference.onnx"} {
				p := filepath.Join(dir, f)
				if _, err := onnxio.Load(p); err != nil {
					t.Fatal(err)
				}
				decodeWithOnnxGo(t, p)
			}
		})
	}
	// The trained model of `unlearn train` is decoded by onnx-go too.
	out := filepath.Join(t.TempDir(), "m.onnx")
	if r := runCLI(t, "train", "--model", model(t), "--data", "testdata/fashion", "--epochs", "1", "--out", out, "--threads", "2"); r.code != 0 {
		t.Fatalf("train: %s", r.stderr)
	}
	decodeWithOnnxGo(t, out)
}

func TestArtifactsBadInput(t *testing.T) {
	dir := t.TempDir()
	wantError(t, runCLI(t, "artifacts", "--model", model(t), "--out", filepath.Join(dir, "a"), "--bn", "sometimes"), exitUsage, "--bn")
	wantError(t, runCLI(t, "artifacts", "--model", model(t), "--out", filepath.Join(dir, "a"), "--loss", "hinge"), exitUsage, "--loss")
	wantError(t, runCLI(t, "artifacts", "--model", model(t), "--out", filepath.Join(dir, "no", "a")), exitError, "does not exist")
	wantError(t, runCLI(t, "artifacts", "--model", model(t), "--out", filepath.Join(dir, "a"), "--params", "nope"), exitError, "nope")
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("left behind: %v", entries)
	}
}
