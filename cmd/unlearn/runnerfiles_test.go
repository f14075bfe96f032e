package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/unlearn-tool/unlearn/experiment"
)

// wantRefused checks issue 64's contract for a refusal: exit code 2, one
// error line naming every culprit, under 2 GB of peak memory and 60 s,
// and none of the paths in absent created.
func wantRefused(t *testing.T, r result, absent []string, culprits ...string) {
	t.Helper()
	wantError(t, r, exitUsage, culprits...)
	if r.peakKB > 2<<20 || r.wall > time.Minute {
		t.Errorf("peak memory %d MB, %.1f s before the refusal; the bound is 2 GB and 60 s", r.peakKB>>10, r.wall.Seconds())
	}
	for _, p := range absent {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the refused run created %s", p)
		}
	}
}

// experimentFile writes an experiment file into a fresh folder: a grid of
// one ids-file forget set with an outside oracle, whose model: is model
// and whose lines extra are added; it returns the file and its out folder.
func experimentFile(t *testing.T, model, extra string) (cfg, out string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "forget.txt"), []byte("1\n2\n3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out = filepath.Join(dir, "out")
	cfg = filepath.Join(dir, "exp.yaml")
	yaml := "model: " + model + "\ndata: testdata/fashion\ntrain: {epochs: 1, lr: 0.05}\n" +
		"forget_sets: [{name: outside, kind: file, ids: " + filepath.Join(dir, "forget.txt") + ", oracle: " +
		filepath.Join(dir, "oracle.onnx") + "}]\nseeds: [0]\nno_mia: true\nout: " + out + "\n" +
		"methods: [{name: SSD, method: ssd}]\n" + extra
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg, out
}

// TestExperimentModelNotHashedBlindly (issue 64, item 4): end to end, an
// experiment's model: that is /dev/zero, a FIFO, a folder or a 20 GB
// sparse file is refused by --dry-run with exit code 2 and one line naming
// the key and the file, at once, writing nothing.
func TestExperimentModelNotHashedBlindly(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.onnx")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sparse := filepath.Join(dir, "sparse.onnx")
	f, err := os.Create(sparse)
	if err == nil {
		err = f.Truncate(20 << 30)
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ model, want string }{
		{"/dev/zero", "character device"}, {fifo, "FIFO"}, {"/usr", "is a folder"}, {sparse, "more than the 2147483648"},
	} {
		cfg, out := experimentFile(t, c.model, "")
		r := runCLI(t, "experiment", "--config", cfg, "--dry-run")
		wantRefused(t, r, []string{out}, "model: model "+c.model, c.want)
		if r.wall > 10*time.Second {
			t.Errorf("%s: refused after %v, not at once", c.model, r.wall)
		}
	}
}

