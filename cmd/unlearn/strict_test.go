package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStrictExitsOnAnUnvouchedResult: with --strict, a run that is not
// vouched for writes every output and then exits with its own code (3),
// one line on stderr saying why; without --strict the same run exits 0.
// One epoch of a fixed recipe on the demo's non-IID set, which thins
// classes (estimate-bias), is not vouched for, and is cheap.
func TestStrictExitsOnAnUnvouchedResult(t *testing.T) {
	dir := t.TempDir()
	base := []string{"--model", model(t), "--forget", "testdata/demo/forget_nonIID.txt", "--data", "testdata/fashion",
		"--epochs", "1", "--lr", "0.01", "--threads", "2", "-q"}
	out := filepath.Join(dir, "strict.onnx")
	r := runCLI(t, append(base, "--out", out, "--strict")...)
	wantError(t, r, exitNotVouched, "--strict", "not vouched for", "estimate-bias")
	for _, p := range []string{out, filepath.Join(dir, "strict.metrics.json")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("--strict: output %s not written: %v", p, err)
		}
	}
	if r.stdout != "" {
		t.Errorf("-q --strict printed on stdout: %q", r.stdout)
	}
	r = runCLI(t, append(base, "--out", filepath.Join(dir, "plain.onnx"))...)
	if r.code != 0 || strings.Contains(r.stderr, "--strict") {
		t.Errorf("without --strict: exit %d, stderr %q", r.code, r.stderr)
	}
}
