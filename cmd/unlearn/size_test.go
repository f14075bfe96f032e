package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCommandStaysThin: cmd/unlearn maps flags onto library jobs, prints
// and maps errors to exit codes; the work lives in the library (docs/DESIGN.md
// "Architecture"). Its non-test Go is held to 2,545 units of 100 characters
// (a line of up to 100 characters is one unit, a longer one more), so that
// logic that creeps back in is noticed and long lines do not hide it, and
// no line is over 120 characters. (1,800 held before each command's flags
// were bound to an options struct, whose fields and Destination bindings
// added about 260 units of declarations and no logic, and before the
// command line's plumbing, 500 units, moved in from internal/clilog.)
func TestCommandStaysThin(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	units := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			n := utf8.RuneCountInString(line)
			units += max(1, (n+99)/100)
			if n > 120 {
				t.Errorf("%s:%d: %d characters; keep lines to 120", f, i+1, n)
			}
		}
	}
	if units == 0 || units > 2545 {
		t.Errorf("cmd/unlearn has %d units of 100 characters of non-test Go; the bound is 2,545 (move logic into the library)", units)
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
