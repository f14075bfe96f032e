package experiment

import (
	"math"
	"strings"
	"testing"
)

// The verdict table: a run more than a point from its oracle on forget or
// test accuracy is a miss; the summary counts the misses the run vouched
// for (trusted wrongly) apart from the flagged ones; the estimate's error
// is against the run's own oracle.
func TestVerdicts(t *testing.T) {
	oracle := func(fs string, seed uint64, forget, test float64) Record {
		return Record{Kind: "oracle", ForgetSet: fs, Seed: seed, Name: "Retrain (oracle)", Accuracy: map[string]float64{"forget": forget, "test": test}}
	}
	run := func(fs string, seed uint64, dF, dT float64, vouched bool, flags ...string) Record {
		return Record{Kind: "run", ForgetSet: fs, Seed: seed, Name: "Default", Delta: map[string]float64{"forget": dF, "test": dT},
			Accuracy: map[string]float64{"forget": 0.8}, Vouched: vouched, Flags: flags, Stop: "x",
			Estimate: map[string]float64{"forget": 0.85, "test": 0.88}}
	}
	recs := []Record{
		oracle("a", 0, 0.83, 0.89), run("a", 0, 0.005, -0.009, true), // hit, vouched
		oracle("a", 1, 0.83, 0.89), run("a", 1, 0.02, 0, true), // miss, vouched
		oracle("b", 0, 0.83, 0.89), run("b", 0, 0, 0.03, false, "rule-not-met"), // miss, flagged
		run("b", 1, 0, 0, false, "test-drop"),                    // hit, flagged, no oracle record
		{Kind: "run", ForgetSet: "a", Seed: 0, Name: "Finetune"}, // not a default row
	}
	// Timed against its oracle: time and command ÷ retrain per run.
	recs[1].Seconds, recs[1].OracleSeconds, recs[1].CommandSeconds = 10, 100, 12
	vs := Verdicts(recs, []string{"Default"})
	if len(vs) != 4 {
		t.Fatalf("%d verdicts, want 4", len(vs))
	}
	if vs[0].Miss || !vs[1].Miss || !vs[2].Miss || vs[3].Miss {
		t.Errorf("misses %v %v %v %v, want false true true false", vs[0].Miss, vs[1].Miss, vs[2].Miss, vs[3].Miss)
	}
	if math.Abs(vs[0].EstForget-2) > 1e-9 || math.Abs(vs[0].EstTest+1) > 1e-9 || !math.IsNaN(vs[3].EstForget) {
		t.Errorf("estimate errors %v %v %v", vs[0].EstForget, vs[0].EstTest, vs[3].EstForget)
	}
	md := VerdictMarkdown(recs, []string{"Default"})
	if !strings.Contains(md, "4 runs: 2 missed (1 flagged, **1 vouched for although they missed**); 1 not vouched for although within 1 point.") {
		t.Errorf("summary line missing:\n%s", md)
	}
	if !strings.Contains(md, "| b | 0 | Default | +0.00 | +3.00 | **yes** | rule-not-met | no | x |") {
		t.Errorf("flagged miss row missing:\n%s", md)
	}
	if !strings.Contains(md, "| a | 0 | Default | +0.50 | -0.90 | no | – | yes | x | 0 | – | +2.00 | -1.00 | 0.100 | 0.120 |\n") {
		t.Errorf("timed run's row missing:\n%s", md)
	}
	if !strings.Contains(md, "| b | 1 | Default | +0.00 | +0.00 | no | test-drop | no | x | 0 | – | – | – | – | – |\n") {
		t.Errorf("untimed run's row missing:\n%s", md)
	}
	if VerdictMarkdown(recs, []string{"Nothing"}) != "" {
		t.Error("a table for rows that do not exist")
	}
}

// A run that states tolerances is judged at them, not at a point: 2 points
// of forget accuracy off is a hit within ±2.7, and 2 points of test
// accuracy a miss outside ±1.8; the table shows them beside the miss and
// says how it judged.
func TestVerdictsStatedTolerances(t *testing.T) {
	tol := map[string]float64{"forget": 0.027, "test": 0.018}
	recs := []Record{
		{Kind: "oracle", ForgetSet: "a", Seed: 0, Accuracy: map[string]float64{"forget": 0.83, "test": 0.89}},
		{Kind: "run", ForgetSet: "a", Seed: 0, Name: "Default", Delta: map[string]float64{"forget": 0.02, "test": 0.005},
			Vouched: true, Tolerances: tol},
		{Kind: "run", ForgetSet: "a", Seed: 1, Name: "Default", Delta: map[string]float64{"forget": 0, "test": 0.02},
			Tolerances: tol, Flags: []string{"rule-not-met"}},
		{Kind: "run", ForgetSet: "a", Seed: 2, Name: "Default", Delta: map[string]float64{"forget": 0.02, "test": 0}},
	}
	vs := Verdicts(recs, []string{"Default"})
	if len(vs) != 3 || vs[0].Miss || !vs[1].Miss || !vs[2].Miss {
		t.Fatalf("verdicts %+v: want a hit at ±2.7/1.8, a miss at ±2.7/1.8, and a miss at a point", vs)
	}
	md := VerdictMarkdown(recs, []string{"Default"})
	for _, want := range []string{"is judged at them instead", "| a | 0 | Default | +2.00 | +0.50 | no (±2.7/1.8) | – | yes |",
		"| a | 1 | Default | +0.00 | +2.00 | **yes** (±2.7/1.8) |", "| a | 2 | Default | +2.00 | +0.00 | **yes** | – | no |",
		"3 runs: 2 missed (2 flagged, **0 vouched for although they missed**); 0 not vouched for although within " +
			"their tolerances (1 point where none is stated)."} {
		if !strings.Contains(md, want) {
			t.Errorf("missing %q:\n%s", want, md)
		}
	}
	if md := VerdictMarkdown([]Record{recs[0], recs[3]}, []string{"Default"}); md == "" || strings.Contains(md, "judged at them") {
		t.Error("a table without stated tolerances explains them")
	}
}
