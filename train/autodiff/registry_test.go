package autodiff

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
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
		if registry[op].grad == nil {
			t.Errorf("indirectlyChecked names %s, which has no gradient rule", op)
		}
	}
}

// TestGradientsDocCoversRules checks docs/GRADIENTS.md against the
// registry: every op with a gradient rule is described before the last
// section (the ops ONNX Runtime's own builder uses, which this one never
// emits), and every op named in the first cell of a rule table has a rule
// (a row for "Add / Sub" names two).
func TestGradientsDocCoversRules(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "GRADIENTS.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	if i := strings.Index(doc, "\n## Ops ORT's own gradient builder"); i >= 0 {
		doc = doc[:i]
	} else {
		t.Fatal(`docs/GRADIENTS.md has no "## Ops ORT's own gradient builder" section; the test reads the rules before it`)
	}
	for _, op := range gradOps() {
		if !regexp.MustCompile(`\b` + op + `\b`).MatchString(doc) {
			t.Errorf("%s has a gradient rule that docs/GRADIENTS.md does not describe", op)
		}
	}
	lead := regexp.MustCompile(`^[A-Z][A-Za-z]*`)
	rows := 0
	for _, line := range strings.Split(doc, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| op ") || strings.HasPrefix(line, "|---") {
			continue
		}
		for _, name := range strings.Split(strings.TrimSpace(cells[1]), " / ") {
			op := lead.FindString(name)
			if op == "" {
				continue
			}
			rows++
			if registry[op].grad == nil {
				t.Errorf("docs/GRADIENTS.md's table gives a rule for %s, which has none", op)
			}
		}
	}
	if rows < 20 {
		t.Errorf("docs/GRADIENTS.md: %d ops in rule tables, want the elementwise table's 20 or more", rows)
	}
}
