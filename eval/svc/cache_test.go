package svc

import (
	"math"
	"math/rand/v2"
	"testing"
)

// cacheUsed returns the budget held by stored rows and checks the LRU list
// against the stored rows.
func cacheUsed[T elem](t *testing.T, c *rowCache[T]) int {
	t.Helper()
	used, listed := 0, 0
	for k := c.heads[c.l].next; k != c.l; k = c.heads[k].next {
		if len(c.heads[k].data) == 0 {
			t.Fatalf("row %d in the LRU list with no data", k)
		}
		if c.heads[c.heads[k].next].prev != k {
			t.Fatalf("broken back link at row %d", k)
		}
		used += len(c.heads[k].data)
		listed++
		if listed > c.l {
			t.Fatal("LRU list has a cycle")
		}
	}
	stored := 0
	for k := range c.l {
		if len(c.heads[k].data) > 0 {
			stored++
		}
	}
	if stored != listed {
		t.Fatalf("%d rows stored, %d listed", stored, listed)
	}
	return used
}

// TestQMatrixCache requests random row prefixes and swaps indices, as the
// solver's shrinking does, through caches of several sizes, and compares
// every served row with the kernel computed directly.
func TestQMatrixCache(t *testing.T) {
	for _, tc := range []struct {
		d        int
		distinct bool // few distinct points: the gather path
	}{{1, false}, {4, false}, {1, true}, {4, true}} {
		d := tc.d
		for _, budget := range []int64{1, 8 * 3 * 200, 8 * 20 * 200, 1 << 20} {
			rng := rand.New(rand.NewPCG(uint64(d), uint64(budget)))
			const l = 200
			x := make([]float64, l*d)
			for i := range x {
				x[i] = math.Round(rng.NormFloat64()*64) / 64 // some duplicates
				if tc.distinct {
					x[i] = float64(rng.IntN(2))
				}
			}
			y := make([]float64, l)
			for i := range y {
				y[i] = float64(1 - 2*rng.IntN(2))
			}
			gamma := 1 / float64(d)
			orig := append([]float64(nil), x...)
			origY := append([]float64(nil), y...)
			perm := make([]int, l) // perm[k]: original index at position k
			for i := range perm {
				perm[i] = i
			}
			q := newQMatrix[float64](x, l, d, y, gamma, budget)
			if (q.uid != nil) != tc.distinct {
				t.Fatalf("d=%d distinct=%v: distinct-point path used: %v", d, tc.distinct, q.uid != nil)
			}
			total := q.cache.avail
			for step := range 3000 {
				if rng.IntN(10) == 0 {
					i, j := rng.IntN(l), rng.IntN(l)
					q.swap(i, j)
					perm[i], perm[j] = perm[j], perm[i]
					continue
				}
				i, length := rng.IntN(l), 1+rng.IntN(l)
				row := q.row(i, length)
				if len(row) != length {
					t.Fatalf("row length %d, want %d", len(row), length)
				}
				pi := perm[i]
				for j, got := range row {
					pj := perm[j]
					want := origY[pi] * origY[pj] * rbf(orig[pi*d:(pi+1)*d], orig[pj*d:(pj+1)*d], gamma)
					if math.Abs(got-want) > 1e-12 {
						t.Fatalf("d=%d distinct=%v budget=%d step %d: Q[%d][%d] = %v, want %v", d, tc.distinct, budget, step, i, j, got, want)
					}
				}
				if used := cacheUsed(t, q.cache); used+q.cache.avail != total {
					t.Fatalf("budget: %d used + %d free != %d", used, q.cache.avail, total)
				}
			}
		}
	}
}

// TestCacheLRUOrder checks that the least recently used row is evicted.
func TestCacheLRUOrder(t *testing.T) {
	const l = 10
	c := newRowCache[float64](l, 0) // budget floor: two full rows = 20 elements
	c.avail = 20
	fill := func(i, n int) {
		r, start := c.get(i, n)
		for k := start; k < n; k++ {
			r[k] = float64(100*i + k)
		}
	}
	fill(0, 5)
	fill(1, 5)
	fill(2, 5)
	fill(3, 5) // budget full: rows 0..3
	fill(0, 5) // touch 0: LRU order 1, 2, 3, 0
	if _, start := c.get(0, 5); start != 5 {
		t.Fatalf("row 0 not cached")
	}
	fill(4, 5) // evicts 1
	if len(c.heads[1].data) != 0 {
		t.Fatal("row 1 (least recently used) not evicted")
	}
	for _, i := range []int{0, 2, 3, 4} {
		if len(c.heads[i].data) != 5 {
			t.Fatalf("row %d evicted", i)
		}
	}
	fill(2, 10) // extending row 2 by 5 evicts 3 (now the LRU)
	if len(c.heads[3].data) != 0 || len(c.heads[2].data) != 10 {
		t.Fatalf("extension: row 3 len %d, row 2 len %d", len(c.heads[3].data), len(c.heads[2].data))
	}
	r, start := c.get(2, 10)
	if start != 10 {
		t.Fatal("extended row not cached")
	}
	for k := range 10 {
		if r[k] != float64(200+k) {
			t.Fatalf("row 2 entry %d = %v after extension", k, r[k])
		}
	}
}
