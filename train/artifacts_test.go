package train

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/train/autodiff"
)

func TestBuildArtifactsWriteDir(t *testing.T) {
	src := testutil.Testdata(t, "resnet_small_train.onnx")
	set, err := BuildArtifacts(src, autodiff.Spec{BN: autodiff.BNTraining, Loss: autodiff.Loss{Kind: autodiff.LossCE}})
	if err != nil {
		t.Fatal(err)
	}
	d := set.Doc
	if d.Schema != autodiff.ArtifactsSchema || d.Model.Path != src || len(d.Model.SHA256) != 64 || d.Model.BN != "training" {
		t.Errorf("doc model %+v", d.Model)
	}
	if len(d.Params) == 0 || len(d.Params) != len(set.Training.Params) || len(d.BN) == 0 {
		t.Errorf("%d params, %d batchnorm entries", len(d.Params), len(d.BN))
	}
	if len(d.Inference.Inputs) != 1 || d.Inference.Inputs[0].Role != "images" || len(d.Inference.Outputs) != 1 {
		t.Errorf("inference inputs %+v outputs %+v", d.Inference.Inputs, d.Inference.Outputs)
	}
	// The training graph takes every differentiated parameter as input.
	inputs := map[string]bool{}
	for _, v := range set.Training.Model.Graph.Inputs {
		inputs[v.Name] = true
	}
	for _, p := range d.Params {
		if !inputs[p] {
			t.Errorf("parameter %s is no input of the training graph", p)
		}
	}

	dir := filepath.Join(t.TempDir(), "art")
	if err := set.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "artifacts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back autodiff.ArtifactsDoc
	if err := json.Unmarshal(b, &back); err != nil || back.Schema != autodiff.ArtifactsSchema || len(back.Params) != len(d.Params) {
		t.Fatalf("artifacts.json read back: %v, %+v", err, back.Model)
	}
	for _, f := range []string{"training.onnx", "inference.onnx"} {
		if _, err := onnxio.Load(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	// A second write into the filled folder is refused and changes nothing.
	if err := set.WriteDir(dir); !errors.Is(err, ErrDirNotEmpty) {
		t.Fatalf("second write: %v; want ErrDirNotEmpty", err)
	}
	if b2, _ := os.ReadFile(filepath.Join(dir, "artifacts.json")); string(b2) != string(b) {
		t.Error("artifacts.json changed by the refused write")
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	if len(entries) != 1 {
		t.Errorf("%d entries beside the folder; want only it (no temporary left)", len(entries))
	}
}

func TestBuildArtifactsNamesModel(t *testing.T) {
	src := testutil.Testdata(t, "vit_small.onnx")
	_, err := BuildArtifacts(src, autodiff.Spec{Params: []string{"nosuch"}})
	if !errors.Is(err, autodiff.ErrModel) || len(err.Error()) < len(src) || err.Error()[:len(src)] != src {
		t.Fatalf("error %v; want autodiff.ErrModel naming %s", err, src)
	}
}
