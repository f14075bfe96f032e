package unlearn_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/unlearn-tool/unlearn/schema"
	"github.com/unlearn-tool/unlearn/train/autodiff"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// TestTrainingGraphBuiltOnce: a run of del builds three training graphs,
// each once: the inference-mode graph of every parameter, which Prepare
// builds as its check and localization's scores then run on; rft's graph
// of the masked parameters; and the retraining estimate's (steps timed for
// the note on retraining's cost), whose engine is its check. Before, the
// checks built two more graphs (with plain lowering) that nothing used.
func TestTrainingGraphBuiltOnce(t *testing.T) {
	suite, root := demoSuite(t)
	cfg := unlearn.Defaults("rft")
	cfg.Epochs = 1
	dir := t.TempDir()
	before := autodiff.Builds()
	o, err := unlearn.Unlearn(context.Background(), unlearn.Job{
		ModelPath: filepath.Join(root, "testdata", "resnet_small_train.onnx"), Suite: suite, NoBefore: true,
		Method: "del", Strategy: "del", Budget: 0.1, Algorithm: "rft", Config: cfg,
		Out: filepath.Join(dir, "u.onnx"), MetricsPath: filepath.Join(dir, "metrics.json"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := autodiff.Builds() - before; n != 3 {
		t.Errorf("the run built %d training graphs, want 3 (localization's, built by Prepare; rft's; the retraining "+
			"estimate's)", n)
	}
	if o.Report.Unlearning.RetrainEstimateBasis != schema.RetrainBasisTimed {
		t.Error("no timed retraining estimate: the third graph is not the estimate's")
	}
	if o.Audit.ChangedParams == 0 {
		t.Error("the run changed nothing")
	}
}
