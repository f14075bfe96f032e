package testutil

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/graph/ops"
)

// opTypeLiteralsAllowed are the packages that may compare op types with
// literals, and why.
var opTypeLiteralsAllowed = map[string]string{
	// The op table itself.
	"graph/ops": "the registry",
	// The shape rules implement the ops' semantics: one rule serves a
	// family (Arith: Add, Sub, Mul, Div, Mod, Pow; Reduce: ArgMax, …;
	// Window: MaxPool's second output) and computes what each member does.
	"graph/shapes": "shape rules shared by op families",
}

// TestNoOpTypeLiterals (issue 66): no package outside graph/ops (and the
// shape rules, opTypeLiteralsAllowed) recognises an op by a string
// literal. Layers are found by their kind (ops.KindOf), the ops that
// patterns name by graph/ops's constants, so that a new op is known
// everywhere once graph/ops lists it. It reads the non-test, non-generated
// Go of the repository and fails on a comparison (==, !=, a switch case)
// of a string literal that names a listed op type with anything, or of any
// string literal with a value's OpType.
func TestNoOpTypeLiterals(t *testing.T) {
	root := RepoRoot(t)
	known := map[string]bool{}
	for _, op := range ops.Known() {
		known[op] = true
	}
	fset := token.NewFileSet()
	opLit := func(e ast.Expr, withOpType bool) (string, bool) {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return "", false
		}
		v, _ := strconv.Unquote(lit.Value)
		return v, v != "" && (known[v] || withOpType)
	}
	isOpType := func(e ast.Expr) bool {
		s, ok := e.(*ast.SelectorExpr)
		return ok && s.Sel.Name == "OpType"
	}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			base := d.Name()
			skip := []string{"testdata", "regimes", "bin", "out"}
			if rel != "." && (strings.HasPrefix(base, ".") || slices.Contains(skip, base)) {
				return filepath.SkipDir
			}
			if _, ok := opTypeLiteralsAllowed[rel]; ok {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		report := func(n ast.Node, v string) {
			t.Errorf("%s: compares with op type %q; ask graph/ops (ops.KindOf, ops.Lookup) or use its constant",
				fset.Position(n.Pos()), v)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if n.Op != token.EQL && n.Op != token.NEQ {
					return true
				}
				if v, ok := opLit(n.X, isOpType(n.Y)); ok {
					report(n, v)
				}
				if v, ok := opLit(n.Y, isOpType(n.X)); ok {
					report(n, v)
				}
			case *ast.SwitchStmt:
				for _, s := range n.Body.List {
					for _, e := range s.(*ast.CaseClause).List {
						if v, ok := opLit(e, n.Tag != nil && isOpType(n.Tag)); ok {
							report(e, v)
						}
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
