package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// No line of the package's non-test Go is over 120 characters: long
// markup lives in the embedded templates (*.html.tmpl), long text is
// wrapped.
func TestLineLength(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files: %v", err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if n := utf8.RuneCountInString(line); n > 120 {
				t.Errorf("%s:%d: %d characters; keep lines to 120", f, i+1, n)
			}
		}
	}
}
