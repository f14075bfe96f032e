package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandStaysThin: cmd/unlearn maps flags onto library jobs, prints
// and maps errors to exit codes; the work lives in the library (docs/DESIGN.md
// "Architecture"). Its non-test Go is held to 1,500 lines so that logic that
// creeps back in is noticed.
func TestCommandStaysThin(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += strings.Count(string(b), "\n")
	}
	if lines == 0 || lines > 1500 {
		t.Errorf("cmd/unlearn has %d lines of non-test Go; the bound is 1,500 (move logic into the library)", lines)
	}
}
