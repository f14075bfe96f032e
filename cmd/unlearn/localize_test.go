package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestLocalizeCommand(t *testing.T) {
	dir := t.TempDir()
	mask := filepath.Join(dir, "mask.json")
	scores := filepath.Join(dir, "scores.safetensors")
	r := runCLI(t, "localize", "--model", model(t), "--data", "testdata/fashion", "--forget", "testdata/demo/forget_nonIID.txt",
		"--budget", "0.1", "--out", mask, "--scores", scores, "--threads", "2")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	b, err := os.ReadFile(mask)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema   string `json:"schema"`
		Selected int64  `json:"selected"`
		Total    int64  `json:"total"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != "unlearn.mask/v1" || doc.Total != 77754 || doc.Selected == 0 || doc.Selected > 7775 {
		t.Fatalf("mask %+v", doc)
	}
	if st, err := os.Stat(scores); err != nil || st.Size() < 4*77754 {
		t.Fatalf("scores file: %v", err)
	}
}

func TestLocalizeBadInput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "m.json")
	base := []string{"localize", "--model", model(t), "--forget", "testdata/demo/forget_nonIID.txt", "--out", out}
	wantError(t, runCLI(t, append(base, "--budget", "0")...), exitUsage, "--budget")
	wantError(t, runCLI(t, append(base, "--budget", "2")...), exitUsage, "--budget")
	wantError(t, runCLI(t, append(base, "--strategy", "dartboard")...), exitUsage, "--strategy", "dartboard")
	wantError(t, runCLI(t, "localize", "--model", model(t), "--forget", "testdata/demo/forget_nonIID.txt", "--out", filepath.Join(dir, "x", "m.json")), exitError, "does not exist")
	if _, err := os.Stat(out); err == nil {
		t.Fatal("mask written despite errors")
	}
}
