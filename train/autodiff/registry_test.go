package autodiff

import (
	"slices"
	"testing"

	"github.com/unlearn-tool/unlearn/graph/ops"
)

// TestRegistry checks that the registry and graph/ops agree: an op with a
// gradient rule has differentiable inputs there, an op without one is
// either listed there as passing no gradient or named in noGradRule, and
// noGradRule names nothing else.
func TestRegistry(t *testing.T) {
	for op, d := range registry {
		def, listed := ops.Lookup(op)
		if d.grad != nil && (!listed || len(def.Diff) == 0) {
			t.Errorf("%s has a gradient rule but no differentiable input in graph/ops", op)
		}
		if !slices.Equal(d.Diff, def.Diff) {
			t.Errorf("%s: registry Diff %v, graph/ops %v", op, d.Diff, def.Diff)
		}
	}
	var want []string
	for _, op := range ops.Known() {
		if def, _ := ops.Lookup(op); len(def.Diff) > 0 && registry[op].grad == nil {
			want = append(want, op)
		}
	}
	got := slices.Clone(noGradRule)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("noGradRule is %v; graph/ops marks differentiable without a rule: %v", got, want)
	}
	if len(slices.Compact(got)) != len(noGradRule) {
		t.Errorf("noGradRule names an op twice: %v", noGradRule)
	}
	for _, op := range Supported() {
		if slices.Contains(noGradRule, op) {
			t.Errorf("%s is both supported and without a rule", op)
		}
	}
}
