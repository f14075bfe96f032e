package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/fsread"
	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/train/autodiff"
	"github.com/unlearn-tool/unlearn/train/lowering/cpu"
)

// ErrDirNotEmpty: ArtifactSet.WriteDir found its folder with files in it.
var ErrDirNotEmpty = errors.New("folder exists and is not empty")

// ArtifactSet is what any ONNX runtime needs to train a model without this
// tool: the training graph (training.onnx: forward, loss and every
// parameter's gradient, autodiff.Build), the model in inference form
// (inference.onnx) and their description (artifacts.json,
// autodiff.ArtifactsDoc).
type ArtifactSet struct {
	Training  *autodiff.Artifacts
	Inference *graph.Model
	Doc       *autodiff.ArtifactsDoc
	// ModelPath is the source model, which WriteDir never overwrites.
	ModelPath string
}

// BuildArtifacts reads the model at modelPath and builds its ArtifactSet:
// the training graph of the untied model (graph.UntieIdentityInitializers,
// as the tool trains it) by spec, and the inference form
// (graph.InferenceForm: BatchNormalization and Dropout as at inference).
// A nil spec.Lowering takes cpu.Lowering{}: the forms chosen per shape,
// all of them standard ai.onnx ops that any runtime runs. Errors of the
// graph work name modelPath.
func BuildArtifacts(modelPath string, spec autodiff.Spec) (*ArtifactSet, error) {
	if spec.Lowering == nil {
		spec.Lowering = cpu.Lowering{}
	}
	m, err := onnxio.Load(modelPath)
	if err != nil {
		return nil, err
	}
	if _, err := graph.UntieIdentityInitializers(m.Graph); err != nil {
		return nil, fmt.Errorf("%s: %w", modelPath, err)
	}
	// The training graph takes batches of any size, also from an export
	// with a fixed batch; the inference graph keeps the declared shapes.
	if _, err := graph.MakeBatchSymbolic(m.Graph); err != nil {
		return nil, fmt.Errorf("%s: %w", modelPath, err)
	}
	art, err := autodiff.Build(m, spec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", modelPath, err)
	}
	// A second decoding, not a copy of m: m is untied and the inference
	// graph keeps the exporter's tying.
	inf, err := onnxio.Load(modelPath)
	if err != nil {
		return nil, err
	}
	if _, err := graph.InferenceForm(inf.Graph); err != nil {
		return nil, fmt.Errorf("%s: %w", modelPath, err)
	}
	sum, err := fsread.HashPath(modelPath)
	if err != nil {
		return nil, err
	}
	return &ArtifactSet{Training: art, Inference: inf, ModelPath: modelPath,
		Doc: autodiff.NewArtifactsDoc(art, spec, inf.Graph, modelPath, sum)}, nil
}

// WriteDir writes training.onnx, inference.onnx and artifacts.json into
// dir, which must be absent or an empty folder (else ErrDirNotEmpty) in an
// existing parent. The files go to a temporary folder beside dir
// (internal/outfile) that is renamed into place, so a reader never sees
// half a set, and an error leaves nothing behind.
func (s *ArtifactSet) WriteDir(dir string) error {
	if isDir(dir) {
		entries, _ := os.ReadDir(dir)
		if len(entries) > 0 {
			return fmt.Errorf("%s: %w", dir, ErrDirNotEmpty)
		}
	}
	tmp, err := outfile.TempDir(filepath.Clean(dir))
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
		outfile.Untrack(tmp)
	}()
	if err := onnxio.Save(s.Training.Model, filepath.Join(tmp, "training.onnx"), nil); err != nil {
		return err
	}
	protect := &onnxio.SaveOptions{Protect: []string{s.ModelPath}}
	if err := onnxio.Save(s.Inference, filepath.Join(tmp, "inference.onnx"), protect); err != nil {
		return err
	}
	b, err := json.MarshalIndent(s.Doc, "", "  ")
	if err != nil {
		return err
	}
	if err := outfile.WriteFile(filepath.Join(tmp, "artifacts.json"), append(b, '\n')); err != nil {
		return err
	}
	if isDir(dir) {
		if err := os.Remove(dir); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		return err
	}
	ok = true
	return nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
