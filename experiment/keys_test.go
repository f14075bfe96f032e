package experiment

import "testing"

// TestKeysPinned pins the cache keys to the values the runner computed
// before the keys became functions (cmd/unlearn's expRunner, July 2026):
// committed results.jsonl files are cached by them, and a changed key
// silently reruns their grid. Never update a value here without meaning
// to rerun every committed experiment.
func TestKeysPinned(t *testing.T) {
	rec := Recipe{Epochs: 5, LR: 0.05, BatchSize: 128, WeightDecay: 5e-4, Momentum: 0.9, Schedule: "cosine"}
	const recommended = "--method del --budget 0.1 --schedule auto (auto rule 4)"
	fixed := Method{Name: "DEL", Method: "del", Budgets: []float64{0.05, 0.1}, Epochs: 3, LR: 0.05}
	auto := Method{Name: "DEL (auto)", Method: "del", Budgets: []float64{0.3}, Schedule: "auto", MaxEpochs: 6}
	def := Method{Name: "Default", Default: true}
	for _, c := range []struct{ name, got, want string }{
		{"original", OriginalKey("base", "data", rec, 1), "0e0960831d89e917"},
		{"oracle", OracleKey("base", "data", rec, 1, "ids"), "065021a770fa783b"},
		{"fixed run", RunKey(fixed, 0.1, 2, "ids", "orig", "oracle", false, 4, recommended), "03ecd76b224eb2e6"},
		{"auto run", RunKey(auto, 0.3, 2, "ids", "orig", "oracle", true, 4, recommended), "21399358e5f18582"},
		{"default run", RunKey(def, 0, 2, "ids", "orig", "oracle", false, 4, recommended), "5048550e03fcebf6"},
		{"ids file", IDsKey(ForgetSet{Name: "x", Kind: "iid", Fraction: 0.1}, 2, []int{1, 5, 9}), "c299375311aed7f2"},
		// Content keys (November 2026): a set read from a file and the
		// model a grid unlearns, keyed without their paths.
		{"ids from a file", IDsKey(ForgetSet{Name: "x", Kind: "file", IDs: "a/x-seed{seed}.txt"}, 2, []int{1, 5, 9}), "06fd5b827639c8d0"},
		{"original ref", OriginalRef("0e0960831d89e917", 2), "b898e8b560367d72"},
		// A forget set's own seeds are in no key: narrowing them keeps
		// the records.
		{"ids from a file, own seeds", IDsKey(ForgetSet{Name: "x", Kind: "file", IDs: "a/x-seed{seed}.txt", Seeds: []uint64{2}}, 2, []int{1, 5, 9}), "06fd5b827639c8d0"},
		{"ids, own seeds", IDsKey(ForgetSet{Name: "x", Kind: "iid", Fraction: 0.1, Seeds: []uint64{2, 3}}, 2, []int{1, 5, 9}), "c299375311aed7f2"},
	} {
		if c.got != c.want {
			t.Errorf("%s key %s, want %s: the cache keys changed", c.name, c.got, c.want)
		}
	}
}

// TestTrialDefaultKey: a default row with another utility tolerance (a
// trial beside the Default row) has its own key, and the Default row's is
// the one pinned above.
func TestTrialDefaultKey(t *testing.T) {
	const recommended = "--method del --budget 0.1 --schedule auto (auto rule 4)"
	def := Method{Name: "Default", Default: true}
	trial := Method{Name: "Default", Default: true, UtilityTolerance: 0.015}
	if k := RunKey(def, 0, 2, "ids", "orig", "oracle", false, 4, recommended); k != "5048550e03fcebf6" {
		t.Errorf("default key %s changed", k)
	}
	if RunKey(trial, 0, 2, "ids", "orig", "oracle", false, 4, recommended) == RunKey(def, 0, 2, "ids", "orig", "oracle", false, 4, recommended) {
		t.Error("the trial's key is the default's")
	}
}

// TestKeysHoldNoPaths: a forget set read from a file keys the same wherever
// the file is, and changes with its ids, name or seed.
func TestKeysHoldNoPaths(t *testing.T) {
	fs := ForgetSet{Name: "x", Kind: "file", IDs: "regimes/a/x-seed{seed}.txt"}
	moved := fs
	moved.IDs = "/elsewhere/x-seed{seed}.txt"
	k := IDsKey(fs, 2, []int{1, 5, 9})
	if got := IDsKey(moved, 2, []int{1, 5, 9}); got != k {
		t.Errorf("moved ids file: key %s, want %s", got, k)
	}
	renamed := fs
	renamed.Name = "y"
	for name, other := range map[string]string{
		"other ids":  IDsKey(fs, 2, []int{1, 5, 8}),
		"other seed": IDsKey(fs, 3, []int{1, 5, 9}),
		"other name": IDsKey(renamed, 2, []int{1, 5, 9}),
	} {
		if other == k {
			t.Errorf("%s: the same key %s", name, k)
		}
	}
}
