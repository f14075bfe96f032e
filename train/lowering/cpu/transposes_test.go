package cpu

import "testing"

func TestBatchedSwap(t *testing.T) {
	for _, c := range []struct {
		perm []int64
		k, a int
		ok   bool
	}{
		{[]int64{0, 2, 1}, 1, 1, true},
		{[]int64{0, 2, 3, 1}, 1, 1, true},
		{[]int64{0, 3, 1, 2}, 1, 2, true},
		{[]int64{0, 1, 3, 2}, 2, 1, true},
		{[]int64{0, 1, 3, 4, 2}, 2, 1, true},
		{[]int64{1, 0}, 0, 0, false},       // no batch axis
		{[]int64{1, 2, 0}, 0, 0, false},    // no batch axis
		{[]int64{0, 2, 1, 3}, 0, 0, false}, // an inner block stays
		{[]int64{0, 1, 2}, 0, 0, false},    // identity
		{[]int64{0, 3, 2, 1}, 0, 0, false}, // a reversal, not a group swap
	} {
		k, a, ok := batchedSwap(c.perm)
		if ok != c.ok || (ok && (k != c.k || a != c.a)) {
			t.Errorf("batchedSwap(%v) = %d, %d, %v; want %d, %d, %v", c.perm, k, a, ok, c.k, c.a, c.ok)
		}
	}
}
