package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/unlearn-tool/unlearn/internal/testutil"
)

const demoForget = "testdata/demo/forget_nonIID.txt"

// jsonLines parses stderr as JSON lines and fails on any other line.
func jsonLines(t *testing.T, stderr string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("stderr line is not JSON: %q", l)
		}
		if m["level"] == nil || m["event"] == nil || m["time"] == nil {
			t.Fatalf("line lacks level, event or time: %q", l)
		}
		out = append(out, m)
	}
	return out
}

func TestLogFormatJSON(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "u.onnx")
	// --log-format and --quiet work anywhere on the line.
	r := runCLI(t, "--model", model(t), "--forget", demoForget, "--method", "finetune", "--epochs", "1",
		"--no-mia", "--out", out, "--threads", "2", "--log-format", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	events := map[string]map[string]any{}
	for _, m := range jsonLines(t, r.stderr) {
		events[m["event"].(string)] = m
	}
	for _, e := range []string{"localize", "unlearn", "epoch", "result"} {
		if events[e] == nil {
			t.Errorf("no %q event in %s", e, r.stderr)
		}
	}
	res := events["result"]
	if res != nil {
		if res["out"] != out || res["outside_mask_bit_identical"] != true {
			t.Errorf("result %v", res)
		}
		acc, _ := res["accuracy"].(map[string]any)
		if v, ok := acc["forget"].(float64); !ok || v < 0 || v > 1 {
			t.Errorf("result accuracy %v", res["accuracy"])
		}
	}
	// Errors are one JSON line with the exit code.
	r = runCLI(t, "localize", "--log-format=json", "--model", model(t), "--forget", demoForget, "--budget", "7", "--out", filepath.Join(dir, "m.json"))
	if r.code != exitUsage {
		t.Fatalf("exit %d", r.code)
	}
	ev := jsonLines(t, r.stderr)
	if len(ev) != 1 || ev[0]["level"] != "error" || ev[0]["exit_code"] != float64(exitUsage) || !strings.Contains(ev[0]["msg"].(string), "--budget") {
		t.Fatalf("error events %v", ev)
	}
	wantError(t, runCLI(t, "version", "--log-format", "xml"), exitUsage, "--log-format", "xml")
}

func TestQuiet(t *testing.T) {
	dir := t.TempDir()
	mask := filepath.Join(dir, "m.json")
	r := runCLI(t, "localize", "--model", model(t), "--forget", demoForget, "--budget", "0.1", "--out", mask, "-q")
	if r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(mask); err != nil {
		t.Fatal("--quiet must still write the output")
	}
	r = runCLI(t, "--quiet", "eval", "--model", model(t), "--no-mia")
	if r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("eval --quiet: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// Errors still show.
	wantError(t, runCLI(t, "eval", "--quiet", "--model", "nope.onnx"), exitError, "nope.onnx")
}

func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	mask := filepath.Join(dir, "m.json")
	cfg := writeFile(t, "run.yaml", []byte(fmt.Sprintf("# localize settings\nmodel: %s\nforget: %s\nstrategy: deepest\nbudget: 0.05\nout: %s\n", model(t), demoForget, mask)))
	r := runCLI(t, "localize", "--config", cfg, "--budget", "0.1") // the command line wins
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var doc struct {
		Strategy string  `json:"strategy"`
		Budget   float64 `json:"budget"`
	}
	b, _ := os.ReadFile(mask)
	if err := json.Unmarshal(b, &doc); err != nil || doc.Strategy != "deepest" || doc.Budget != 0.1 {
		t.Fatalf("mask %s (%v): want strategy deepest from the file, budget 0.1 from the flag", b, err)
	}
	// The main command, with a list value and a bool.
	out := filepath.Join(dir, "u.onnx")
	cfg2 := writeFile(t, "main.yaml", []byte(fmt.Sprintf("model: %s\nforget: %s\nmethod: neggrad\nno-mia: true\nthreads: 2\nout: %s\nmean: [0]\nstd: [1]\n", model(t), demoForget, out)))
	r = runCLI(t, "--config", cfg2, "--quiet")
	if r.code != 0 {
		t.Fatalf("main command from config: exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
	bad := writeFile(t, "bad.yaml", []byte("model: m.onnx\nbudgett: 0.3\n"))
	wantError(t, runCLI(t, "--config", bad), exitUsage, "bad.yaml", `"budgett"`)
	wantError(t, runCLI(t, "localize", "--config", writeFile(t, "x.yaml", []byte("- a\n- b\n"))), exitError, "x.yaml", "YAML")
	wantError(t, runCLI(t, "--config", filepath.Join(dir, "none.yaml")), exitUsage, "none.yaml")
	wantError(t, runCLI(t, "localize", "--config", writeFile(t, "t.yaml", []byte("budget: lots\n"))), exitUsage, "budget", "lots")
}

// TestDeterminism: the same seeded run twice gives the same model bytes and
// the same metrics apart from timings.
func TestDeterminism(t *testing.T) {
	dir := t.TempDir()
	run := func(name string) ([]byte, map[string]any) {
		out := filepath.Join(dir, name+".onnx")
		r := runCLI(t, "--model", model(t), "--forget", demoForget, "--method", "del", "--budget", "0.1", "--epochs", "1",
			"--seed", "7", "--threads", "2", "--out", out, "--quiet")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		mb, _ := os.ReadFile(filepath.Join(dir, name+".metrics.json"))
		var m map[string]any
		if err := json.Unmarshal(mb, &m); err != nil {
			t.Fatal(err)
		}
		return b, stripRunSpecific(m).(map[string]any)
	}
	a, ma := run("a")
	b, mb := run("b")
	if !bytes.Equal(a, b) {
		t.Fatal("two runs with --seed 7 wrote different models")
	}
	ja, _ := json.Marshal(ma)
	jb, _ := json.Marshal(mb)
	if !bytes.Equal(ja, jb) {
		t.Fatalf("metrics differ beyond timings and paths:\n%s\n%s", ja, jb)
	}
}

// stripRunSpecific drops what legitimately differs between two runs: wall
// times and the output paths and their hashes' context.
func stripRunSpecific(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == "timings" || k == "seconds" || k == "Seconds" || strings.HasSuffix(k, "_s") || k == "speedup" || k == "epochs_equivalent" || k == "path" ||
				k == "retrain_steps_timed" { // as many steps as fit in the timing's seconds
				delete(x, k)
				continue
			}
			x[k] = stripRunSpecific(e)
		}
	case []any:
		for i := range x {
			x[i] = stripRunSpecific(x[i])
		}
	}
	return v
}

