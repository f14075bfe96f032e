package scoring

import (
	"errors"
	"path/filepath"
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

// TestOlderSettingsNamed: a settings file that differs from this run's only
// by fields it lacks (written before Config gained them) is refused with
// a message that says so and names them; any other difference is another
// audit.
func TestOlderSettingsNamed(t *testing.T) {
	settings := func(cfg map[string]any) schema.ScoreSettings {
		return schema.ScoreSettings{Schema: schema.ScoreSettingsSchema, Setup: schema.ScoreSetup{K: 4,
			Method: &schema.ScoreMethod{Algorithm: "ssd", Config: cfg}}}
	}
	now := settings(map[string]any{"Epochs": 0.0, "Auto": map[string]any{"MinProgress": 0.0, "Patience": 0.0}})
	check := func(file schema.ScoreSettings) error {
		path := filepath.Join(t.TempDir(), "settings.json")
		if err := writeJSON(path, file); err != nil {
			t.Fatal(err)
		}
		_, err := checkSettings(path, now)
		return err
	}
	err := check(settings(map[string]any{"Epochs": 0.0, "Auto": map[string]any{"Patience": 0.0}}))
	if err == nil || !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), "written by an older version of unlearn: it lacks method.config.Auto.MinProgress,") {
		t.Fatalf("older settings: %v", err)
	}
	err = check(settings(map[string]any{"Epochs": 3.0, "Auto": map[string]any{"Patience": 0.0}}))
	if err == nil || strings.Contains(err.Error(), "older version") || !strings.Contains(err.Error(), "records another audit") {
		t.Fatalf("settings that also differ in a value are another audit: %v", err)
	}
	if err := check(now); err != nil {
		t.Fatalf("the same settings: %v", err)
	}
}
