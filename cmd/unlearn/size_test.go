package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCommandStaysThin: cmd/unlearn maps flags onto library jobs, prints
// and maps errors to exit codes; the work lives in the library (docs/DESIGN.md
// "Architecture"). Its non-test Go, subfolders included, is held to
// commandLines lines, so that logic that creeps back in is noticed, and no
// line is over 120 characters.
func TestCommandStaysThin(t *testing.T) {
	const commandLines = 2188
	lines := 0
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			lines++
			if n := utf8.RuneCountInString(line); n > 120 {
				t.Errorf("%s:%d: %d characters; keep lines to 120", p, i+1, n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if lines == 0 || lines > commandLines {
		t.Errorf("cmd/unlearn has %d lines of non-test Go, subfolders included; the bound is %d (move logic into "+
			"the library)", lines, commandLines)
	}
}

// TestFlagsReadThroughOptions: a command's flags write into its options
// struct (options.go) and nothing reads one by name, so a flag's meaning
// lives in one place. The checks every command's flags get before it runs
// go over them by name by design, each in one file: the output paths
// against the inputs (outputs.go) and the numbers and shards
// (flagchecks.go).
func TestFlagsReadThroughOptions(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	byName := regexp.MustCompile(`\bc\.(String|Int|Int64|Uint64|Float64|Bool|StringSlice|Value)\("`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "outputs.go" || f == "flagchecks.go" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if byName.MatchString(line) {
				t.Errorf("%s:%d reads a flag by name: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}