// TestInterrupt sends SIGINT or SIGTERM at random moments of a run and
// checks that the run either finished (exit 0, every output complete) or
// stopped with exit 130 leaving no output and no temporary file; the input
// is never changed. A SIGKILL cannot be handled: it may leave a temporary
// file, but never a partial output under the final name.
func TestInterrupt(t *testing.T) {
	testutil.RequireORT(t)
	in, _ := os.ReadFile(model(t))
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	// One complete run gives the time scale.
	start := time.Now()
	dir0 := t.TempDir()
	args := func(dir string) []string {
		return []string{"--model", model(t), "--forget", demoForget, "--method", "finetune", "--epochs", "1", "--no-mia",
			"--threads", "2", "--out", filepath.Join(dir, "u.onnx"), "--report", filepath.Join(dir, "r.html"), "--quiet"}
	}
	if r := runCLI(t, args(dir0)...); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	full := time.Since(start)
	sigs := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL, syscall.SIGINT}
	stopped := 0
	for i, sig := range sigs {
		dir := t.TempDir()
		delay := time.Duration(rng.Float64() * 1.1 * float64(full))
		cmd := exec.Command(binPath, args(dir)...)
		cmd.Dir = testutil.RepoRoot(t)
		var se bytes.Buffer
		cmd.Stderr = &se
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.AfterFunc(delay, func() { cmd.Process.Signal(sig) })
		cmd.Wait()
		code := cmd.ProcessState.ExitCode()
		files, _ := os.ReadDir(dir)
		var names []string
		for _, f := range files {
			names = append(names, f.Name())
		}
		t.Logf("run %d: %v after %v: exit %d, files %v", i, sig, delay.Round(time.Millisecond), code, names)
		switch {
		case code == 0:
			for _, f := range []string{"u.onnx", "u.metrics.json", "r.html"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("run %d: exit 0 without %s", i, f)
				}
			}
		case sig == syscall.SIGKILL:
			stopped++
			for _, n := range names {
				if !strings.HasPrefix(n, ".") {
					t.Errorf("run %d: killed, yet %s is in place", i, n)
				}
			}
		default:
			stopped++
			if code != exitInterrupted {
				t.Errorf("run %d: exit %d after %v, want 130; stderr %s", i, code, sig, se.String())
			}
			if len(names) != 0 {
				t.Errorf("run %d: interrupted, yet left %v", i, names)
			}
		}
		if after, _ := os.ReadFile(model(t)); !bytes.Equal(in, after) {
			t.Fatal("the input model changed")
		}
	}
	if stopped == 0 {
		t.Error("no run was interrupted; the test checked nothing")
	}
}
