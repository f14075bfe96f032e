package autofit

import "testing"

// The driver itself runs in package unlearn's auto tests (TestAuto*), on
// real engines; here, the arithmetic of a round.
func TestRoundSteps(t *testing.T) {
	for _, c := range []struct {
		steps    int
		fraction float64
		want     int
	}{
		{40, 0, 40}, {40, 1, 40}, {40, 0.5, 20}, {40, 0.26, 11}, {3, 0.01, 1}, {40, -1, 40}, {40, 2, 40},
	} {
		if got := RoundSteps(c.steps, c.fraction); got != c.want {
			t.Errorf("RoundSteps(%d, %g) = %d, want %d", c.steps, c.fraction, got, c.want)
		}
	}
}
