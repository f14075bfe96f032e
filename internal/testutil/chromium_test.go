package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Without chromium on PATH, Chromium skips the test, but fails it under
// UNLEARN_REQUIRE_CHROMIUM=1 or CI: the test binary runs itself with a
// PATH that holds nothing.
func TestChromiumRequired(t *testing.T) {
	if os.Getenv("UNLEARN_CHROMIUM_PROBE") == "1" {
		Chromium(t)
		return
	}
	var env []string
	for _, e := range os.Environ() {
		k, _, _ := strings.Cut(e, "=")
		if k != "PATH" && k != "CI" && k != "UNLEARN_REQUIRE_CHROMIUM" {
			env = append(env, e)
		}
	}
	env = append(env, "PATH="+t.TempDir(), "UNLEARN_CHROMIUM_PROBE=1")
	for _, c := range []struct {
		env      string
		wantFail bool
		want     string
	}{
		{"", false, "SKIP: TestChromiumRequired"},
		{"UNLEARN_REQUIRE_CHROMIUM=1", true, "chromium required"},
		{"CI=true", true, "chromium required"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChromiumRequired$", "-test.v", "-test.count=1")
		cmd.Env = env
		if c.env != "" {
			cmd.Env = append(cmd.Env, c.env)
		}
		out, err := cmd.CombinedOutput()
		if failed := err != nil; failed != c.wantFail || !strings.Contains(string(out), c.want) {
			t.Errorf("with %q: error %v, want failure %v and %q in:\n%s", c.env, err, c.wantFail, c.want, out)
		}
	}
}

// RenderPage measures a page as laid out: a wide block overflows the
// viewport and two absolutely placed headings overlap, and
// CheckPageLayout's rules see both (recorded on a stub testing.TB).
func TestRenderPageGeometry(t *testing.T) {
	dir := t.TempDir()
	page := dir + "/p.html"
	html := `<!DOCTYPE html><html><head><meta charset="utf-8"><style>body{margin:0}</style></head><body>
<h2 style="position:absolute;top:10px;left:10px;margin:0">one</h2>
<h2 style="position:absolute;top:20px;left:20px;margin:0">two</h2>
<div style="width:1500px;height:10px;margin-top:100px"></div></body></html>`
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	p := RenderPage(t, page, 1000, 600)
	if p.ViewportWidth != 1000 || p.ScrollWidth != 1500 || len(p.Blocks) != 3 || len(p.Headings) != 2 {
		t.Fatalf("measured viewport %.0f, scroll width %.0f, %d blocks, %d headings", p.ViewportWidth, p.ScrollWidth,
			len(p.Blocks), len(p.Headings))
	}
	if h := p.Headings[0]; h.X != 10 || h.Y != 10 || h.Text != "one" {
		t.Errorf("first heading %v", h)
	}
	rec := &recorder{TB: t}
	CheckPageLayout(rec, p)
	all := strings.Join(rec.errs, "\n")
	for _, want := range []string{"page is 1500 px wide in a 1000 px viewport", "blocks overlap"} {
		if !strings.Contains(all, want) {
			t.Errorf("CheckPageLayout missed %q; it said:\n%s", want, all)
		}
	}
}

// recorder is a testing.TB that records errors instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, strings.TrimSpace(fmt.Sprintf(format, args...)))
}
func (r *recorder) Helper() {}
