package autodiff

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/graph/ops"
)

// update rewrites what the tests compare with: docs/GRADIENTS.md's op
// table (go generate runs it) and testdata/graph_hashes.txt.
var update = flag.Bool("update", false, "rewrite docs/GRADIENTS.md's op table and testdata/graph_hashes.txt")

// Update is update for the external tests.
var Update = update

const (
	docTableStart = "<!-- generated from graph/ops/table.go and train/autodiff/optable.go by go generate " +
		"./train/autodiff (TestGradientsOpTable -update) -->\n"
	docTableEnd = "<!-- end of the generated op table -->\n"
)

// gradientsOpTable renders docs/GRADIENTS.md's op table from graph/ops's
// table and the gradient rules the tool ships.
func gradientsOpTable() string {
	names := ops.Shipped()
	var b strings.Builder
	b.WriteString(docTableStart)
	b.WriteString("| op | differentiable inputs | gradient | shape rule |\n|---|---|---|---|\n")
	var pass, refused []string
	for _, op := range names {
		o, _ := ops.Lookup(op)
		g, hasGrad := builtinGrads[op]
		switch {
		case len(o.Diff) == 0:
			pass = append(pass, op)
			continue
		case !hasGrad:
			refused = append(refused, op)
			continue
		}
		in := "all"
		if !slices.Equal(o.Diff, []int{ops.AllInputs}) {
			var is []string
			for _, i := range o.Diff {
				is = append(is, fmt.Sprint(i))
			}
			in = strings.Join(is, ", ")
		}
		if o.FloatResultOnly {
			in += " (to a float type)"
		}
		shape := "Default"
		if o.Shape != "" {
			shape = o.Shape
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", op, in, strings.ReplaceAll(g.doc, "|", `\|`), shape)
	}
	fmt.Fprintf(&b, "\nAccepted on the path, passing no gradient (%d): %s.\n", len(pass), strings.Join(pass, ", "))
	fmt.Fprintf(&b, "\nDifferentiable with no rule yet, refused on the path from the parameters to the loss (%d): %s.\n",
		len(refused), strings.Join(refused, ", "))
	b.WriteString(docTableEnd)
	return b.String()
}

// TestGradientsOpTable keeps docs/GRADIENTS.md's op table equal to the
// tables it is generated from (-update, which go generate passes, rewrites
// it).
func TestGradientsOpTable(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "GRADIENTS.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, docTableStart), strings.Index(doc, docTableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no generated op table (between %q and %q)", path, docTableStart, docTableEnd)
	}
	want := doc[:i] + gradientsOpTable() + doc[j+len(docTableEnd):]
	if *update && want != doc {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		doc = want
	}
	if doc != want {
		t.Errorf("%s: the op table differs from graph/ops's and the gradient rules; run go generate ./train/autodiff", path)
	}
}
