package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/infer"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/onnxrt"
)

// TestExportRoundTrip: testdata/roundtrip/make_roundtrip.py loaded the
// export of unlearned_del.onnx into PyTorch's ResNetSmall and stored its
// logits on the first 64 test images. The export here must be those very
// bytes, and ONNX Runtime's logits must agree with PyTorch's to
// 1e-5·max(1, |logit|).
func TestExportRoundTrip(t *testing.T) {
	testutil.RequireORT(t)
	root := testutil.RepoRoot(t)
	dir := filepath.Join(root, "testdata", "roundtrip")
	src := filepath.Join(dir, "unlearned_del.onnx")
	out := filepath.Join(t.TempDir(), "u.safetensors")
	r := runCLI(t, "export", "--model", src, "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var expect struct {
		SHA256 string `json:"safetensors_sha256"`
		Images int    `json:"images"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &expect); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	sum := sha256.Sum256(got)
	if hex.EncodeToString(sum[:]) != expect.SHA256 {
		t.Fatalf("export differs from the file PyTorch loaded (sha256 %x, want %s)", sum, expect.SHA256)
	}

	ref, err := data.ReadNPY(filepath.Join(dir, "torch_logits.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if err := onnxrt.Setup(onnxrt.Options{}); err != nil {
		t.Fatal(err)
	}
	m, err := onnxio.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := data.Open(filepath.Join(root, "testdata", "fashion"), data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := infer.NewClassifier(m, onnxrt.Options{Threads: 2}, 64)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	logits, err := cl.Logits(ds.Test, data.Range(expect.Images), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(logits) != len(ref.F32) || len(ref.F32) != expect.Images*10 {
		t.Fatalf("%d logits, reference %d", len(logits), len(ref.F32))
	}
	worst := 0.0
	for i, v := range logits {
		d := math.Abs(float64(v)-float64(ref.F32[i])) / math.Max(1, math.Abs(float64(ref.F32[i])))
		worst = math.Max(worst, d)
	}
	if worst > 1e-5 {
		t.Fatalf("ONNX Runtime vs PyTorch logits: worst scaled difference %.3g > 1e-5", worst)
	}
	t.Logf("worst scaled difference %.3g over %d logits", worst, len(logits))
}

func TestExportBadInput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "w.safetensors")
	wantError(t, runCLI(t, "export", "--model", filepath.Join(testutil.RepoRoot(t), "testdata", "resnet_small_fused.onnx"), "--out", out),
		exitError, "resnet_small_fused.onnx", "exporter-made names", "TrainingMode.PRESERVE")
	wantError(t, runCLI(t, "export", "--model", model(t), "--out", out, "--format", "pickle"), exitUsage, "--format", "pickle")
	wantError(t, runCLI(t, "export", "--model", model(t), "--out", model(t)), exitUsage, "--out", "input")
	wantError(t, runCLI(t, "export", "--model", "README.md", "--out", out), exitError, "README.md")
	if _, err := os.Stat(out); err == nil {
		t.Fatal("output written despite errors")
	}
	// --all writes the fused model's tensors under the exporter's names.
	r := runCLI(t, "export", "--model", filepath.Join(testutil.RepoRoot(t), "testdata", "resnet_small_fused.onnx"), "--out", out, "--all")
	if r.code != 0 {
		t.Fatalf("--all: exit %d: %s", r.code, r.stderr)
	}
}

// TestOutputModeAndStaleTemporaries: an output follows the umask (0600
// under umask 077, not a fixed 0644), and writing it removes the temporary
// file a killed run left beside it (its PID is gone) while keeping one of a
// live process and every other file.
func TestOutputModeAndStaleTemporaries(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "U.safetensors")
	done := exec.Command("true")
	if err := done.Run(); err != nil {
		t.Skipf("running true: %v", err)
	}
	dead := done.Process.Pid
	stale := filepath.Join(dir, fmt.Sprintf(".U.safetensors.tmp-%d-abc", dead))
	live := filepath.Join(dir, fmt.Sprintf(".U.safetensors.tmp-%d-abc", os.Getpid()))
	other := filepath.Join(dir, fmt.Sprintf(".V.safetensors.tmp-%d-abc", dead))
	for _, p := range []string{stale, live, other} {
		if err := os.WriteFile(p, []byte("half"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := syscall.Umask(0o077)
	r := runCLI(t, "export", "--model", model(t), "--out", out)
	syscall.Umask(old)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	st, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v under umask 077; want -rw-------", st.Mode().Perm())
	}
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("the killed run's %s is still there", filepath.Base(stale))
	}
	for _, p := range []string{live, other} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", filepath.Base(p), err)
		}
	}
}
