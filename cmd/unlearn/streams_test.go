package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/schema"
)

// TestStreams: the table and the run's summary go to stdout; notes,
// warnings and the verdict to stderr, each warning's first line under 120
// bytes, and no note twice.
func TestStreams(t *testing.T) {
	dir := t.TempDir()
	r := runCLI(t, "--model", model(t), "--forget", demoForget, "--data", "testdata/fashion", "--epochs", "1",
		"--no-mia", "--out", filepath.Join(dir, "u.onnx"), "--threads", "2")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"metric ", "accuracy ", "\nwrote ", "\ntime: localize", "\nproxies (no oracle)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, line := range strings.Split(r.stdout, "\n") {
		for _, p := range []string{"note:", "warning", "verdict:", "localizing:", "epoch "} {
			if strings.HasPrefix(line, p) {
				t.Errorf("stdout has the log's line %q", line)
			}
		}
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	// The demo's forget set thins two classes: a fixed recipe there is
	// flagged, and the verdict, last, names the flag.
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "verdict: NOT vouched for (estimate-bias") {
		t.Errorf("stderr's last line %q, want the verdict", last)
	}
	warned, seen := false, map[string]bool{}
	for _, l := range lines {
		if strings.HasPrefix(l, "warning") {
			warned = true
			if len(l) >= 120 {
				t.Errorf("a warning's first line of %d bytes: %q", len(l), l)
			}
		}
		if strings.HasPrefix(l, "note: ") || strings.HasPrefix(l, "warning") {
			if seen[l] {
				t.Errorf("printed twice: %q", l)
			}
			seen[l] = true
		}
		if strings.HasPrefix(l, "metric ") || strings.HasPrefix(l, "wrote ") {
			t.Errorf("stderr has stdout's line %q", l)
		}
	}
	if !warned {
		t.Errorf("no warning on stderr:\n%s", r.stderr)
	}
}

// TestNotesOnce: PyTorch's default export (a fixed batch, BatchNormalization
// folded) gets its three notes once each, on stderr, before the work.
func TestNotesOnce(t *testing.T) {
	r := runCLI(t, "--model", "testdata/exports/a_default_fixed_batch.onnx", "--forget", demoForget, "--data",
		"testdata/fashion", "--epochs", "1", "--no-mia", "--no-before", "--out", filepath.Join(t.TempDir(), "u.onnx"),
		"--threads", "2")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	n := 0
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.HasPrefix(l, "note: ") {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d notes on stderr, want 3 (fixed batch, folded, restored):\n%s", n, r.stderr)
	}
	if strings.Contains(r.stdout, "note: ") {
		t.Errorf("stdout has notes:\n%s", r.stdout)
	}
}

// eventFields are the fields each event about a run's result and the auto
// schedule's decisions carries besides time, level and event, as
// docs/PIPELINES.md lists them.
var eventFields = map[string][]string{
	"epoch":    {"epoch", "loss", "accuracy", "seconds"},
	"decision": {"epoch", "stop", "reason", "result_epoch", "forget_ok", "utility_ok", "detail", "lr", "forget_accuracy", "test_accuracy", "proxies"},
	"note":     {"msg"},
	"warning":  {"msg"},
	"verdict":  {"msg", "vouched", "flags", "reason"},
}

// TestJSONEventsStream: under --log-format json the auto schedule's epochs
// and decisions are events written as they happen (read from the pipe while
// the process runs, with differing timestamps), in order: each epoch, then
// its decision, the last one a stop; then the warnings and the verdict,
// and the result last. Every event has its documented fields, and
// metrics.json's summary agrees with the verdict.
func TestJSONEventsStream(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(binPath, "--log-format", "json", "--model", model(t), "--forget", demoForget, "--data",
		"testdata/fashion", "--max-epochs", "2", "--no-mia", "--out", filepath.Join(dir, "u.onnx"), "--threads", "2")
	cmd.Dir = testutil.RepoRoot(t)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var events []map[string]any
	var firstEpochRead time.Time
	runningAtFirstEpoch := false
	sc := bufio.NewScanner(pipe)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not a JSON line: %q", sc.Text())
		}
		if m["event"] == "epoch" && firstEpochRead.IsZero() {
			firstEpochRead = time.Now()
			runningAtFirstEpoch = running(cmd.Process.Pid)
		}
		events = append(events, m)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run: %v; events %v", err, events)
	}
	exited := time.Now()
	if !runningAtFirstEpoch || exited.Sub(firstEpochRead) < 200*time.Millisecond {
		t.Errorf("the first epoch event was read %v before the process exited (running then: %v): not streamed",
			exited.Sub(firstEpochRead), runningAtFirstEpoch)
	}
	var kinds []string
	times := map[string][]string{}
	for _, e := range events {
		k := e["event"].(string)
		if _, ok := eventFields[k]; ok || k == "result" {
			kinds = append(kinds, k)
		}
		times[k] = append(times[k], e["time"].(string))
		for _, f := range eventFields[k] {
			if _, ok := e[f]; !ok {
				t.Errorf("%s event lacks %q: %v", k, f, e)
			}
		}
	}
	order := strings.Join(kinds, " ")
	if !regexp.MustCompile(`^(note )*(epoch decision )+(note |warning )*verdict result$`).MatchString(order) {
		t.Errorf("events in order %q, want notes, each epoch with its decision, notes and warnings, the verdict, "+
			"the result", order)
	}
	if ts := times["epoch"]; len(ts) < 2 || ts[0] == ts[len(ts)-1] {
		t.Errorf("epoch events' times %v: not written as each epoch ended", ts)
	}
	var decisions []map[string]any
	var verdict map[string]any
	for _, e := range events {
		switch e["event"] {
		case "decision":
			decisions = append(decisions, e)
		case "verdict":
			verdict = e
		}
	}
	for i, d := range decisions {
		if d["stop"] != (i == len(decisions)-1) || d["epoch"] != float64(i+1) {
			t.Errorf("decision %d: %v, want go on until the last, a stop", i+1, d)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "u.metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc schema.Report
	if err := json.Unmarshal(b, &doc); err != nil || doc.Summary == nil {
		t.Fatalf("metrics.json has no summary (%v)", err)
	}
	s := doc.Summary
	var flags []string
	for _, f := range verdict["flags"].([]any) {
		flags = append(flags, f.(string))
	}
	if s.Vouched != verdict["vouched"] || !slices.Equal(s.Flags, flags) || s.Vouched != doc.Unlearning.Vouched ||
		(s.StrictExitCode == 0) != s.Vouched || s.TestAccuracy != doc.Accuracy.Test || s.ForgetTolerance == nil ||
		*s.ForgetTolerance != doc.Unlearning.Auto.ForgetTolerance || s.OracleEstimateForget == nil {
		t.Errorf("summary %+v disagrees with the verdict event %v or the report", s, verdict)
	}
	if s.StrictExitCode != 0 && s.StrictExitCode != exitNotVouched {
		t.Errorf("summary's strict exit code %d, --strict exits %d", s.StrictExitCode, exitNotVouched)
	}
	// The events and their fields are documented where the JSON log is.
	doc2, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "docs", "PIPELINES.md"))
	if err != nil {
		t.Fatal(err)
	}
	for k, fields := range eventFields {
		for _, f := range append([]string{k}, fields...) {
			if !strings.Contains(string(doc2), "`"+f+"`") {
				t.Errorf("docs/PIPELINES.md does not name %s's %q", k, f)
			}
		}
	}
}

// running says whether process pid has not exited (it has not been
// waited for, so an exited one is a zombie).
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] != 'Z'
}
