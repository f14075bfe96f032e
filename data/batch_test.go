package data

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// checkPartition fails unless batches partition 0..n-1 with sizes bs, …, rest.
func checkPartition(t *testing.T, b [][]int, n, bs int) []int {
	t.Helper()
	var all []int
	for i, x := range b {
		want := bs
		if i == len(b)-1 && n%bs != 0 {
			want = n % bs
		}
		if len(x) != want {
			t.Fatalf("batch %d has %d indices, want %d", i, len(x), want)
		}
		all = append(all, x...)
	}
	sorted := slices.Sorted(slices.Values(all))
	for i, v := range sorted {
		if v != i {
			t.Fatalf("not a partition of 0..%d: %v", n-1, sorted)
		}
	}
	if len(sorted) != n {
		t.Fatalf("%d indices, want %d", len(sorted), n)
	}
	return all
}

func TestBatches(t *testing.T) {
	b := Batches(10, 4, false, nil)
	if len(b) != 3 || !slices.Equal(b[0], []int{0, 1, 2, 3}) || !slices.Equal(b[2], []int{8, 9}) {
		t.Fatalf("unshuffled: %v", b)
	}
	checkPartition(t, b, 10, 4)
	// appending to a batch must not clobber the next one
	_ = append(b[0], 99)
	if b[1][0] != 4 {
		t.Errorf("batches alias: %v", b)
	}

	s1 := checkPartition(t, Batches(1000, 128, true, rand.New(rand.NewPCG(1, 2))), 1000, 128)
	s2 := checkPartition(t, Batches(1000, 128, true, rand.New(rand.NewPCG(1, 2))), 1000, 128)
	s3 := checkPartition(t, Batches(1000, 128, true, rand.New(rand.NewPCG(3, 4))), 1000, 128)
	if !slices.Equal(s1, s2) {
		t.Error("same seed, different batches")
	}
	if slices.Equal(s1, s3) || slices.IsSorted(s1) {
		t.Error("shuffle did not shuffle")
	}
	if got := Batches(5, 0, false, nil); len(got) != 1 || len(got[0]) != 5 {
		t.Errorf("batchSize 0: %v", got)
	}
	if got := Batches(0, 4, true, nil); got != nil {
		t.Errorf("n=0: %v", got)
	}
	checkPartition(t, Batches(7, 7, true, nil), 7, 7)
}
