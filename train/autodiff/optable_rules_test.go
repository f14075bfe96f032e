package autodiff

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/graph/ops"
)

// TestOpTable checks the entries: an op with a gradient rule has
// differentiable inputs and a Doc line, graph/ops gives every op the same
// facts at run time, and the listed input indexes are valid.
func TestOpTable(t *testing.T) {
	for op, o := range builtin {
		if o.Grad != nil && (len(o.Diff) == 0 || o.Doc == "") {
			t.Errorf("%s has a gradient rule but Diff %v, Doc %q", op, o.Diff, o.Doc)
		}
		if o.Grad == nil && o.Doc != "" {
			t.Errorf("%s has a Doc line but no gradient rule", op)
		}
		def, listed := ops.Lookup(op)
		if !listed || !slices.Equal(def.Diff, o.Diff) || def.FloatResultOnly != o.FloatResultOnly || !maps.Equal(def.Roles, o.Roles) {
			t.Errorf("%s: graph/ops has %+v (listed %v), the table %+v", op, def, listed, o.def())
		}
	}
}

// indirectlyChecked names the ops with a gradient rule that no
// finite-difference case differentiates directly, and why that suffices.
var indirectlyChecked = map[string]string{}

// fdCases are the finite-difference cases (runCases) of every test file.
func fdCases() []ruleCase {
	return slices.Concat(ruleCases, nnCases, shapeCases)
}

// TestRuleCoverage fails when an op with a gradient rule has no
// finite-difference check: every case names the op(s) it checks before the
// first "/" (several joined by "-"), each of them must be on the case's
// differentiated path, and the union over the cases must cover every op
// with a rule, but those in indirectlyChecked.
func TestRuleCoverage(t *testing.T) {
	checked := map[string]bool{}
	for i, tc := range fdCases() {
		f := newFG(t, tc.dt, uint64(100+i))
		if tc.opset != 0 {
			f.opset = tc.opset
		}
		out, _, params := tc.build(f)
		p, err := plan(f.model(out).Graph, params)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		onPath := map[string]bool{}
		for n := range p.onPath {
			onPath[n.OpType] = true
		}
		named, _, _ := strings.Cut(tc.name, "/")
		for _, op := range strings.Split(named, "-") {
			if !onPath[op] {
				t.Errorf("case %q names %s, which is not on its differentiated path", tc.name, op)
			}
			checked[op] = true
		}
	}
	for _, op := range gradOps() {
		_, indirect := indirectlyChecked[op]
		switch {
		case !checked[op] && !indirect:
			t.Errorf("%s has a gradient rule and no finite-difference case (add one to ruleCases, nnCases or shapeCases)", op)
		case checked[op] && indirect:
			t.Errorf("%s has its own case; remove it from indirectlyChecked", op)
		}
	}
	for op := range indirectlyChecked {
		if o, _ := lookup(op); o.Grad == nil {
			t.Errorf("indirectlyChecked names %s, which has no gradient rule", op)
		}
	}
}
