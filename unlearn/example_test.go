package unlearn_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"testing"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxrt"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// ExampleUnlearn unlearns the bundled demo's non-IID forget set from the
// bundled ResNet with DEL (localization at budget 0.1, then
// reset-and-finetune) from Go: what an MLOps pipeline written in Go calls
// after a deletion request. One fixed epoch keeps the example short; leave
// Config.Epochs and Config.LR at zero with Config.Schedule = ScheduleAuto
// (and Config.Proxies.Track) for the recommended default. ONNX Runtime is
// found as the command finds it (ONNXRUNTIME_LIB, or beside the executable).
func ExampleUnlearn() {
	ds, err := data.Open("../testdata/fashion", data.Options{})
	if err != nil {
		log.Fatal(err)
	}
	const forgetPath = "../testdata/demo/forget_nonIID.txt"
	ids, err := data.ReadIDs(forgetPath, ds.Train.Len())
	if err != nil {
		log.Fatal(err)
	}
	rt := onnxrt.Options{Threads: 2}
	suite, err := eval.NewSuite(ds, forgetPath, ids, eval.Options{Runtime: rt, BatchSize: 256, NoMIA: true})
	if err != nil {
		log.Fatal(err)
	}
	if err := onnxrt.Setup(rt); err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "unlearn-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	method, _ := unlearn.LookupMethod("del")
	cfg := unlearn.Defaults(method.Algorithm)
	cfg.Epochs = 1
	o, err := unlearn.Unlearn(context.Background(), unlearn.Job{
		ModelPath: "../testdata/resnet_small_train.onnx", Suite: suite,
		Method: method.Name, Strategy: method.Strategy, Budget: 0.1, Algorithm: method.Algorithm, Config: cfg,
		Out: filepath.Join(dir, "unlearned.onnx"), MetricsPath: filepath.Join(dir, "metrics.json"),
	})
	if err != nil {
		log.Fatal(err)
	}
	u := o.Report.Unlearning
	fmt.Printf("%s (%s + %s): %d of %d parameters changed, every other one bit-identical: %v\n",
		u.Method, u.Strategy, u.Algorithm, o.Audit.ChangedParams, o.Audit.TotalParams, o.Audit.BitIdentical)
	fmt.Printf("forget accuracy %.0f%% before, lower after: %v\n", 100**o.Report.Before.Accuracy.Forget,
		*o.Report.Accuracy.Forget < *o.Report.Before.Accuracy.Forget)
	// Output:
	// del (del + rft): 8014 of 77754 parameters changed, every other one bit-identical: true
	// forget accuracy 89% before, lower after: true
}

// TestMain points ONNXRUNTIME_LIB at the repository's library (make ort)
// when it is unset, so that ExampleUnlearn finds it as a user's program
// would find an installed one.
func TestMain(m *testing.M) {
	if err := testutil.ExportLibPath(); err != nil {
		log.Fatal(err)
	}
	os.Exit(m.Run())
}
