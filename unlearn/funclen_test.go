package unlearn

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the length (lines from "func" to the closing brace) that
// a function of Unlearn's stages may have (issue 66): each stage reads on
// one screen.
const maxFuncLines = 80

// funcLenChecked are the package's files whose functions keep to
// maxFuncLines: Unlearn and its stages.
var funcLenChecked = []string{"pipeline.go", "stages.go"}

// TestStagesShort fails on a function over maxFuncLines in the files of
// funcLenChecked, read with go/ast from the package's non-test files.
func TestStagesShort(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked := false
		for _, c := range funcLenChecked {
			checked = checked || c == name
		}
		if !checked {
			continue
		}
		seen[name] = true
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
			if n := end.Line - start.Line + 1; n > maxFuncLines {
				t.Errorf("%s:%d: %s is %d lines, more than %d: split it", name, start.Line, fd.Name.Name, n,
					maxFuncLines)
			}
		}
	}
	for _, c := range funcLenChecked {
		if !seen[c] {
			t.Errorf("%s: not among the package's non-test files; update funcLenChecked", c)
		}
	}
}
