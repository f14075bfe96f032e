package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/experiment"
	"github.com/unlearn-tool/unlearn/internal/fsread"
	"github.com/unlearn-tool/unlearn/schema"
)

// damagedGrid is a grid of one outside oracle and one method whose records
// are written by hand (no model runs): a config titled and with a method
// named to break Markdown, its keys, and the records file.
func damagedGrid(t *testing.T) (cfg *experiment.Config, okey, rkey, results string) {
	t.Helper()
	dir := t.TempDir()
	oracle := filepath.Join(dir, "oracle-seed0.onnx")
	for p, b := range map[string]string{oracle: "an outside oracle", filepath.Join(dir, "original-seed0.onnx"): "an original",
		filepath.Join(dir, "forget-seed0.txt"): "1\n2\n3\n"} {
		if err := os.WriteFile(p, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	oracleSum, err1 := fsread.HashPath(oracle)
	dataSum, err2 := fsread.HashPath("../../testdata/fashion")
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	side := fmt.Sprintf(`{"train_s": 100, "threads": 1, "machine": "m", "onnx_sha256": %q, "data_sha256": %q}`, oracleSum, dataSum)
	if err := os.WriteFile(filepath.Join(dir, "oracle-seed0.json"), []byte(side), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "exp.yaml")
	yaml := fmt.Sprintf(`title: "T | <script>alert(1)</script>"
model: %[1]s/original-seed{seed}.onnx
data: ../../testdata/fashion
train: {epochs: 1, lr: 0.05}
forget_sets:
  - {name: outside, kind: file, ids: "%[1]s/forget-seed{seed}.txt", oracle: "%[1]s/oracle-seed{seed}.onnx"}
seeds: [0]
no_mia: true
out: %[1]s/out
methods:
  - {name: "a|b <script>", method: ssd}
`, dir)
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := experiment.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	step := func(what, state, _ string) { steps = append(steps, what+": "+state) }
	out, err := Run(context.Background(), Job{Config: cfg, DryRun: true, Step: step})
	if err != nil || len(out.Keys) != 2 {
		t.Fatalf("dry run: %v, keys %v", err, out)
	}
	// The outside oracle's evaluation is a step of its own, listed before
	// the run that is measured against it.
	if want := []string{"oracle outside (seed 0): to run", "a|b <script> on outside (seed 0): to run"}; !slices.Equal(steps, want) {
		t.Fatalf("dry run listed %q, want %q", steps, want)
	}
	return cfg, out.Keys[0], out.Keys[1], filepath.Join(cfg.Out, "results.jsonl")
}

func recordJSON(t *testing.T, rec experiment.Record) string {
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCutRecordRepairedAndNamesEscaped: a results.jsonl whose last line was
// cut short (an append stopped by a full disk) no longer stops the grid: a
// run warns naming the file and line, cuts the partial line off and goes
// on; RESULTS.md shows a title and a method name holding '|' and <script>
// escaped; a record out of range stops the report, naming file, line and
// field (issue 45, item 8).
func TestCutRecordRepairedAndNamesEscaped(t *testing.T) {
	cfg, okey, rkey, results := damagedGrid(t)
	acc := map[string]float64{"forget": 0.7, "retain": 0.9, "test": 0.85, "train": 0.88}
	orc := recordJSON(t, experiment.Record{Schema: experiment.RecordSchema, Key: okey, Kind: "oracle", ForgetSet: "outside", Name: "Retrain (oracle)",
		Accuracy: acc, Delta: map[string]float64{"forget": 0, "test": 0}, Seconds: 100, OracleSeconds: 100, Forget: 3})
	run := recordJSON(t, experiment.Record{Schema: experiment.RecordSchema, Key: rkey, Kind: "run", ForgetSet: "outside", Name: "a|b <script>",
		Strategy: "full", Algorithm: "ssd", Accuracy: acc, Delta: map[string]float64{"forget": 0.02, "test": -0.01}, Seconds: 5, OracleSeconds: 100, Forget: 3})
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		t.Fatal(err)
	}
	cut := run[:len(run)/3]
	if err := os.WriteFile(results, []byte(orc+"\n"+run+"\n"+cut), 0o644); err != nil {
		t.Fatal(err)
	}
	var warns []string
	info := func(event, text string, _ ...any) {
		if event == "warning" {
			warns = append(warns, text)
		}
	}
	out, err := Run(context.Background(), Job{Config: cfg, Info: info})
	if err != nil {
		t.Fatalf("a cut last line stopped the run: %v", err)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], results+":3: the last line was cut short") || !strings.Contains(warns[0], "removed it") {
		t.Errorf("warnings %q, want one naming %s:3", warns, results)
	}
	if b, _ := os.ReadFile(results); string(b) != orc+"\n"+run+"\n" {
		t.Errorf("results.jsonl after the run:\n%s\nwant its two complete lines", b)
	}
	md, err := os.ReadFile(out.ResultsMD)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# T \\| &lt;script&gt;alert(1)&lt;/script&gt;\n", "| a\\|b &lt;script&gt; | full + ssd |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("RESULTS.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(string(md), "<script>") || strings.Contains(string(md), "a|b") {
		t.Errorf("RESULTS.md holds a name raw:\n%s", md)
	}
	// A value out of range (1e308 became "+Inf" in RESULTS.md) stops the
	// report, naming the file, line and field.
	bad := strings.Replace(run, `"seconds":5`, `"seconds":1e308`, 1)
	if err := os.WriteFile(results, []byte(orc+"\n"+bad+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), Job{Config: cfg, ReportOnly: true})
	if !errors.Is(err, experiment.ErrRecords) || !strings.Contains(err.Error(), results+":2: seconds 1e+308: outside [0, 1e+09]") {
		t.Errorf("a record out of range: %v", err)
	}
}

