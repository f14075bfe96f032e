package unlearn

import (
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/eval"
)

// A result more than MaxTestDrop below the input's test accuracy gets a
// warning with both numbers; within it, or with nothing to compare, none.
func TestTestDropNote(t *testing.T) {
	met := func(test float64) *eval.Metrics { return &eval.Metrics{Accuracy: eval.Accuracies{Test: test}} }
	n := testDropNote(met(0.760), met(0.573), nil)
	for _, want := range []string{"warning: ", "76.00%", "57.30%", "18.7 points"} {
		if !strings.Contains(n, want) {
			t.Errorf("note %q lacks %q", n, want)
		}
	}
	if n := testDropNote(met(0.841), met(0.814), nil); n != "" {
		t.Errorf("a 2.7-point drop (the demo's): %q", n)
	}
	if n := testDropNote(nil, met(0.5), nil); n != "" {
		t.Errorf("no input accuracy: %q", n)
	}
	pl := &eval.ProxyLog{}
	pl.Before.TestAccuracy = 0.9
	if n := testDropNote(nil, met(0.8), pl); !strings.Contains(n, "90.00%") {
		t.Errorf("from the proxies' baseline: %q", n)
	}
}
