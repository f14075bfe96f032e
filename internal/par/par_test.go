package par

import (
	"sync/atomic"
	"testing"
)

// TestRange: every index is visited exactly once, for any n and workers.
func TestRange(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 100, 1001} {
		for _, w := range []int{-1, 0, 1, 2, 3, 16, 2000} {
			seen := make([]atomic.Int32, n)
			Range(n, w, func(lo, hi int) {
				if lo < 0 || hi > n || lo > hi {
					t.Errorf("n %d workers %d: part [%d, %d)", n, w, lo, hi)
					return
				}
				for i := lo; i < hi; i++ {
					seen[i].Add(1)
				}
			})
			for i := range seen {
				if c := seen[i].Load(); c != 1 {
					t.Fatalf("n %d workers %d: index %d visited %d times", n, w, i, c)
				}
			}
		}
	}
}
