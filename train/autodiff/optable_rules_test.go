package autodiff

import (
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/graph/ops"
)

// TestGradRulesListed: every op with a gradient rule or a forward
// lowering is listed in graph/ops, a rule's op with differentiable inputs,
// and every rule has a doc line.
func TestGradRulesListed(t *testing.T) {
	for op, g := range builtinGrads {
		d, listed := ops.Lookup(op)
		if !listed || len(d.Diff) == 0 || g.rule == nil || g.doc == "" {
			t.Errorf("%s: gradient rule with graph/ops entry %+v (listed %v), doc %q", op, d, listed, g.doc)
		}
	}
	for op := range fwdRules {
		if _, listed := ops.Lookup(op); !listed {
			t.Errorf("%s has a forward lowering and no graph/ops entry", op)
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
		if gradOf(op) == nil {
			t.Errorf("indirectlyChecked names %s, which has no gradient rule", op)
		}
	}
}
