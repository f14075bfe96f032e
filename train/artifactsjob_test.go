package train

import (
	"errors"
	"testing"

	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/train/autodiff"
)

// TestArtifactsJobSpec: the settings map onto the Spec, and each bad one
// is refused naming its field.
func TestArtifactsJobSpec(t *testing.T) {
	s, err := ArtifactsJob{BN: "inference", Loss: "kl", Temperature: 2, Params: "a, b", Dropout: true}.Spec()
	if err != nil || s.BN != autodiff.BNInference || s.Loss.Kind != autodiff.LossKL || s.Loss.Temperature != 2 ||
		len(s.Params) != 2 || s.Params[1] != "b" || !s.Dropout {
		t.Fatalf("Spec() = %+v, %v", s, err)
	}
	for _, c := range []struct {
		j     ArtifactsJob
		field string
	}{
		{ArtifactsJob{BN: "x", Loss: "ce"}, "BN"},
		{ArtifactsJob{BN: "training", Loss: "x"}, "Loss"},
		{ArtifactsJob{BN: "training", Loss: "kl"}, "Temperature"},
	} {
		var e *setting.Error
		if _, err := c.j.Spec(); !errors.As(err, &e) || e.Field != c.field {
			t.Errorf("%+v: %v; want an error about %s", c.j, err, c.field)
		}
	}
}
