package clilog

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLoggerTextAndJSON(t *testing.T) {
	var b bytes.Buffer
	l := &Logger{W: &b, Prefix: "tool: error: "}
	l.Info("step", "doing it", "n", 1)
	l.Result("result", "n", 1) // text mode: results go to tables, not stderr
	l.Fail("bad", 1)
	if got := b.String(); got != "doing it\ntool: error: bad\n" {
		t.Errorf("text: %q", got)
	}
	b.Reset()
	l.JSON = true
	l.Info("step", "doing it", "n", 1)
	l.Bar("stage")(3, 3)
	l.Fail("bad", 2)
	var events []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		events = append(events, m)
	}
	if len(events) != 3 || events[0]["msg"] != "doing it" || events[0]["n"] != 1.0 || events[1]["event"] != "progress" ||
		events[2]["level"] != "error" || events[2]["exit_code"] != 2.0 {
		t.Errorf("events %v", events)
	}
	b.Reset()
	l.Quiet = true
	l.Info("step", "x")
	l.Bar("stage")(1, 1)
	if b.Len() != 0 {
		t.Errorf("quiet wrote %q", b.String())
	}
}

func TestConfigArgs(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "run.yaml")
	os.WriteFile(p, []byte("model: m.onnx\nmean: [0.5, 0.25]\nseed: 3\n"), 0o644)
	names := map[string]bool{"model": true, "mean": true, "seed": true}
	args, err := ConfigArgs(p, names, []string{"model", "mean", "seed"})
	if err != nil || !slices.Equal(args, []string{"--mean=0.5,0.25", "--model=m.onnx", "--seed=3"}) {
		t.Errorf("args %v, %v", args, err)
	}
	os.WriteFile(p, []byte("modle: m.onnx\n"), 0o644)
	_, err = ConfigArgs(p, names, []string{"seed", "model"})
	if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), `"modle"`) || !strings.Contains(err.Error(), "model, seed") {
		t.Errorf("unknown key: %v", err)
	}
	os.WriteFile(p, []byte("model:\n  a: 1\n"), 0o644)
	if _, err = ConfigArgs(p, names, nil); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "mapping") {
		t.Errorf("a mapping: %v", err)
	}
	if _, err = ConfigArgs("/dev/zero", names, nil); err == nil || errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a device: %v", err)
	}
}
