package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/unlearn-tool/unlearn/unlearn"
)

var registerPanic sync.Once

// TestJSONLogSurvivesPanic: with --log-format json, a panic inside the run
// ends as one JSON error event naming an internal error, exit code 1, and
// no output file; stderr stays JSON lines throughout.
func TestJSONLogSurvivesPanic(t *testing.T) {
	registerPanic.Do(func() {
		if err := unlearn.Register(unlearn.Algorithm{Name: "test-panic", UsesForget: true,
			Run: func(*unlearn.Runner) error { panic("deliberate test panic") }}); err != nil {
			t.Fatal(err)
		}
	})
	out := filepath.Join(t.TempDir(), "u.onnx")
	r := runInProcess(t, "--log-format", "json", "--model", "testdata/resnet_small_train.onnx", "--forget", "testdata/demo/forget_nonIID.txt",
		"--data", "testdata/fashion", "--algorithm", "test-panic", "--no-mia", "--no-before", "--out", out, "--threads", "2")
	if r.code != exitError {
		t.Fatalf("exit %d, want %d; stderr %s", r.code, exitError, r.stderr)
	}
	lines := jsonLines(t, r.stderr)
	last := lines[len(lines)-1]
	if last["level"] != "error" || !strings.Contains(last["msg"].(string), "internal error: deliberate test panic") {
		t.Errorf("last event %v", last)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a model was written")
	}
}

// TestJSONOnStdoutAndStderr: eval --json - --log-format json keeps stdout
// one JSON document and stderr JSON lines (the table, which used to go to
// stderr beside the JSON, is left out).
func TestJSONOnStdoutAndStderr(t *testing.T) {
	r := runInProcess(t, "eval", "--log-format", "json", "--json", "-", "--model", "testdata/resnet_small_train.onnx",
		"--forget", "testdata/demo/forget_nonIID.txt", "--data", "testdata/fashion", "--no-mia", "--threads", "2")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc["schema"] != "unlearn.metrics/v1" {
		t.Fatalf("stdout is not metrics.json: %v", err)
	}
	jsonLines(t, r.stderr)
}

// TestConfigLogFormatAndQuiet: the config file may set log-format and
// quiet (it used to refuse them while listing them as keys); the command
// line wins.
func TestConfigLogFormatAndQuiet(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "run.yaml")
	if err := os.WriteFile(cfg, []byte("log-format: json\nmodel: testdata/resnet_small_train.onnx\nbogus: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// An unknown key still fails, and the listed keys include log-format
	// and quiet but not config or help.
	r := runInProcess(t, "inspect", "--config", cfg)
	wantError(t, r, exitUsage, "bogus", "log-format", "quiet")
	if strings.Contains(r.stderr, "config,") || strings.Contains(r.stderr, "help") {
		t.Errorf("lists keys a config cannot take: %s", r.stderr)
	}
	os.WriteFile(cfg, []byte("log-format: json\nquiet: true\nmodel: testdata/resnet_small_train.onnx\n"), 0o644)
	if r := runInProcess(t, "inspect", "--config", cfg); r.code != 0 || r.stdout != "" {
		t.Errorf("quiet from the config: exit %d, stdout %q", r.code, r.stdout)
	}
	if r := runInProcess(t, "inspect", "--config", cfg, "--quiet=false"); r.code != 0 || !strings.Contains(r.stdout, "classifier") {
		t.Errorf("--quiet=false on the command line does not win: exit %d, stdout %q", r.code, r.stdout)
	}
}
