package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/onnxio"
)

// TestRetrainMethod: `unlearn --method retrain` with a recipe (one epoch,
// constant rate, its own momentum, weight decay and augmentation) writes
// the parameters `unlearn train --exclude FORGET --from-scratch` writes
// with the same flags, bit for bit; the terminal and metrics.json say it
// is exact unlearning and that every parameter changed.
func TestRetrainMethod(t *testing.T) {
	dir := t.TempDir()
	recipe := []string{"--epochs", "1", "--lr", "0.02", "--schedule", "constant", "--momentum", "0.8", "--weight-decay", "1e-4",
		"--augment", "flip", "--seed", "3", "--threads", "2"}
	trained := filepath.Join(dir, "train.onnx")
	r := runCLI(t, append([]string{"train", "--model", model(t), "--exclude", demoForget, "--from-scratch", "--out", trained}, recipe...)...)
	if r.code != 0 {
		t.Fatalf("train: exit %d: %s", r.code, r.stderr)
	}
	out := filepath.Join(dir, "retrained.onnx")
	r = runCLI(t, append([]string{"--model", model(t), "--forget", demoForget, "--method", "retrain", "--no-mia", "--out", out}, recipe...)...)
	if r.code != 0 {
		t.Fatalf("--method retrain: exit %d: %s", r.code, r.stderr)
	}
	a, err := onnxio.Load(trained)
	if err != nil {
		t.Fatal(err)
	}
	b, err := onnxio.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range a.Graph.Initializers {
		if w := b.Graph.LocalValue(v.Name); v.Init != nil && (w == nil || w.Init == nil || !bytes.Equal(v.Init.Raw, w.Init.Raw)) {
			t.Errorf("initializer %s differs from train --exclude --from-scratch's", v.Name)
		}
	}
	// The summary is stdout's; the run's notes are the log's (stderr).
	if want := "77754 of 77754 parameters changed (100.0%)"; !strings.Contains(r.stdout, want) {
		t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
	}
	for _, want := range []string{"note: exact unlearning by retraining: ",
		"SGD lr 0.02 (constant per step), momentum 0.8, weight decay 0.0001"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	mb, err := os.ReadFile(filepath.Join(dir, "retrained.metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Unlearning struct {
			Method, Strategy, Algorithm, Schedule string
			Epochs                                int
			Momentum                              float64
			WeightDecay                           float64 `json:"weight_decay"`
			Proxies                               any
		}
	}
	if err := json.Unmarshal(mb, &doc); err != nil {
		t.Fatal(err)
	}
	if u := doc.Unlearning; u.Method != "retrain" || u.Strategy != "full" || u.Algorithm != "retrain" || u.Schedule != "fixed" ||
		u.Epochs != 1 || u.Momentum != 0.8 || u.WeightDecay != 1e-4 || u.Proxies != nil {
		t.Errorf("metrics.json unlearning: %+v", u)
	}
}

// Recipes --method retrain cannot run are refused before any work, and
// the train command's schedules belong to retrain alone.
func TestRetrainMethodBadInput(t *testing.T) {
	base := []string{"--model", model(t), "--forget", demoForget, "--out", filepath.Join(t.TempDir(), "u.onnx")}
	for _, c := range []struct {
		args     []string
		code     int
		culprits []string
	}{
		{[]string{"--method", "retrain", "--schedule", "auto"}, exitUsage, []string{"--schedule auto", "retrain"}},
		{[]string{"--method", "del", "--schedule", "constant"}, exitUsage, []string{"--schedule constant", "--method retrain"}},
		{[]string{"--method", "retrain", "--momentum", "1"}, exitUsage, []string{"momentum 1"}},
		{[]string{"--method", "finetune", "--weight-decay", "-1"}, exitUsage, []string{"weight decay -1"}},
		{[]string{"--method", "retrain", "--strategy", "del"}, exitError, []string{"retrain", "no mask"}},
	} {
		wantError(t, runCLI(t, append(append([]string{}, base...), c.args...)...), c.code, c.culprits...)
	}
}
