package onnxrt

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/cmd/unlearn/flagtext"
)

func TestResolveLibraryFlagMissing(t *testing.T) {
	_, _, err := ResolveLibrary(filepath.Join(t.TempDir(), "nope.so"))
	if err == nil || !errors.Is(err, ErrLibrary) {
		t.Fatalf("want ErrLibrary, got %v", err)
	}
	for _, want := range []string{"--ort-lib", "nope.so", "make ort"} {
		if !strings.Contains(flagtext.Render(err), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestResolveLibraryEnvOrder(t *testing.T) {
	dir := t.TempDir()
	envLib := filepath.Join(dir, "env.so")
	flagLib := filepath.Join(dir, "flag.so")
	for _, p := range []string{envLib, flagLib} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("ONNXRUNTIME_LIB", envLib)
	p, src, err := ResolveLibrary(flagLib)
	if err != nil || p != flagLib || src != "flag" {
		t.Fatalf("flag must win: %q %q %v", p, src, err)
	}
	p, src, err = ResolveLibrary("")
	if err != nil || p != envLib || src != "env" {
		t.Fatalf("env must come second: %q %q %v", p, src, err)
	}
	t.Setenv("ONNXRUNTIME_LIB", filepath.Join(dir, "missing.so"))
	if _, _, err := ResolveLibrary(""); err == nil || !strings.Contains(err.Error(), "ONNXRUNTIME_LIB") {
		t.Fatalf("missing env library must name the variable, got %v", err)
	}
}

func TestCheckELFRejectsText(t *testing.T) {
	p := filepath.Join(t.TempDir(), "libonnxruntime.so.1")
	if err := os.WriteFile(p, []byte("not a library"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := checkELF(p, cpuLib)
	if err == nil || !strings.Contains(err.Error(), "not a shared library") || !strings.Contains(err.Error(), "make ort") {
		t.Fatalf("got %v", err)
	}
}

func TestCheckDevice(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, LibName)
	if err := CheckDevice("cpu", lib); err != nil {
		t.Fatal(err)
	}
	err := CheckDevice("cuda", lib)
	if err == nil {
		t.Fatal("cuda without provider libraries must fail")
	}
	for _, want := range []string{"libonnxruntime_providers_shared.so", "libonnxruntime_providers_cuda.so", "CUDA 13", "cuDNN 9", "make ort-gpu", "--device cpu"} {
		if !strings.Contains(flagtext.Render(err), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if err := CheckDevice("tpu", lib); err == nil || !strings.Contains(err.Error(), "tpu") {
		t.Fatalf("unknown device: %v", err)
	}
}

// repoLib returns the repository's .ort/libonnxruntime.so.1 (what `make ort`
// fills), found from this source file, when ONNXRUNTIME_LIB is unset and the
// file exists; "" otherwise. The tool no longer searches the working
// directory, and the test binary does not sit in bin/. (This package cannot
// use internal/testutil, which imports it.)
func repoLib() string {
	if os.Getenv("ONNXRUNTIME_LIB") != "" {
		return ""
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	p := filepath.Join(filepath.Dir(file), "..", ".ort", LibName)
	if !fileExists(p) {
		return ""
	}
	return p
}

func TestSetupLoadsPinnedVersion(t *testing.T) {
	lib := repoLib()
	if _, _, err := ResolveLibrary(lib); err != nil {
		if os.Getenv("UNLEARN_REQUIRE_ORT") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	if err := Setup(Options{LibPath: lib}); err != nil {
		t.Fatal(err)
	}
	if v := Version(); !strings.HasPrefix(v, WantVersion+".") {
		t.Fatalf("version %q, want %s.x", v, WantVersion)
	}
}
