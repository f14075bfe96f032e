package floor

import "testing"

func TestMinDepth(t *testing.T) {
	for _, c := range []struct {
		f        float64
		max, out int
	}{{0.4, 7, 3}, {0.5, 4, 2}, {0, 7, 0}, {0.4, 10, 4}, {-1, 5, 0}} {
		if got := MinDepth(c.f, c.max); got != c.out {
			t.Errorf("MinDepth(%g, %d) = %d, want %d", c.f, c.max, got, c.out)
		}
	}
}