// TestResultsFilesBounded (issue 64, item 5): end to end through
// --report-only, a results.jsonl that is a link (to /etc/passwd), a shard's
// file that is a FIFO and a 1 GB sparse results.jsonl are refused with exit
// code 2 and one line naming the file, writing no RESULTS.md; a results
// file just under MaxResultsSize of valid records (some 60,000) is
// reported within 60 s and 2 GB, the gather's bound.
func TestResultsFilesBounded(t *testing.T) {
	mdl := model(t)
	for _, c := range []struct {
		name, file, want string
		make             func(p string) error
	}{
		{"link to /etc/passwd", "results.jsonl", "symbolic link", func(p string) error { return os.Symlink("/etc/passwd", p) }},
		{"FIFO shard", "results.shard-1.jsonl", "FIFO", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
		{"1 GB sparse", "results.jsonl", "more than the 67108864 bytes", func(p string) error {
			f, err := os.Create(p)
			if err == nil {
				err = f.Truncate(1 << 30)
				f.Close()
			}
			return err
		}},
	} {
		cfg, out := experimentFile(t, mdl, "")
		if err := os.MkdirAll(out, 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(out, c.file)
		if err := c.make(p); err != nil {
			t.Fatal(err)
		}
		r := runCLI(t, "experiment", "--config", cfg, "--report-only")
		wantRefused(t, r, []string{filepath.Join(out, "RESULTS.md")}, p, c.want)
	}

	// The gather of a results file at the bounds (these records are shorter
	// than a real run's, so MaxRecords comes first).
	cfg, out := experimentFile(t, mdl, "")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for i := 0; ; i++ {
		rec := experiment.Record{Schema: experiment.RecordSchema, Key: fmt.Sprintf("%016x", i), Kind: "run", ForgetSet: "outside",
			Name: "SSD", Accuracy: map[string]float64{"forget": 0.5, "test": 0.9, "train": 0.95, "retain": 0.95},
			MIA: map[string]float64{"correctness": 0.5, "confidence": 0.5}, Delta: map[string]float64{"forget": 0.01, "test": 0.01},
			Seconds: 12, OracleSeconds: 100, Forget: 40, Machine: "m"}
		line, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		if b.Len()+len(line)+1 > experiment.MaxResultsSize || i == experiment.MaxRecords {
			break
		}
		b.Write(append(line, '\n'))
	}
	if err := os.WriteFile(filepath.Join(out, "results.jsonl"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "experiment", "--config", cfg, "--report-only")
	if r.code != 0 {
		t.Fatalf("report of %d bytes of records: exit %d: %s", b.Len(), r.code, r.stderr)
	}
	t.Logf("report of %d bytes of records: %.1f s, peak %d MB", b.Len(), r.wall.Seconds(), r.peakKB>>10)
	if r.peakKB > 2<<20 || r.wall > time.Minute {
		t.Errorf("report of %d bytes of records: peak %d MB, %.1f s; the bound is 2 GB and 60 s", b.Len(), r.peakKB>>10, r.wall.Seconds())
	}
}

// TestErrorsPrintNoFileContent (issue 64, item 8): a file that is not what
// the command expected (a stand-in for /etc/shadow) given as an experiment
// file, as the main command's --config, as --forget and as an experiment's
// ids: is named with its line and what was expected, in one line, without
// any of its text.
func TestErrorsPrintNoFileContent(t *testing.T) {
	const secret = "saltsalt"
	shadow := writeFile(t, "shadow", []byte("root:$6$"+secret+"$hash:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n"))
	noContent := func(name string, r result) {
		t.Helper()
		if strings.Contains(r.stderr, secret) || strings.Contains(r.stderr, "daemon") || strings.Contains(r.stdout, secret) {
			t.Errorf("%s: the error prints the file: %q", name, r.stderr)
		}
	}
	r := runCLI(t, "experiment", "--config", shadow, "--dry-run")
	wantError(t, r, exitUsage, shadow, "not an experiment file", "was expected")
	noContent("experiment --config", r)
	r = runCLI(t, "--config", shadow)
	wantError(t, r, exitUsage, shadow, "unknown key (not a key name)")
	noContent("--config", r)
	r = runCLI(t, "eval", "--model", model(t), "--forget", shadow)
	wantError(t, r, exitError, shadow+":1: the line is not an integer id")
	noContent("eval --forget", r)
	cfg, _ := experimentFile(t, model(t), "")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ids := filepath.Join(filepath.Dir(cfg), "forget.txt")
	if err := os.WriteFile(cfg, bytes.Replace(b, []byte(ids), []byte(shadow), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "experiment", "--config", cfg, "--dry-run")
	wantError(t, r, exitError, shadow+":1: the line is not an integer id")
	noContent("experiment ids:", r)
}

// TestContradictionsRefused (issue 64, item 10): each contradiction is
// refused with exit code 2 and one line naming both sides, writing
// nothing: --report-only with --dry-run; an experiment in a Slurm array
// ($SLURM_ARRAY_TASK_ID) without --shards (score's documented use, a whole
// audit per task, is warned in one line instead); --results given twice; a
// FIFO or oversize --config; a link in RESULTS.md's place in out/ (left as
// it was); a sidecar refused (its forget set's ids file is no longer
// written first). A value a subcommand's flag cannot parse is one line,
// not the command's help.
func TestContradictionsRefused(t *testing.T) {
	unsetTaskIndex := func() {
		for _, v := range []string{"SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"} {
			t.Setenv(v, "")
			os.Unsetenv(v)
		}
	}
	unsetTaskIndex()
	cfg, out := experimentFile(t, model(t), "")
	wantRefused(t, runCLI(t, "experiment", "--config", cfg, "--report-only", "--dry-run"), []string{out}, "--report-only", "--dry-run", "contradict")

	t.Setenv("SLURM_ARRAY_TASK_ID", "1")
	wantRefused(t, runCLI(t, "experiment", "--config", cfg, "--dry-run"), []string{out}, "$SLURM_ARRAY_TASK_ID=1", "--shards is not")
	results := filepath.Join(t.TempDir(), "audit")
	r := runCLI(t, "score", "--model", model(t), "--forget", "testdata/demo/forget_nonIID.txt", "--gather", "--results", results)
	if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); r.code != exitError || len(lines) != 2 ||
		!strings.Contains(lines[0], "warning: $SLURM_ARRAY_TASK_ID=1 is set and --shards is not") {
		t.Errorf("score in an array without --shards: exit %d, stderr %q; want the one-line warning, then the run (here: nothing to gather)", r.code, r.stderr)
	}
	unsetTaskIndex()

	other := filepath.Join(t.TempDir(), "other")
	wantRefused(t, runCLI(t, "score", "--model", model(t), "--forget", "testdata/demo/forget_nonIID.txt", "--results", results, "--results", other),
		[]string{results, other}, "--results is given twice", results, other)

	dir := t.TempDir()
	fifo, big := filepath.Join(dir, "fifo.yaml"), filepath.Join(dir, "big.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if f, err := os.Create(big); err != nil {
		t.Fatal(err)
	} else {
		f.Truncate(2 << 20)
		f.Close()
	}
	wantRefused(t, runCLI(t, "--config", fifo), nil, "--config", fifo, "FIFO")
	wantRefused(t, runCLI(t, "--config", big), nil, "--config", big, "more than the 1048576")

	r = runCLI(t, "score", "--k", "1.5")
	wantRefused(t, r, nil, `invalid value "1.5" for flag -k`)
	if r.stdout != "" {
		t.Errorf("a bad value printed the help: %q", r.stdout)
	}

	// A link in RESULTS.md's place is refused, not replaced.
	cfg, out = experimentFile(t, model(t), "")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	rec, err := json.Marshal(experiment.Record{Schema: experiment.RecordSchema, Key: "0123456789abcdef", Kind: "run", ForgetSet: "outside",
		Name: "SSD", Accuracy: map[string]float64{"forget": 0.5}, Delta: map[string]float64{}, Seconds: 1, OracleSeconds: 100})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "results.jsonl"), append(rec, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	target := writeFile(t, "elsewhere.md", []byte("mine\n"))
	link := filepath.Join(out, "RESULTS.md")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, runCLI(t, "experiment", "--config", cfg, "--report-only"), nil, link, "symbolic link")
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link in out/ was replaced: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "mine\n" {
		t.Errorf("the link's target changed: %q", b)
	}

	// A sidecar refused before the forget set's ids file is written.
	cfg, out = experimentFile(t, model(t), "")
	oracle := filepath.Join(filepath.Dir(cfg), "oracle.onnx")
	d := strings.Repeat("a", 64)
	if err := errors.Join(os.WriteFile(oracle, []byte("x"), 0o644), os.WriteFile(strings.TrimSuffix(oracle, ".onnx")+".json",
		[]byte(`{"train_s": 1e-300, "onnx_sha256": "`+d+`", "data_sha256": "`+d+`"}`), 0o644)); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, runCLI(t, "experiment", "--config", cfg), []string{filepath.Join(out, "runs", "forget-outside-seed0.txt"), filepath.Join(out, "results.jsonl")},
		"oracle.json", "train_s 1e-300")
}
