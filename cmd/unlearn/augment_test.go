package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --augment is checked before any work, on `unlearn train` and the main
// command, and refused for an algorithm that does not augment.
func TestAugmentFlagErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "m.onnx")
	train := []string{"train", "--model", model(t), "--data", "testdata/fashion", "--out", out}
	main := []string{"--model", model(t), "--forget", "testdata/demo/forget_nonIID.txt", "--data", "testdata/fashion", "--out", out}
	for _, c := range []struct {
		args     []string
		culprits []string
	}{
		{append(train, "--augment", "pad=x"), []string{"--augment", "pad needs a whole number"}},
		{append(train, "--augment", "crop=4"), []string{"--augment", `unknown item "crop=4"`}},
		{append(train, "--augment", "pad=-1"), []string{"--augment", "pad=-1", "[0, 1024]"}},
		{append(train, "--augment", "flip=1"), []string{"--augment", "flip takes no value"}},
		{append(train, "--augment", "flip,flip"), []string{"--augment", "given twice"}},
		{append(main, "--augment", "pad=4,hflip"), []string{"--augment", `unknown item "hflip"`}},
		{append(main, "--algorithm", "scrub", "--augment", "pad=4,flip"), []string{"--augment pad=4,flip", "scrub does not augment", "rft, finetune"}},
		{append(main, "--algorithm", "ssd", "--augment", "flip"), []string{"--augment flip", "ssd does not augment"}},
	} {
		wantError(t, runCLI(t, c.args...), exitUsage, c.culprits...)
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%v wrote %s", c.args, out)
		}
	}
}

// The main command records --augment in metrics.json's unlearning section
// and its notes; without it the key is absent.
func TestAugmentMetrics(t *testing.T) {
	dir := t.TempDir()
	run := func(name string, extra ...string) map[string]any {
		out := filepath.Join(dir, name+".onnx")
		args := append([]string{"--model", model(t), "--forget", "testdata/demo/forget_nonIID.txt", "--data", "testdata/fashion",
			"--algorithm", "finetune", "--epochs", "1", "--proxies=false", "--no-before", "--no-mia", "--budget", "0.1",
			"--out", out, "--threads", "2"}, extra...)
		r := runCLI(t, args...)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		b, err := os.ReadFile(filepath.Join(dir, name+".metrics.json"))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Unlearning map[string]any `json:"unlearning"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Unlearning
	}
	on := run("on", "--augment", "flip, pad=2")
	if on["augment"] != "pad=2,flip" {
		t.Errorf("augment = %v, want pad=2,flip", on["augment"])
	}
	log, _ := json.Marshal(on["log"])
	if !strings.Contains(string(log), "RandomCrop(size, padding=2), RandomHorizontalFlip()") {
		t.Errorf("the log's notes do not describe the augmentation: %s", log)
	}
	off := run("off")
	if _, ok := off["augment"]; ok {
		t.Errorf("augment key without --augment: %v", off["augment"])
	}
}
