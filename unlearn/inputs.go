package unlearn

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/unlearn-tool/unlearn/internal/fsread"
	"github.com/unlearn-tool/unlearn/internal/setting"
)

// BundledModelSHA256 is the SHA-256 of the bundled demo model
// (testdata/resnet_small_train.onnx): the one model a job runs on the
// bundled demo data (Job.BundledData).
const BundledModelSHA256 = "00fa8e5a48e67ee53e78d1f9e015e646e00a60e7c1933401ab2f145f808e4be9"

// checkInputs refuses, before anything is read (issue 64): a job on the
// bundled demo data whose model is not the bundled demo model (its ids
// would point at images that are not its data, and the run would go on
// with exit 0; a model that cannot be read is left to the model's own
// checks), and a job whose default output (DefaultOut) exists, unless
// Overwrite (a second run would replace the first one's model silently).
func (job *Job) checkInputs() error {
	if job.BundledData {
		if sum, err := fsread.HashFile(job.ModelPath); err == nil && sum != BundledModelSHA256 {
			return fmt.Errorf("%w: %w", ErrSettings, setting.Errorf("data", " is required: %s is not the bundled demo model, "+
				"so the bundled demo data (a Fashion-MNIST subset) is not its data; give the model's training data", job.ModelPath))
		}
	}
	if job.DefaultOut && !job.Overwrite {
		if _, err := os.Lstat(job.Out); err == nil {
			return fmt.Errorf("%w: %w", ErrSettings, setting.Textf("%s exists (an earlier run's default output): it is never "+
				"replaced silently; pass %s to replace it, or %s to write another file", job.Out,
				setting.Of("overwrite"), setting.Of("out")))
		}
	}
	return nil
}

// DefaultPaths fills in the outputs the caller left empty: Out beside the
// input model (<model>-unlearned.onnx, marked DefaultOut) and MetricsPath
// beside Out (<out without .onnx>.metrics.json).
func (job *Job) DefaultPaths() {
	if job.Out == "" {
		job.Out, job.DefaultOut = strings.TrimSuffix(job.ModelPath, filepath.Ext(job.ModelPath))+"-unlearned.onnx", true
	}
	if job.MetricsPath == "" {
		job.MetricsPath = strings.TrimSuffix(job.Out, filepath.Ext(job.Out)) + ".metrics.json"
	}
}
