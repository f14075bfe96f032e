package main

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
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
