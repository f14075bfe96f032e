package clilog

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
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

// TestInterruptsExitABlockedCommand: a cancellable command that does not
// return after SIGTERM (blocked in a call that cannot be interrupted) is
// exited after Grace, with Cleanup first; while Busy (committing its
// outputs) the exit waits. The context is cancelled at once.
func TestInterruptsExitABlockedCommand(t *testing.T) {
	exited := make(chan time.Time, 2)
	var cleaned atomic.Bool
	var busy atomic.Bool
	busy.Store(true)
	in := &Interrupts{Grace: 200 * time.Millisecond, Cleanup: func() { cleaned.Store(true) },
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
	out, g, err := SplitGlobals([]string{"unlearn", "eval", "--config", "c.yaml", "-q", "--model", "m.onnx", "--log-format=json", "-", "--"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"unlearn", "eval", "--model", "m.onnx", "-", "--"}; !slices.Equal(out, want) {
		t.Errorf("rest %q, want %q", out, want)
	}
	if g != (Globals{Config: "c.yaml", Format: "json", FormatGiven: true, Quiet: true, QuietGiven: true}) {
		t.Errorf("globals %+v", g)
	}
	// experiment's own --config stays.
	out, g, err = SplitGlobals([]string{"unlearn", "experiment", "--config", "e.yaml"}, true)
	if err != nil || g.Config != "" || !slices.Equal(out, []string{"unlearn", "experiment", "--config", "e.yaml"}) {
		t.Errorf("keepConfig: %q %+v %v", out, g, err)
	}
	if _, _, err := SplitGlobals([]string{"unlearn", "--log-format"}, false); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "--log-format needs a value") {
		t.Errorf("missing value: %v", err)
	}
	// The command line wins over the config file.
	g = Globals{Format: "text", Quiet: true, QuietGiven: true}
	kept := g.FromConfig([]string{"--log-format=json", "--quiet=false", "--seed=3"})
	if g.Format != "json" || !g.Quiet || !slices.Equal(kept, []string{"--seed=3"}) {
		t.Errorf("FromConfig: %+v, kept %q", g, kept)
	}
}

// TestPace: no rate in a stage's first second (a first step over
// microseconds read as 35,804,196/s), then the rate and the time left.
func TestPace(t *testing.T) {
	if got := pace(1, 100, 30*time.Microsecond); got != "" {
		t.Errorf("first step: %q", got)
	}
	if got := pace(20, 100, 10*time.Second); got != "  2.0/s, about 40s left" {
		t.Errorf("20 of 100 in 10 s: %q", got)
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
		err := InRange("k", c.lo, 10, " models")(nil, c.v)
		if c.want == "" {
			if err != nil {
				t.Errorf("%d: %v", c.v, err)
			}
			continue
		}
		if err == nil || err.Error() != c.want || !errors.Is(err, ErrUsage) {
			t.Errorf("%d: %v, want the usage error %q", c.v, err, c.want)
		}
	}
}
