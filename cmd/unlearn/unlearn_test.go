package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/onnxio"
)

// TestUnlearnEndToEnd localizes with `unlearn localize`, unlearns with that
// mask (rft, three epochs) and checks metrics.json, the report and the model.
func TestUnlearnEndToEnd(t *testing.T) {
	in, _ := os.ReadFile(model(t))
	dir := t.TempDir()
	mask := filepath.Join(dir, "mask.json")
	r := runCLI(t, "localize", "--model", model(t), "--data", "testdata/fashion", "--forget", "testdata/demo/forget_nonIID.txt",
		"--budget", "0.1", "--out", mask, "--threads", "2")
	if r.code != 0 {
		t.Fatalf("localize: exit %d: %s", r.code, r.stderr)
	}
	out := filepath.Join(dir, "u.onnx")
	report := filepath.Join(dir, "u.html")
	r = runCLI(t, "--model", model(t), "--forget", "testdata/demo/forget_nonIID.txt", "--data", "testdata/fashion",
		"--mask", mask, "--algorithm", "rft", "--epochs", "3", "--oracle", "testdata/demo/oracle_resnet_small.onnx",
		"--out", out, "--report", report, "--retrain-epochs", "8", "--threads", "2")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if after, _ := os.ReadFile(model(t)); !bytes.Equal(in, after) {
		t.Fatal("the input model changed")
	}
	for _, want := range []string{"before", "oracle", "forget", "bit-identical", "retraining from scratch (8 epochs)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "u.metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	type acc struct {
		Accuracy map[string]float64 `json:"accuracy"`
		MIA      map[string]any     `json:"mia"`
	}
	var doc struct {
		Schema string `json:"schema"`
		acc
		Before     acc `json:"before"`
		Oracle     acc `json:"oracle"`
		Delta      acc `json:"delta"`
		Unlearning struct {
			Strategy, Algorithm string
			Audit               struct {
				BitIdentical  bool  `json:"outside_mask_bit_identical"`
				ChangedParams int64 `json:"changed_params"`
			} `json:"audit"`
			Mask struct {
				Selected int64 `json:"selected"`
			} `json:"mask"`
			RetrainEstimateS float64 `json:"retrain_estimate_s"`
			Speedup          float64 `json:"speedup"`
			Basis            string  `json:"retrain_estimate_basis"`
			StepsTimed       int     `json:"retrain_steps_timed"`
			Timings          struct {
				RetrainTimingS float64 `json:"retrain_timing_s"`
				PeakRSSMiB     float64 `json:"peak_rss_mib"`
			} `json:"timings"`
		} `json:"unlearning"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	u := doc.Unlearning
	if doc.Schema != "unlearn.metrics/v1" || !u.Audit.BitIdentical || u.Audit.ChangedParams == 0 || u.Strategy != "del" || u.Algorithm != "rft" {
		t.Fatalf("metrics %s", b)
	}
	// rft changes the mask and the classifier (10·64+10 parameters here),
	// nothing else.
	if u.Audit.ChangedParams > u.Mask.Selected+650 {
		t.Errorf("%d parameters changed, mask %d + classifier 650", u.Audit.ChangedParams, u.Mask.Selected)
	}
	if u.RetrainEstimateS <= 0 || u.Speedup <= 0 || u.Basis != "timed-full-steps" || u.StepsTimed < 2 || u.StepsTimed > 8 || !(u.Timings.RetrainTimingS > 0) {
		t.Errorf("retrain estimate %g s, speedup %g, basis %q, %d steps timed in %g s", u.RetrainEstimateS, u.Speedup, u.Basis, u.StepsTimed, u.Timings.RetrainTimingS)
	}
	// The run's peak memory: the process loaded ONNX Runtime and the data,
	// so more than 20 MiB, and far less than the machine.
	if m := u.Timings.PeakRSSMiB; !(m > 20 && m < 8192) {
		t.Errorf("timings.peak_rss_mib %g", m)
	}
	if want := fmt.Sprintf("(timed: %d full training steps, ", u.StepsTimed); !strings.Contains(r.stdout, want) {
		t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
	}
	for _, k := range []string{"train", "test", "forget", "retain"} {
		for _, m := range []map[string]float64{doc.Before.Accuracy, doc.Accuracy, doc.Oracle.Accuracy} {
			if v, ok := m[k]; !ok || v < 0 || v > 1 {
				t.Fatalf("accuracy %s = %v", k, v)
			}
		}
		if d := doc.Delta.Accuracy[k]; math.Abs(d-(doc.Oracle.Accuracy[k]-doc.Accuracy[k])) > 1e-12 {
			t.Fatalf("delta %s = %v, oracle − model = %v", k, d, doc.Oracle.Accuracy[k]-doc.Accuracy[k])
		}
	}
	if doc.Before.MIA == nil || doc.MIA == nil {
		t.Errorf("no MIA scores before or after: %s", b)
	}
	if doc.Before.Accuracy["test"] < 0.8 || doc.Accuracy["test"] < 0.6 {
		t.Errorf("test accuracy %.3f → %.3f", doc.Before.Accuracy["test"], doc.Accuracy["test"])
	}
	html, err := os.ReadFile(report)
	if err != nil || !bytes.Contains(html, []byte("<th>before</th>")) || !bytes.Contains(html, []byte("<h2>Unlearning</h2>")) {
		t.Errorf("report: %v", err)
	}
	decodeWithOnnxGo(t, out)
}

func TestUnlearnBadInput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "u.onnx")
	base := []string{"--model", model(t), "--forget", "testdata/demo/forget_nonIID.txt", "--data", "testdata/fashion", "--out", out}
	all := filepath.Join(dir, "all.txt")
	var buf bytes.Buffer
	for i := 0; i < 4000; i++ {
		buf.WriteString(itoa(i) + "\n")
	}
	os.WriteFile(all, buf.Bytes(), 0o644)
	cases := []struct {
		name     string
		args     []string
		code     int
		culprits []string
	}{
		{"no model", []string{"--forget", "x.txt"}, exitUsage, []string{"--model"}},
		{"no forget", []string{"--model", model(t)}, exitUsage, []string{"--forget"}},
		{"budget zero", append(append([]string{}, base...), "--budget", "0"), exitUsage, []string{"--budget"}},
		{"budget above one", append(append([]string{}, base...), "--budget", "1.5"), exitUsage, []string{"--budget"}},
		{"negative epochs", append(append([]string{}, base...), "--epochs", "-3"), exitUsage, []string{"--epochs"}},
		{"negative lr", append(append([]string{}, base...), "--lr", "-0.1"), exitUsage, []string{"--lr"}},
		{"unknown method", append(append([]string{}, base...), "--method", "amnesia"), exitUsage, []string{"--method", "amnesia"}},
		{"unknown algorithm", append(append([]string{}, base...), "--algorithm", "lobotomy"), exitUsage, []string{"--algorithm"}},
		{"unknown strategy", append(append([]string{}, base...), "--strategy", "dartboard"), exitUsage, []string{"--strategy"}},
		{"out is input", []string{"--model", model(t), "--forget", "testdata/demo/forget_nonIID.txt", "--out", model(t)}, exitUsage, []string{"--out", "input"}},
		{"out folder missing", []string{"--model", model(t), "--forget", "testdata/demo/forget_nonIID.txt", "--out", filepath.Join(dir, "nope", "u.onnx")}, exitError, []string{"does not exist"}},
		{"forget everything", []string{"--model", model(t), "--forget", all, "--data", "testdata/fashion", "--out", out, "--method", "finetune"}, exitError, []string{"all.txt", "all 4000"}},
		{"bad oracle", append(append([]string{}, base...), "--oracle", "README.md"), exitError, []string{"oracle", "README.md"}},
		{"mask and strategy", append(append([]string{}, base...), "--mask", "m.json", "--strategy", "del"), exitUsage, []string{"--mask", "--strategy"}},
		{"mask and budget", append(append([]string{}, base...), "--mask", "m.json", "--budget", "0.2"), exitUsage, []string{"--mask", "--budget"}},
		{"missing mask", append(append([]string{}, base...), "--mask", filepath.Join(dir, "none.json")), exitError, []string{"--mask", "none.json"}},
		{"mask of another model", append(append([]string{}, base...), "--mask", "testdata/demo/forget_iid.txt"), exitError, []string{"--mask", "forget_iid.txt"}},
		{"negative retrain epochs", append(append([]string{}, base...), "--retrain-epochs", "-1"), exitUsage, []string{"--retrain-epochs"}},
		{"report folder missing", append(append([]string{}, base...), "--report", filepath.Join(dir, "nope", "r.html")), exitError, []string{"does not exist"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, runCLI(t, c.args...), c.code, c.culprits...)
			if _, err := os.Stat(out); err == nil {
				t.Fatal("output written despite the error")
			}
		})
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// TestUnlearnAutoSchedule runs --schedule auto end to end and checks what
// metrics.json, the terminal and the report say about the choice and the
// proxies; --proxies=false leaves them out.
func TestUnlearnAutoSchedule(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "u.onnx")
	report := filepath.Join(dir, "u.html")
	r := runCLI(t, "--model", model(t), "--forget", "testdata/demo/forget_nonIID.txt", "--data", "testdata/fashion",
		"--method", "finetune", "--schedule", "auto", "--max-epochs", "2", "--forget-tolerance", "0.02", "--utility-tolerance", "0",
		"--no-before", "--out", out, "--report", report, "--threads", "2")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"auto schedule: lr ", "from a range test over 5 rates", "of at most 2", "proxies (no oracle)", "180 examples, not trained on"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	var doc struct {
		Accuracy   map[string]float64 `json:"accuracy"`
		Unlearning struct {
			Schedule string  `json:"schedule"`
			Epochs   int     `json:"epochs"`
			LR       float64 `json:"lr"`
			Auto     *struct {
				LR        float64  `json:"lr"`
				ForgetTol float64  `json:"forget_tolerance"`
				UtilTol   *float64 `json:"utility_tolerance"`
				StopEpoch int      `json:"stop_epoch"`
				MaxEpochs int      `json:"max_epochs"`
				Reason    string   `json:"reason"`
				RangeTest []struct {
					LR float64 `json:"lr"`
				} `json:"lr_range_test"`
			} `json:"auto"`
			Proxies *struct {
				Holdout   int `json:"holdout"`
				Reference struct {
					IID     bool  `json:"iid"`
					Classes []int `json:"classes"`
				} `json:"reference"`
				Before, After struct {
					ForgetAccuracy float64 `json:"forget_accuracy"`
					TestAccuracy   float64 `json:"test_accuracy"`
				}
				Epochs []struct {
					Decision *struct{ Stop bool } `json:"decision"`
				} `json:"epochs"`
			} `json:"proxies"`
			Log struct {
				Epochs []any `json:"epochs"`
			} `json:"log"`
		} `json:"unlearning"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "u.metrics.json"))
	if err != nil || json.Unmarshal(b, &doc) != nil {
		t.Fatalf("metrics: %v", err)
	}
	u := doc.Unlearning
	a, p := u.Auto, u.Proxies
	if u.Schedule != "auto" || a == nil || p == nil {
		t.Fatalf("metrics.json unlearning: %s", b)
	}
	inRange := false
	for _, c := range a.RangeTest {
		inRange = inRange || c.LR == a.LR
	}
	if len(a.RangeTest) != 5 || !inRange || a.MaxEpochs != 2 || a.StopEpoch < 1 || a.StopEpoch > 2 || a.Reason == "" ||
		u.Epochs != a.StopEpoch || u.LR != a.LR || len(u.Log.Epochs) != a.StopEpoch {
		t.Errorf("auto %+v, epochs %d lr %g, %d logged epochs", a, u.Epochs, u.LR, len(u.Log.Epochs))
	}
	if a.ForgetTol != 0.02 || a.UtilTol == nil || *a.UtilTol != 0 {
		t.Errorf("tolerances: forget %g, utility %v; want the flags' 0.02 and 0", a.ForgetTol, a.UtilTol)
	}
	if p.Holdout != 180 || p.Reference.IID || !slices.Equal(p.Reference.Classes, []int{2, 5}) || len(p.Epochs) != a.StopEpoch ||
		p.Epochs[len(p.Epochs)-1].Decision == nil || p.Epochs[len(p.Epochs)-1].Decision.Stop != true || p.After.ForgetAccuracy >= p.Before.ForgetAccuracy {
		t.Errorf("proxies %+v", p)
	}
	// The rule's utility is the test split's accuracy, measured apart from
	// the evaluation that reports it.
	if got, want := p.After.TestAccuracy, doc.Accuracy["test"]; got != want || got == 0 {
		t.Errorf("proxies' test accuracy %v, evaluation's %v", got, want)
	}
	if html, err := os.ReadFile(report); err != nil || !bytes.Contains(html, []byte("Oracle-free proxies")) || !bytes.Contains(html, []byte("auto schedule")) {
		t.Errorf("report lacks the proxies (%v)", err)
	}

	// A fixed run without proxies trains on the whole retain set.
	r = runCLI(t, "--model", model(t), "--forget", "testdata/demo/forget_nonIID.txt", "--data", "testdata/fashion",
		"--method", "neggrad", "--proxies=false", "--no-before", "--out", out, "--threads", "2")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "u.metrics.json")); bytes.Contains(b, []byte(`"proxies"`)) || !bytes.Contains(b, []byte(`"schedule": "fixed"`)) || strings.Contains(r.stdout, "proxies (no oracle)") {
		t.Errorf("--proxies=false: metrics %s", b)
	}
}

