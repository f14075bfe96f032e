package unlearn

import (
	"math"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/schema"
)

// TestStatedTolerances: the tolerances against docs/tolerance-calibration.md's
// table (computed there by bench/tolerance_calibration.py, independently of
// this code), the one-point floor and the 5-point cap.
func TestStatedTolerances(t *testing.T) {
	for _, c := range []struct {
		n        int
		p        float64
		forget   float64 // points
		resolved bool
	}{
		{600, 0.9, 2.45, true}, {500, 0.9, 2.68, true}, {300, 0.9, 3.46, true}, {1000, 0.9, 1.90, true},
		{6000, 0.9, 1.00, true}, {500, 0.5, 4.47, true}, {6000, 0.5, 1.29, true},
		{300, 0.5, 5.77, false}, {143, 0.9, 5.02, false}, {144, 0.9, 5.00, true}, {99, 0.99, 2.00, false},
	} {
		got := StatedTolerances(c.n, c.p, 2000, 0.9)
		if math.Abs(100*got.Forget-c.forget) > 0.01 || got.Resolved != c.resolved {
			t.Errorf("n %d near %g: forget ±%.2f, resolved %v; want ±%.2f, %v", c.n, c.p, 100*got.Forget, got.Resolved, c.forget, c.resolved)
		}
	}
	for _, c := range []struct {
		n    int
		p    float64
		test float64
	}{{2000, 0.9, 1.68}, {10000, 0.9, 1.00}, {2000, 0.5, 2.80}} {
		if got := StatedTolerances(600, 0.9, c.n, c.p); math.Abs(100*got.Test-c.test) > 0.01 {
			t.Errorf("test split %d near %g: ±%.2f, want ±%.2f", c.n, c.p, 100*got.Test, c.test)
		}
	}
	if got := StatedTolerances(600, 0.9, 0, 0.9); got.Test != 1 {
		t.Errorf("no test example: tolerance %g, want 1 (nothing resolved)", got.Test)
	}
}

// TestStatedVerdict: a run whose rule aimed within a point states its
// tolerances and gets no one-point resolution warning (a 600-example set
// near 88 % resolves 2.7 points, which the old rule warned about); a forget
// set that cannot resolve 5 points gets one warning saying there is no
// verdict.
func TestStatedVerdict(t *testing.T) {
	u := &schema.Unlearning{Proxies: &schema.ProxyLog{Reference: &schema.ProxyReference{IID: true, NTest: 2000},
		Estimate: &schema.OracleEstimate{ReferenceAccuracy: 0.88, TestAccuracy: 0.87}}}
	u.Proxies.After.ReferenceAccuracy = 0.88
	if got := verdictWarnings(u, false, 600); len(got) != 1 || got[0].kind != schema.FlagForgetResolution {
		t.Fatalf("without stated tolerances: flags %v, want the one-point resolution warning", got)
	}
	setTolerances(u, 600, 2000)
	if got := verdictWarnings(u, false, 600); len(got) != 0 {
		t.Errorf("flags %v, want none", got)
	}
	if u.Tolerances == nil || !u.Tolerances.Resolved || u.Tolerances.ForgetLevel != 0.88 || u.Tolerances.TestExamples != 2000 {
		t.Fatalf("tolerances %+v", u.Tolerances)
	}
	setTolerances(u, 120, 2000)
	got := verdictWarnings(u, false, 120)
	if len(got) != 1 || got[0].kind != schema.FlagForgetResolution || !strings.Contains(got[0].note.Render(setting.Plain), "no verdict") ||
		!strings.Contains(got[0].note.Render(setting.Plain), "120 examples") || u.Tolerances.Resolved {
		t.Errorf("120 examples: flags %v, tolerances %+v; want no verdict", got, u.Tolerances)
	}
}
