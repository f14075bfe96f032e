package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/internal/testutil"
)

// TestDefaultOutputNotReplaced (issue 64): a second run without --out
// does not replace the first one's <model>-unlearned.onnx (exit 2, the
// file as it was) unless --overwrite; an --out the user names is replaced,
// as `go build -o` does, so that scripts and retried Jobs keep working.
func TestDefaultOutputNotReplaced(t *testing.T) {
	if testing.Short() {
		t.Skip("unlearns four times")
	}
	root := testutil.RepoRoot(t)
	ds, err := data.Open(filepath.Join(root, "testdata", "fashion"), data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// 400 training examples keep the runs short.
	npz := testutil.FloatNPZ(t, ds, 400, func(v float32) float32 { return v })
	b, err := os.ReadFile(model(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	m := filepath.Join(dir, "m.onnx")
	if err := os.WriteFile(m, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ids := writeFile(t, "ids.txt", []byte("0\n1\n2\n3\n"))
	args := []string{"--model", m, "--data", npz, "--forget", ids, "--method", "finetune", "--epochs", "1",
		"--no-mia", "--threads", "2", "--retrain-epochs", "0", "--quiet"}
	def := filepath.Join(dir, "m-unlearned.onnx")
	inode := func(p string) uint64 {
		t.Helper()
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return st.Sys().(*syscall.Stat_t).Ino
	}
	if r := runCLI(t, args...); r.code != 0 {
		t.Fatalf("first run: exit %d: %s", r.code, r.stderr)
	}
	first := inode(def)
	wantError(t, runCLI(t, args...), exitUsage, def+" exists", "never replaced silently", "--overwrite", "--out")
	if inode(def) != first {
		t.Errorf("the refused run replaced %s", def)
	}
	if r := runCLI(t, append(args, "--overwrite")...); r.code != 0 || inode(def) == first {
		t.Fatalf("--overwrite: exit %d, replaced %v: %s", r.code, inode(def) != first, r.stderr)
	}
	named := filepath.Join(dir, "named.onnx")
	for i := range 2 {
		if r := runCLI(t, append(args, "--out", named)...); r.code != 0 {
			t.Fatalf("--out %s, run %d: exit %d: %s", named, i+1, r.code, r.stderr)
		}
	}
}
