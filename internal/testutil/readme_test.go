package testutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README is for users and is held under 20 KB (20,480 bytes): what
// does not fit belongs in docs/. Its first lines give the two commands a
// fresh machine runs, `make demo` and `make test`.
func TestReadmeSize(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) >= 20480 {
		t.Errorf("README.md is %d bytes; it must stay under 20,480 (move detail to docs/)", len(b))
	}
	head := string(b)
	if i := strings.Index(head, "\n## "); i > 0 {
		head = head[:i]
	}
	for _, cmd := range []string{"make demo", "make test"} {
		if !strings.Contains(head, cmd) {
			t.Errorf("README.md's opening (before its first ## heading) does not give %q", cmd)
		}
	}
}
