package runner

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/experiment"
)

// reportOnly rebuilds cfg's RESULTS.md and returns it with the warnings.
func reportOnly(cfg *experiment.Config) (md string, warns []string, err error) {
	info := func(event, text string, _ ...any) {
		if event == "warning" {
			warns = append(warns, text)
		}
	}
	out, err := Run(context.Background(), Job{Config: cfg, ReportOnly: true, Info: info})
	if err != nil {
		return "", nil, err
	}
	b, err := os.ReadFile(out.ResultsMD)
	return string(b), warns, err
}

// TestReportNamesPendingRuns: a run of the config without a record under
// its key is named in RESULTS.md, as a run made by an earlier version of
// the tool when its row has a record for that forget set and seed under
// another key (a changed auto rule or default keys it anew), and as not run
// yet otherwise; with its record, neither line is written.
func TestReportNamesPendingRuns(t *testing.T) {
	cfg, okey, rkey, results := damagedGrid(t)
	acc := map[string]float64{"forget": 0.7, "retain": 0.9, "test": 0.85, "train": 0.88}
	orc := recordJSON(t, experiment.Record{Schema: experiment.RecordSchema, Key: okey, Kind: "oracle", ForgetSet: "outside", Name: "Retrain (oracle)",
		Accuracy: acc, Delta: map[string]float64{"forget": 0, "test": 0}, Seconds: 100, OracleSeconds: 100, Forget: 3})
	run := func(key string) string {
		return recordJSON(t, experiment.Record{Schema: experiment.RecordSchema, Key: key, Kind: "run", ForgetSet: "outside", Name: "a|b <script>",
			Strategy: "full", Algorithm: "ssd", Accuracy: acc, Delta: map[string]float64{"forget": 0.02, "test": -0.01}, Seconds: 5, OracleSeconds: 100, Forget: 3})
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		t.Fatal(err)
	}
	const (
		stale = "Left out, made by an earlier version of the tool (1 run:"
		never = "Not run yet (1 run): a\\|b &lt;script&gt; on outside (seed 0)."
	)
	for _, c := range []struct {
		name, lines string
		want        []string
		warn        bool
	}{
		{"no run record", orc + "\n", []string{never}, true},
		{"a record under another key", orc + "\n" + run("0123456789abcdef") + "\n", []string{stale, "a\\|b &lt;script&gt; on outside (seed 0)."}, true},
		{"its record", orc + "\n" + run(rkey) + "\n", nil, false},
	} {
		if err := os.WriteFile(results, []byte(c.lines), 0o644); err != nil {
			t.Fatal(err)
		}
		md, warns, err := reportOnly(cfg)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, w := range c.want {
			if !strings.Contains(md, w) {
				t.Errorf("%s: RESULTS.md lacks %q:\n%s", c.name, w, md)
			}
		}
		if c.want == nil && (strings.Contains(md, "Left out") || strings.Contains(md, "Not run yet")) {
			t.Errorf("%s: RESULTS.md names a pending run:\n%s", c.name, md)
		}
		if c.name == "no run record" && strings.Contains(md, "Left out") {
			t.Errorf("%s: a run never recorded is called superseded:\n%s", c.name, md)
		}
		if got := len(warns) == 1 && strings.Contains(warns[0], "1 of the config's runs have no record"); got != c.warn {
			t.Errorf("%s: warnings %q", c.name, warns)
		}
	}
}

// TestForgetSetSeeds: a forget set's own seeds leave the grid's other
// seeds out of its runs: neither their models nor their runs are asked
// for, no run is named as missing, and RESULTS.md says which seeds the set
// runs on.
func TestForgetSetSeeds(t *testing.T) {
	cfg, okey, rkey, results := damagedGrid(t)
	cfg.Seeds = []uint64{0, 1} // seed 1 has no original, oracle or ids file
	cfg.ForgetSets[0].Seeds = []uint64{0}
	acc := map[string]float64{"forget": 0.7, "retain": 0.9, "test": 0.85, "train": 0.88}
	lines := recordJSON(t, experiment.Record{Schema: experiment.RecordSchema, Key: okey, Kind: "oracle", ForgetSet: "outside", Name: "Retrain (oracle)",
		Accuracy: acc, Delta: map[string]float64{"forget": 0, "test": 0}, Seconds: 100, OracleSeconds: 100, Forget: 3}) + "\n" +
		recordJSON(t, experiment.Record{Schema: experiment.RecordSchema, Key: rkey, Kind: "run", ForgetSet: "outside", Name: "a|b <script>",
			Strategy: "full", Algorithm: "ssd", Accuracy: acc, Delta: map[string]float64{"forget": 0.02, "test": -0.01}, Seconds: 5, OracleSeconds: 100, Forget: 3}) + "\n"
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(results, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	md, warns, err := reportOnly(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const want = "Forget sets run on fewer seeds than the grid's 0 and 1 (their own `seeds` in the config): outside on seed 0.\n"
	if !strings.Contains(md, want) {
		t.Errorf("RESULTS.md lacks %q:\n%s", want, md)
	}
	for _, bad := range []string{"seed 1", "Not run yet", "Not in the tables yet"} {
		if strings.Contains(md, bad) {
			t.Errorf("RESULTS.md names %q:\n%s", bad, md)
		}
	}
	if len(warns) > 0 {
		t.Errorf("warnings %q", warns)
	}
}

func TestGroupPending(t *testing.T) {
	runs := []pendingRun{{name: "Default", forgetSet: "iid", seed: 0}, {name: "Default", forgetSet: "iid", seed: 1},
		{name: "DEL", budget: 0.1, forgetSet: "iid", seed: 0}, {name: "Default", forgetSet: "non-iid", seed: 0},
		{name: "DEL", budget: 0.1, forgetSet: "non-iid", seed: 2}, {name: "DEL", budget: 0.1, forgetSet: "class-5", seed: 2}}
	want := "Default on iid (seeds 0, 1) and non-iid (seed 0); DEL α 0.1 on iid (seed 0), non-iid (seed 2) and class-5 (seed 2)"
	if got := groupPending(runs); got != want {
		t.Errorf("groupPending:\n got %q\nwant %q", got, want)
	}
}
