package unlearn

import (
	"math"

	"github.com/unlearn-tool/unlearn/schema"
)

// The verdict's stated tolerances (docs/tolerance-calibration.md): how far
// from an oracle's a vouched result's forget and test accuracy may lie.
// Two oracles of one recipe, or an exact retraining and its oracle, differ
// by sampling the examples a set holds and by the training's own noise; on
// every committed pair (41 oracle pairs, 136 pairs of the small ResNet's 16
// score-audit oracles, 7 exact retrainings) the differences spread by 0.81
// binomial standard errors on the forget set and 1.03 on the test split.
// Two standard errors of the forget set and 2.5 of the test split take in
// about 98.5 % of them; below a point nothing is claimed anyway.
const (
	// ToleranceFloor is the smallest tolerance claimed: one point.
	ToleranceFloor = 0.01
	// ForgetToleranceK and TestToleranceK are the standard errors of the
	// forget set and the test split that a tolerance spans.
	ForgetToleranceK = 2.0
	TestToleranceK   = 2.5
	// ToleranceCap is the widest forget tolerance a verdict may state: a
	// forget set that cannot resolve 5 points gets no verdict, only the
	// numbers (under 144 examples near 90 % accuracy, 400 near 50 %).
	ToleranceCap = 0.05
)

// StatedTolerances returns the tolerances a verdict states for a forget
// set of nForget examples whose accuracy is near pForget (the oracle
// estimate's forget accuracy) and a test split of nTest near pTest.
func StatedTolerances(nForget int, pForget float64, nTest int, pTest float64) schema.Tolerances {
	t := schema.Tolerances{ForgetExamples: nForget, TestExamples: nTest, ForgetLevel: pForget, TestLevel: pTest,
		Cap: ToleranceCap}
	t.Forget = tolerance(ForgetToleranceK, pForget, nForget)
	t.Test = tolerance(TestToleranceK, pTest, nTest)
	t.Resolved = nForget >= ResolutionForget && t.Forget <= ToleranceCap
	return t
}

// tolerance is k binomial standard errors of an accuracy near p on n
// examples, at least ToleranceFloor; 1 (nothing resolved) for no example.
func tolerance(k, p float64, n int) float64 {
	if n < 1 {
		return 1
	}
	p = min(max(p, 0), 1)
	return max(ToleranceFloor, k*math.Sqrt(p*(1-p)/float64(n)))
}

// setTolerances states u's tolerances (StatedTolerances near the oracle
// estimate's accuracies, or the proxies' without one), for a run whose rule
// aimed within a point of its estimate; verdictWarnings then warns only
// where the forget set cannot resolve ToleranceCap, in place of its
// one-point resolution warning.
func setTolerances(u *schema.Unlearning, nForget, nTest int) {
	p := u.Proxies
	if p == nil {
		return
	}
	pf, pt := p.After.ReferenceAccuracy, p.After.TestAccuracy
	if e := p.Estimate; e != nil {
		pf, pt = e.ReferenceAccuracy, e.TestAccuracy
	}
	t := StatedTolerances(nForget, pf, nTest, pt)
	u.Tolerances = &t
}
