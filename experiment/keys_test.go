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
		{"ids file", IDsKey(IDsFile(ForgetSet{Name: "x", Kind: "iid", Fraction: 0.1}, 2, []int{1, 5, 9})), "c299375311aed7f2"},
	} {
		if c.got != c.want {
			t.Errorf("%s key %s, want %s: the cache keys changed", c.name, c.got, c.want)
		}
	}
}
