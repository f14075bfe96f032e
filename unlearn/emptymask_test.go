package unlearn

import (
	"context"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/internal/testutil"
)

// A mask that selects nothing (a budget below the first ranked neuron's
// size) is not silent: the run says what that leaves to change.
func TestEmptyMaskWarns(t *testing.T) {
	testutil.RequireORT(t)
	d := loadDemo(t)
	m := loadModel(t, "resnet_small_train.onnx")
	mask := delMask(t, m, "resnet_small_train_del_scores.npz", 0.3)
	for name := range mask {
		mask[name] = make([]bool, len(mask[name]))
	}
	res, err := Run(context.Background(), "rft", Input{Model: m, Data: d.ds, Forget: every(d.forget, 8), Retain: every(d.retain, 24), Mask: mask},
		Config{Runtime: testRuntime, LR: 0.01, Epochs: 1})
	if err != nil {
		t.Fatal(err)
	}
	warned := false
	for _, n := range res.Notes {
		warned = warned || n.Kind == setting.KindWarning && strings.Contains(n.String(), "the mask selects no parameter") &&
			strings.Contains(n.String(), "only the classifier")
	}
	if !warned {
		t.Errorf("no warning about the empty mask in %q", res.Notes)
	}
}
