package main

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
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

// TestInterruptsExitABlockedCommand: a cancellable command that does not
// return after SIGTERM (blocked in a call that cannot be interrupted) is
// exited after Grace, with Cleanup first; while Busy (committing its
// outputs) the exit waits. The context is cancelled at once. It sends
// SIGTERM to its own process, which the command's handler (installed by
// other tests' in-process runs) would answer by exiting the test binary,
// so it runs in a child process of its own (signalChildVar).
func TestInterruptsExitABlockedCommand(t *testing.T) {
	if os.Getenv(signalChildVar) != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestInterruptsExitABlockedCommand$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), signalChildVar+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestInterruptsExitABlockedCommand") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	exited := make(chan time.Time, 2)
	var cleaned atomic.Bool
	var busy atomic.Bool
	busy.Store(true)
	in := &signalWatch{Grace: 200 * time.Millisecond, Cleanup: func() { cleaned.Store(true) },
		Busy: busy.Load, Exit: func() { exited <- time.Now() }}
	in.Watch()
	defer signal.Reset(syscall.SIGTERM, os.Interrupt)
	ctx := in.Context()
	start := time.Now()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the context was not cancelled")
	}
	time.AfterFunc(600*time.Millisecond, func() { busy.Store(false) })
	select {
	case at := <-exited:
		if d := at.Sub(start); d < 500*time.Millisecond {
			t.Errorf("exited after %v, while still committing", d)
		}
		if !cleaned.Load() {
			t.Error("exit without cleanup")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a command blocked after SIGTERM was never exited")
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

// signalChildVar marks the child process of TestInterruptsExitABlockedCommand,
// which TestMain runs without building the command.
const signalChildVar = "UNLEARN_TEST_SIGNAL_CHILD"