// A reset that empties the first layers while deeper ones stay frozen is
// not silent: the warning reaches stderr (not stdout, the table's) and
// metrics.json.
func TestUnlearnWarnsWhenResetEmptiesLayers(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "u.onnx")
	r := runCLI(t, "--model", model(t), "--forget", "testdata/demo/forget_nonIID.txt", "--data", "testdata/fashion",
		"--method", "shallowest-rft", "--budget", "0.05", "--epochs", "1", "--no-mia", "--out", out, "--threads", "2")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	// A long warning is wrapped onto indented lines: read it as one.
	stderr := strings.ReplaceAll(r.stderr, "\n  ", " ")
	if !strings.Contains(stderr, "\nwarning: the mask resets 16 of 16 channels of ") || !strings.Contains(stderr, "deeper layers stay frozen") ||
		strings.Contains(r.stdout, "warning") {
		t.Errorf("stderr lacks the warning, or stdout has it:\n%s\nstdout:\n%s", r.stderr, r.stdout)
	}
	b, err := os.ReadFile(filepath.Join(dir, "u.metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Unlearning struct {
			Notes []string `json:"notes"`
		} `json:"unlearning"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range doc.Unlearning.Notes {
		found = found || strings.HasPrefix(n, "warning: the mask resets")
	}
	if !found {
		t.Errorf("unlearning.notes of metrics.json lack the warning: %q", doc.Unlearning.Notes)
	}
}

// TestGradChannelsFlag: --grad-channels reaches the training engine (the
// run's notes name the restricted weight gradients) and the run still
// changes nothing outside the mask and the classifier.
func TestGradChannelsFlag(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "u.onnx")
	r := runCLI(t, "--model", model(t), "--forget", "testdata/demo/forget_nonIID.txt", "--data", "testdata/fashion",
		"--epochs", "1", "--grad-channels", "--no-mia", "--out", out, "--threads", "2")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var doc struct {
		Unlearning struct {
			Log struct {
				Notes []string `json:"notes"`
			} `json:"log"`
			Audit struct {
				BitIdentical bool `json:"outside_mask_bit_identical"`
			} `json:"audit"`
		} `json:"unlearning"`
	}
	if err := readJSON(filepath.Join(dir, "u.metrics.json"), &doc); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(doc.Unlearning.Log.Notes, func(n string) bool { return strings.Contains(n, "selected output channels only") }) {
		t.Errorf("no note on the restricted weight gradients: %q", doc.Unlearning.Log.Notes)
	}
	if !doc.Unlearning.Audit.BitIdentical {
		t.Error("parameters outside the mask changed")
	}
}

// TestRetrainEpochsFromMetadata: a model whose export recorded the epochs
// it was trained for (unlearn.train_epochs) gets the retraining estimate
// without --retrain-epochs, and says where the epochs came from; a value
// that is no epoch count stops the run naming the file and the key, with
// no output.
func TestRetrainEpochsFromMetadata(t *testing.T) {
	withEpochs := func(v string) string {
		m, err := onnxio.Load(model(t))
		if err != nil {
			t.Fatal(err)
		}
		if m.Metadata == nil {
			m.Metadata = map[string]string{}
		}
		m.Metadata[data.MetaTrainEpochs] = v
		b, err := onnxio.Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		return writeFile(t, "epochs.onnx", b)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "u.onnx")
	args := []string{"--forget", "testdata/demo/forget_nonIID.txt", "--data", "testdata/fashion", "--method", "finetune",
		"--epochs", "1", "--no-before", "--no-mia", "--out", out, "--threads", "2"}
	r := runCLI(t, append([]string{"--model", withEpochs("9")}, args...)...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if want := "retraining from scratch (9 epochs, from the model's unlearn.train_epochs metadata) would take about"; !strings.Contains(r.stdout, want) {
		t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
	}
	var doc struct {
		Unlearning struct {
			Epochs   int     `json:"retrain_epochs"`
			From     string  `json:"retrain_epochs_from"`
			Estimate float64 `json:"retrain_estimate_s"`
		} `json:"unlearning"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "u.metrics.json"))
	if err != nil || json.Unmarshal(b, &doc) != nil || doc.Unlearning.Epochs != 9 || doc.Unlearning.From != "metadata" || !(doc.Unlearning.Estimate > 0) {
		t.Errorf("metrics.json: %v; unlearning %+v", err, doc.Unlearning)
	}
	os.Remove(out)
	bad := withEpochs("nine")
	wantError(t, runCLI(t, append([]string{"--model", bad}, args...)...), exitError, bad, "unlearn.train_epochs", `"nine"`, "--retrain-epochs")
	if _, err := os.Stat(out); err == nil {
		t.Error("output written despite the error")
	}
	// --retrain-epochs overrides the metadata, bad or not.
	if r := runCLI(t, append([]string{"--model", bad, "--retrain-epochs", "2"}, args...)...); r.code != 0 || !strings.Contains(r.stdout, "retraining from scratch (2 epochs) would") {
		t.Errorf("--retrain-epochs over bad metadata: exit %d: %s%s", r.code, r.stderr, r.stdout)
	}
}
