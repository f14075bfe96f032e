package testutil

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/unlearn-tool/unlearn/"

// layerTable reads the table "The layers at a glance" of
// docs/ARCHITECTURE.md: the packages of each row, bottom row first, and
// the imports a row's note allows from a later row ("imports `X`, a row
// below").
func layerTable(t *testing.T, root string) (layer map[string]int, allowed map[string][]string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "## The layers at a glance")
	if !ok {
		t.Fatal(`docs/ARCHITECTURE.md has no "## The layers at a glance"`)
	}
	layer, allowed = map[string]int{}, map[string][]string{}
	tick := regexp.MustCompile("`([^`]+)`")
	row := 0
	for _, line := range strings.Split(after, "\n") {
		if strings.HasPrefix(line, "## ") {
			break
		}
		cells := strings.Split(line, "|")
		if len(cells) != 4 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") || strings.TrimSpace(cells[1]) == "layer" {
			continue
		}
		// A package is a backticked name outside parentheses; inside
		// them, "(← …)" lists its imports and "(imports `X`, a row
		// below …)" an allowed exception.
		var outside, cur strings.Builder
		depth := 0
		for _, r := range cells[2] {
			switch {
			case r == '(':
				depth++
			case r == ')':
				depth--
				// The exception belongs to the package named just before
				// the parenthesis.
				if in := cur.String(); depth == 0 && strings.Contains(in, "a row below") {
					pkgs := tick.FindAllStringSubmatch(outside.String(), -1)
					owner := pkgs[len(pkgs)-1][1]
					for _, m := range tick.FindAllStringSubmatch(in, -1) {
						allowed[owner] = append(allowed[owner], m[1])
					}
				}
				if depth == 0 {
					cur.Reset()
				}
			case depth > 0:
				cur.WriteRune(r)
			default:
				outside.WriteRune(r)
			}
		}
		for _, p := range tick.FindAllStringSubmatch(outside.String(), -1) {
			layer[p[1]] = row
		}
		row++
	}
	if row < 5 {
		t.Fatalf("docs/ARCHITECTURE.md: read %d layer rows", row)
	}
	return layer, allowed
}

// TestLayers (issue 44): every package of the module is placed in
// docs/ARCHITECTURE.md's layer table, and its non-test files import only
// packages of its own row or earlier rows, or an exception the table
// states. A new package, or an import up the layers, fails here until the
// document says where it belongs.
func TestLayers(t *testing.T) {
	root := RepoRoot(t)
	layer, allowed := layerTable(t, root)
	fset := token.NewFileSet()
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if base := d.Name(); rel != "." && (strings.HasPrefix(base, ".") || base == "testdata" || base == "regimes" || base == "bin" || base == "out") {
				return filepath.SkipDir
			}
			return nil
		}
		pkg := filepath.ToSlash(filepath.Dir(rel))
		if strings.HasSuffix(path, "_test.go") {
			seen[pkg] = true // a package of tests only (deploy) is placed too
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" && !slices.Contains([]string{"cmd/unlearn", "bench/ortprof", "bench/ortrun", "bench/trainstep"}, pkg) {
			return nil // a tool of one package's tests (onnxio/internal/onnxgoread)
		}
		seen[pkg] = true
		from, ok := layer[pkg]
		if !ok {
			t.Errorf("%s: package %s is not in docs/ARCHITECTURE.md's layer table", rel, pkg)
			return nil
		}
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			dep, ok := strings.CutPrefix(p, module)
			if !ok {
				continue
			}
			to, known := layer[dep]
			if known && (to <= from || slices.Contains(allowed[pkg], dep)) {
				continue
			}
			t.Errorf("%s imports %s, which docs/ARCHITECTURE.md places in a later layer (%d above %d): move the code, or the document", rel, dep, to, from)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := range layer {
		if !seen[p] {
			t.Errorf("docs/ARCHITECTURE.md lists %s, which has no Go file", p)
		}
	}
}
