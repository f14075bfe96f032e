package main

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestConfigArgs(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "run.yaml")
	os.WriteFile(p, []byte("model: m.onnx\nmean: [0.5, 0.25]\nseed: 3\n"), 0o644)
	names := map[string]bool{"model": true, "mean": true, "seed": true}
	args, err := readConfigArgs(p, names, []string{"model", "mean", "seed"})
	if err != nil || !slices.Equal(args, []string{"--mean=0.5,0.25", "--model=m.onnx", "--seed=3"}) {
		t.Errorf("args %v, %v", args, err)
	}
	os.WriteFile(p, []byte("modle: m.onnx\n"), 0o644)
	_, err = readConfigArgs(p, names, []string{"seed", "model"})
	if !isUsage(err) || !strings.Contains(err.Error(), `"modle"`) || !strings.Contains(err.Error(), "model, seed") {
		t.Errorf("unknown key: %v", err)
	}
	os.WriteFile(p, []byte("model:\n  a: 1\n"), 0o644)
	if _, err = readConfigArgs(p, names, nil); !isUsage(err) || !strings.Contains(err.Error(), "mapping") {
		t.Errorf("a mapping: %v", err)
	}
	// A --config that is no file is a usage error (issue 64, item 10: it exited 1).
	if _, err = readConfigArgs("/dev/zero", names, nil); !isUsage(err) || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a device: %v", err)
	}
}

func TestSplitGlobals(t *testing.T) {
	out, g, err := splitGlobals([]string{"unlearn", "eval", "--config", "c.yaml", "-q", "--model", "m.onnx", "--log-format=json", "-", "--"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"unlearn", "eval", "--model", "m.onnx", "-", "--"}; !slices.Equal(out, want) {
		t.Errorf("rest %q, want %q", out, want)
	}
	if g != (globals{Config: "c.yaml", Format: "json", FormatGiven: true, Quiet: true, QuietGiven: true}) {
		t.Errorf("globals %+v", g)
	}
	// experiment's own --config stays.
	out, g, err = splitGlobals([]string{"unlearn", "experiment", "--config", "e.yaml"}, true)
	if err != nil || g.Config != "" || !slices.Equal(out, []string{"unlearn", "experiment", "--config", "e.yaml"}) {
		t.Errorf("keepConfig: %q %+v %v", out, g, err)
	}
	if _, _, err := splitGlobals([]string{"unlearn", "--log-format"}, false); !isUsage(err) || !strings.Contains(err.Error(), "--log-format needs a value") {
		t.Errorf("missing value: %v", err)
	}
	// The command line wins over the config file.
	g = globals{Format: "text", Quiet: true, QuietGiven: true}
	kept := g.fromConfig([]string{"--log-format=json", "--quiet=false", "--seed=3"})
	if g.Format != "json" || !g.Quiet || !slices.Equal(kept, []string{"--seed=3"}) {
		t.Errorf("FromConfig: %+v, kept %q", g, kept)
	}
}

// TestInRange: a flag outside its range is a usage error naming the flag,
// the value and the range; with no lower bound only the upper one applies.
func TestInRange(t *testing.T) {
	for _, c := range []struct {
		lo, v int
		want  string
	}{
		{2, 1, "--k 1: must be in [2, 10] models"},
		{2, 11, "--k 11: must be in [2, 10] models"},
		{2, 2, ""},
		{math.MinInt, -5, ""},
		{math.MinInt, 11, "--k 11: at most 10 models"},
	} {
		err := inRange("k", c.lo, 10, " models")(nil, c.v)
		if c.want == "" {
			if err != nil {
				t.Errorf("%d: %v", c.v, err)
			}
			continue
		}
		if err == nil || err.Error() != c.want || !isUsage(err) {
			t.Errorf("%d: %v, want the usage error %q", c.v, err, c.want)
		}
	}
}

// isUsage reports whether err is a usage error (exit code 2).
func isUsage(err error) bool {
	var u usageError
	return errors.As(err, &u)
}
