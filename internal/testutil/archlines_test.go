package testutil

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// docs/ARCHITECTURE.md gives each package's size as "**`PKG`** (N lines":
// the non-test Go files in the package's folder. A stated size more than
// 15 % (or 50 lines) off the code's is a document that no longer matches.
func TestArchitectureLineCounts(t *testing.T) {
	root := RepoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("\\*\\*`([a-z0-9/]+)`\\*\\* \\(([0-9,]+) lines")
	found := 0
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		stated, err := strconv.Atoi(strings.ReplaceAll(m[2], ",", ""))
		if err != nil {
			t.Fatal(err)
		}
		got := goLines(t, filepath.Join(root, m[1]))
		found++
		if d := abs(got - stated); d > 50 && float64(d) > 0.15*float64(got) {
			t.Errorf("docs/ARCHITECTURE.md states %s at %d lines; its non-test Go has %d", m[1], stated, got)
		}
	}
	if found < 10 {
		t.Fatalf("found %d package sizes in docs/ARCHITECTURE.md; want the paragraphs' \"(N lines\"", found)
	}
}

// goLines counts the lines of the non-test Go files directly in dir.
func goLines(t *testing.T, dir string) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: no Go files (%v)", dir, err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			n++
		}
		fh.Close()
	}
	return n
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
