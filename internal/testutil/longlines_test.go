package testutil

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// maxLineChars is the longest a line of non-test Go may be, in characters
// (issue 66).
const maxLineChars = 120

// longLinesLeft is how many lines of non-test, non-generated Go may be
// longer than maxLineChars: none, since every package was wrapped.
const longLinesLeft = 0

// TestLongLines counts the lines of the repository's non-test Go longer
// than maxLineChars (in characters, not bytes), leaving out generated files
// (a "Code generated ... DO NOT EDIT." comment, ast.IsGenerated), and fails
// when there are more than longLinesLeft, naming each as file:line.
func TestLongLines(t *testing.T) {
	root := RepoRoot(t)
	fset := token.NewFileSet()
	var long []string
	files := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			skip := []string{"testdata", "bin", "out"}
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || slices.Contains(skip, d.Name())) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		files++
		for i, line := range strings.Split(string(src), "\n") {
			if n := utf8.RuneCountInString(line); n > maxLineChars {
				long = append(long, fmt.Sprintf("%s:%d (%d characters)", rel, i+1, n))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatal("no Go files found under " + root)
	}
	if len(long) > longLinesLeft {
		t.Errorf("%d lines of non-test Go are longer than %d characters, more than the %d left to wrap; wrap the new "+
			"ones (gofmt-clean, long strings split with +):\n%s", len(long), maxLineChars, longLinesLeft,
			strings.Join(long, "\n"))
	}
	if len(long) < longLinesLeft {
		t.Logf("%d long lines left, fewer than longLinesLeft (%d): lower it", len(long), longLinesLeft)
	}
}
