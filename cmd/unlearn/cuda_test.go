package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxrt"
)

// --device cuda on a machine without CUDA (issue 43's acceptance): exit 1,
// one line naming every missing library, nothing on stdout, no output file.
// The GPU build of `make ort-gpu` is used when present; otherwise stand-ins,
// since nothing is loaded before the CUDA libraries are found.
func TestDeviceCUDAMissingLibraries(t *testing.T) {
	root := testutil.RepoRoot(t)
	lib := filepath.Join(root, onnxrt.GPUDir, onnxrt.GPULibName)
	if _, err := os.Stat(lib); err != nil {
		dir := filepath.Join(t.TempDir(), onnxrt.GPUDir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		lib = filepath.Join(dir, onnxrt.GPULibName)
		for _, f := range []string{onnxrt.GPULibName, "libonnxruntime_providers_shared.so", "libonnxruntime_providers_cuda.so"} {
			if err := os.WriteFile(filepath.Join(dir, f), []byte("\x7fELF stand-in"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := onnxrt.CheckCUDA(filepath.Dir(lib)); err == nil {
		t.Skip("CUDA and cuDNN are installed here: the missing-libraries error cannot be shown")
	}
	// eval and compare only evaluate: cuda is not refused for training.
	out := filepath.Join(t.TempDir(), "metrics.json")
	for _, args := range [][]string{
		{"eval", "--model", model(t), "--data", "testdata/fashion", "--device", "cuda", "--json", out},
		{"compare", "--oracle", model(t), "--forget", "testdata/demo/forget_nonIID.txt", "--device", "cuda",
			"--json", out, model(t)},
	} {
		cmd := exec.Command(binPath, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "ONNXRUNTIME_GPU_LIB="+lib)
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%s: want a failure, got %v; stderr %s", args[0], err, se.String())
		}
		r := result{code: ee.ExitCode(), stdout: so.String(), stderr: se.String()}
		wantError(t, r, exitError, "--device cuda: libcuda.so.1 (NVIDIA driver), libcudart.so.13, libcublasLt.so.13, libcublas.so.13, libcurand.so.10 and libcudnn.so.9 not found",
			"the provider's folder "+filepath.Dir(lib), "CUDA 13", "cuDNN 9", "--device cpu")
		if r.stdout != "" {
			t.Errorf("%s: stdout not empty: %q", args[0], r.stdout)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: %s was written", args[0], out)
		}
		t.Log(strings.TrimSpace(r.stderr))
	}
}

// Every command that trains refuses --device cuda before any work (exit 2,
// no output): training steps crash inside the GPU build's CUDA provider
// (train.ErrCUDATraining); eval is not refused for it (above).
func TestDeviceCUDATrainingRefused(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "u.onnx")
	for _, args := range [][]string{
		{"--model", model(t), "--forget", "testdata/demo/forget_nonIID.txt", "--out", out},
		{"train", "--model", model(t), "--out", out},
		{"experiment", "--config", "regimes/resnet18.yaml"},
	} {
		cmd := exec.Command(binPath, append(args, "--device", "cuda")...)
		cmd.Dir = testutil.RepoRoot(t)
		cmd.Env = append(os.Environ(), "UNLEARN_CUDA_TRAINING=")
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%v: want a refusal, got %v", args, err)
		}
		r := result{code: ee.ExitCode(), stdout: so.String(), stderr: se.String()}
		wantError(t, r, exitUsage, "--device cuda: training steps crash", "--device cpu", "unlearn eval --device cuda")
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%v wrote %s", args, out)
		}
	}
}
