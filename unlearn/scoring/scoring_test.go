package scoring

import (
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/schema"
)

func TestDiffNamesFields(t *testing.T) {
	a := schema.ScoreSetup{K: 4, ModelSHA256: "aa", Method: &schema.ScoreMethod{Algorithm: "rft", Config: map[string]any{"Epochs": 1.0}}}
	b, bm := a, *a.Method
	bm.Config = map[string]any{"Epochs": 2.0, "LR": 0.1}
	b.K, b.Method = 8, &bm
	got := strings.Join(Diff(a, b), "; ")
	want := `k: 4 ≠ 8; method.config.Epochs: 1 ≠ 2; method.config.LR: (none) ≠ 0.1`
	if got != want {
		t.Fatalf("Diff = %q, want %q", got, want)
	}
	if d := Diff(a, a); len(d) != 0 {
		t.Fatalf("Diff of equal setups: %v", d)
	}
}

func TestSampleAndShards(t *testing.T) {
	ids := []int{3, 5, 7, 9, 11, 13}
	s := sample(ids, 3, 1, 1)
	if len(s) != 3 || !slices.IsSorted(s) || !slices.Equal(s, sample(ids, 3, 1, 1)) {
		t.Fatalf("sample %v: want 3 sorted ids, the same for the same seed", s)
	}
	if all := sample(ids, 0, 1, 1); !slices.Equal(all, ids) {
		t.Fatalf("sample of 0 = %v, want all", all)
	}
	// Every task index belongs to exactly one shard.
	for i := range 10 {
		n := 0
		for sh := range 4 {
			if ShardOf(i, sh, 4) {
				n++
			}
		}
		if n != 1 || !ShardOf(i, 0, 0) {
			t.Fatalf("task %d is in %d shards", i, n)
		}
	}
}
