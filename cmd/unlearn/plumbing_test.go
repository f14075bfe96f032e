package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestConfigArgs: a config file's values become --name=value arguments,
// sorted by name, and its refusals are usage errors worded as flags.
func TestConfigArgs(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "run.yaml")
	os.WriteFile(p, []byte("model: m.onnx\nmean: [0.5, 0.25]\nseed: 3\n"), 0o644)
	flags := []cli.Flag{&cli.StringFlag{Name: "model"}, &cli.StringFlag{Name: "mean"}, &cli.IntFlag{Name: "seed"},
		&cli.StringFlag{Name: "config"}}
	args, err := configArgs(p, flags)
	if err != nil || !slices.Equal(args, []string{"--mean=0.5,0.25", "--model=m.onnx", "--seed=3"}) {
		t.Errorf("args %v, %v", args, err)
	}
	os.WriteFile(p, []byte("modle: m.onnx\n"), 0o644)
	_, err = configArgs(p, flags)
	if !isUsage(err) || !strings.Contains(render(err), `"modle"`) || !strings.Contains(render(err), "mean, model, seed") ||
		!strings.HasPrefix(render(err), "--config "+p) {
		t.Errorf("unknown key: %v", err)
	}
	os.WriteFile(p, []byte("model:\n  a: 1\n"), 0o644)
	if _, err = configArgs(p, flags); !isUsage(err) || !strings.Contains(err.Error(), "mapping") {
		t.Errorf("a mapping: %v", err)
	}
	// A --config that is no file is a usage error (issue 64, item 10: it exited 1).
	if _, err = configArgs("/dev/zero", flags); !isUsage(err) || !strings.Contains(render(err), "--config: ") ||
		!strings.Contains(err.Error(), "not a regular file") {
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

// isUsage reports whether err is a usage error (exit code 2).
func isUsage(err error) bool {
	var u usageError
	return errors.As(err, &u)
}
