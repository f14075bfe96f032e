//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLibraryPathWorkingDirectory: an empty or relative LD_LIBRARY_PATH
// entry is the working directory to the dynamic loader, which reads the
// variable once at start and takes ONNX Runtime's dependencies through it
// (issue 64, item 3: `cd DIR; LD_LIBRARY_PATH=/usr/local/lib: unlearn
// version` ran DIR's librt.so.1). The command re-executes itself without
// such entries, says so in one line, and the planted librt.so.1, whose
// constructor would write a marker, never runs.
func TestLibraryPathWorkingDirectory(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "marker")
	src := filepath.Join(dir, "rt.c")
	code := `#include <stdio.h>
__attribute__((constructor)) static void mark(void) {
	FILE *f = fopen("` + marker + `", "a");
	if (f) { fputs("planted librt ran\n", f); fclose(f); }
}
`
	if err := os.WriteFile(src, []byte(code), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "lib"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{filepath.Join(dir, "librt.so.1"), filepath.Join(dir, "lib", "librt.so.1")} {
		if b, err := exec.Command("gcc", "-shared", "-fPIC", "-o", out, src).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, b)
		}
	}
	for _, ld := range []string{"/nonexistent:", ":/nonexistent", "lib", "/nonexistent::lib"} {
		cmd := exec.Command(binPath, "version")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+ld)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("LD_LIBRARY_PATH=%s: %v\n%s", ld, err, stderr.String())
		}
		if b, _ := os.ReadFile(marker); len(b) > 0 {
			t.Fatalf("LD_LIBRARY_PATH=%s: %s", ld, b)
		}
		if !strings.Contains(stdout.String(), "onnxruntime 1.") {
			t.Errorf("LD_LIBRARY_PATH=%s: the runtime did not load:\n%s%s", ld, stdout.String(), stderr.String())
		}
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if len(lines) != 1 || !strings.Contains(lines[0], "LD_LIBRARY_PATH: leaving out") ||
			!strings.Contains(lines[0], "working directory") {
			t.Errorf("LD_LIBRARY_PATH=%s: want one line saying what was left out, got %q", ld, stderr.String())
		}
	}
	// A clean value is left alone, with no line.
	cmd := exec.Command(binPath, "version")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH=/nonexistent")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "LD_LIBRARY_PATH") {
		t.Errorf("LD_LIBRARY_PATH=/nonexistent: %v\n%s", err, out)
	}
}
