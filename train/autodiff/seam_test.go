package autodiff

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoLoweringImported: the package reaches lowerings through the
// lowering.Lowering interface only; none of its non-test files imports a
// lowering's package (train/lowering/...), so the gradient rules cannot
// depend on how a device runs a convolution.
func TestNoLoweringImported(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var checked int
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(path, "/train/lowering/") {
				t.Errorf("%s imports %s: a lowering is given through Spec.Lowering", name, path)
			}
		}
		checked++
	}
	if checked < 10 {
		t.Fatalf("checked %d files; the glob missed the package", checked)
	}
}
