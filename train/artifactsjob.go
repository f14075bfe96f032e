package train

import (
	"errors"
	"strings"

	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/train/autodiff"
)

// ArtifactsJob writes a model's training and inference graphs into the
// folder Dir (the artifacts command), its settings as a caller states
// them: BN "training" (batch statistics) or "inference" (running
// statistics), Loss "ce" or "kl" (with its Temperature), Params the
// comma-separated initializers to differentiate ("": every trainable
// parameter), and Dropout in training mode.
type ArtifactsJob struct {
	ModelPath, Dir, BN, Loss, Params string
	Temperature                      float64
	Dropout                          bool
}

// Spec checks j's settings and returns the graph's autodiff.Spec; an
// error names the field at fault by its path.
func (j ArtifactsJob) Spec() (autodiff.Spec, error) {
	spec := autodiff.Spec{Dropout: j.Dropout}
	switch j.BN {
	case "training":
		spec.BN = autodiff.BNTraining
	case "inference":
		spec.BN = autodiff.BNInference
	default:
		return spec, setting.FieldErrorf("BN", " %q: must be training or inference", j.BN)
	}
	switch j.Loss {
	case "ce":
		spec.Loss.Kind = autodiff.LossCE
	case "kl":
		spec.Loss.Kind = autodiff.LossKL
		if j.Temperature <= 0 {
			return spec, setting.FieldErrorf("Temperature", " %g: must be positive", j.Temperature)
		}
		spec.Loss.Temperature = float32(j.Temperature)
	default:
		return spec, setting.FieldErrorf("Loss", " %q: must be ce or kl", j.Loss)
	}
	if j.Params != "" {
		for _, s := range strings.Split(j.Params, ",") {
			spec.Params = append(spec.Params, strings.TrimSpace(s))
		}
	}
	return spec, nil
}

// WriteArtifacts builds j's graphs and writes them into j.Dir
// (ArtifactSet.WriteDir); a folder with files in it is an error about Dir.
func WriteArtifacts(j ArtifactsJob) (*ArtifactSet, error) {
	spec, err := j.Spec()
	if err != nil {
		return nil, err
	}
	set, err := BuildArtifacts(j.ModelPath, spec)
	if err != nil {
		return nil, err
	}
	if err := set.WriteDir(j.Dir); err != nil {
		if errors.Is(err, ErrDirNotEmpty) {
			return nil, &setting.Error{Field: "Dir", Msg: setting.Msgf(" %s", err), Err: err}
		}
		return nil, err
	}
	return set, nil
}
