package main

import (
	"encoding/json"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMetricsToStdout: --metrics - writes metrics.json to stdout and
// nothing else there (the table and summary go to stderr), no file named
// "-" appears, and under -q the JSON is still written while stderr stays
// empty.
func TestMetricsToStdout(t *testing.T) {
	dir := t.TempDir()
	base := []string{"--model", model(t), "--forget", "testdata/demo/forget_nonIID.txt", "--data", "testdata/fashion",
		"--epochs", "1", "--lr", "0.01", "--threads", "2", "--metrics", "-"}
	for _, quiet := range []bool{false, true} {
		args := append(base, "--out", filepath.Join(dir, "u.onnx"))
		if quiet {
			args = append(base, "-q", "--out", filepath.Join(dir, "q.onnx"))
		}
		r := runCLI(t, args...)
		if r.code != 0 {
			t.Fatalf("quiet %v: exit %d: %s", quiet, r.code, r.stderr)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &m); err != nil || m["unlearning"] == nil {
			t.Fatalf("quiet %v: stdout is not metrics.json (%v): %.200q", quiet, err, r.stdout)
		}
		switch {
		case quiet && r.stderr != "":
			t.Errorf("-q: stderr %q, want nothing", r.stderr)
		case !quiet && (!strings.Contains(r.stderr, "accuracy") || !strings.Contains(r.stderr, "wrote metrics.json to stdout")):
			t.Errorf("the table and summary are not on stderr: %q", r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(testutil.RepoRoot(t), "-")); err == nil {
		t.Error(`a file named "-" was written`)
	}
}