// TestScoreJSONChecked: the values of a score.json that RESULTS.md shows
// are checked when read back (issue 45, item 8: a forget accuracy of
// 500.43 % went into the table); every committed score.json passes.
func TestScoreJSONChecked(t *testing.T) {
	files, _ := filepath.Glob("../../regimes/*/score/*/*/score.json")
	if len(files) == 0 {
		t.Fatal("no committed score.json: the test shows nothing")
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var rep schema.ScoreReport
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		if err := checkScore(&rep); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		bad := rep
		bad.Accuracy.Unlearned.Forget = 5.0043
		if err := checkScore(&bad); err == nil || err.Error() != "accuracy.unlearned.forget 5.0043: outside [0, 1]" {
			t.Errorf("a forget accuracy of 500.43 %%: %v", err)
		}
		bad = rep
		huge := 1e308
		bad.SVCMIA.Retrained = &huge
		if err := checkScore(&bad); err == nil || !strings.Contains(err.Error(), "svc_mia.retrained 1e+308") {
			t.Errorf("an SVC share of 1e308: %v", err)
		}
		bad = rep
		bad.KLoM.Forget.Hi = -1e300
		if err := checkScore(&bad); err == nil || !strings.Contains(err.Error(), "klom.forget.hi") {
			t.Errorf("a KLoM bound of -1e300: %v", err)
		}
		bad = rep
		bad.ULiRA = &schema.ScoreULiRA{Accuracy: schema.ScoreInterval{Estimate: 0.6, Lo: 0.5, Hi: 0.7}, AUC: 1.5}
		if err := checkScore(&bad); err == nil || err.Error() != "ulira.auc 1.5: outside [0, 1]" {
			t.Errorf("a U-LiRA AUC of 1.5: %v", err)
		}
		bad.ULiRA = &schema.ScoreULiRA{Accuracy: schema.ScoreInterval{Estimate: 0.6, Lo: 0.5, Hi: 0.7}, AUC: 0.6}
		if err := checkScore(&bad); err != nil {
			t.Errorf("a U-LiRA accuracy of 0.6 and AUC of 0.6: %v", err)
		}
	}
}
