package testutil

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var (
	// flagText is a flag spelled out ("--budget", "--%s") or a flag's
	// prefix to be joined to a name ("--" at the end of a literal);
	// "|---" (a Markdown rule) is neither.
	flagText = regexp.MustCompile(`(^|[^-])--([A-Za-z%]|$)`)
	// template is a setting named as {name}, which a renderer would turn
	// into a flag; "{{end}}" (text/template) is none.
	template = regexp.MustCompile(`(^|[^{])\{[a-z][a-z0-9]*(-[a-z0-9]+)*\}($|[^}])`)
)

// flagTextAllowed are the library's flag-like literals that are no flag of
// this tool's, by file and the text they hold.
var flagTextAllowed = map[string][]string{
	// The default rows' cache-key encoding: the bytes the keys were first
	// written in, kept so that existing results.jsonl caches match
	// (runner.defaultKey, pinned by TestGridKeysPinned and
	// TestDefaultKeyBytes); no one reads it.
	"experiment/runner/run.go": {"--"},
	// Slurm's sbatch option, in the words that say how to run shards.
	"internal/taskindex/taskindex.go": {"--array="},
	// The forget-set file's placeholder for the seed, no setting.
	"experiment/config.go": {"{seed}"},
	// Chromium's own switches, for the headless browser that the report's
	// layout tests start (RenderPage); test support, no flag of this tool's.
	"internal/testutil/chromium.go": {"--"},
}

// TestLibraryBuildsNoFlagText (issue 66): no package but the command's
// spells a flag. The library names a setting as a value
// (internal/setting: Ref, Cmd, in a Message, Note or *Error), so that the
// command words it as a flag (cmd/unlearn/flagtext), the HTML report in
// words and an experiment file as its key. It reads every string literal of
// the non-test Go outside cmd/ and the bench commands (package main, whose
// flags are their own) and fails on a flag spelled out ("--budget",
// "--%s"), a literal ending in "--" (joined to a name), and a {name}
// template.
func TestLibraryBuildsNoFlagText(t *testing.T) {
	root := RepoRoot(t)
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			base := d.Name()
			skip := []string{"testdata", "regimes", "bin", "out", "cmd"}
			if rel != "." && (strings.HasPrefix(base, ".") || slices.Contains(skip, base)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			v, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatalf("%s: %v", fset.Position(lit.Pos()), err)
			}
			for _, re := range []*regexp.Regexp{flagText, template} {
				m := re.FindString(v)
				if m == "" || slices.ContainsFunc(flagTextAllowed[rel], func(a string) bool { return strings.Contains(v, a) }) {
					continue
				}
				t.Errorf("%s: %q spells a flag in a library string; name the setting as a value "+
					"(setting.Of, setting.Use in setting.Msgf, Notef or Textf), which the command words as a flag",
					fset.Position(lit.Pos()), strings.TrimSpace(m))
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
