package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/schema"
)

// The report of an unlearning run (before, model and oracle over long
// ImageFolder class names) rendered by headless Chromium at laptop widths:
// nothing wider than the window, every image loaded at a readable size,
// no two blocks, figures or headings overlapping, and no request made.
// `make test` installs chromium and requires it (UNLEARN_REQUIRE_CHROMIUM).
func TestReportLayoutInChromium(t *testing.T) {
	rep, ms := fixtureReport(t)
	page, err := HTML(rep, ms)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, size := range [][2]int{{1366, 768}, {1024, 768}} {
		p := testutil.RenderPage(t, path, size[0], size[1])
		if p.ViewportWidth != float64(size[0]) {
			t.Errorf("viewport %.0f px wide, asked for %d", p.ViewportWidth, size[0])
		}
		testutil.CheckPageLayout(t, p)
		if len(p.Images) != 15 || len(p.Figures) != 15 {
			t.Errorf("%d images in %d figures, want 15", len(p.Images), len(p.Figures))
		}
		// The charts are drawn for about half the page's width: two fit
		// side by side from 1024 px on.
		for _, img := range p.Images {
			if img.W < 480 {
				t.Errorf("at %d px, image %v shown %.0f px wide", size[0], img, img.W)
			}
		}
		rows := map[float64]int{}
		for _, f := range p.Figures {
			rows[f.Y]++
		}
		if len(rows) > 10 {
			t.Errorf("at %d px the 15 figures take %d rows: not side by side", size[0], len(rows))
		}
		testutil.CheckNoPageRequests(t, p.NetLog, path)
	}
}

// The score page holds to the same rules at a laptop's width.
func TestScorePageLayoutInChromium(t *testing.T) {
	var rep schema.ScoreReport
	if err := json.Unmarshal([]byte(oldScoreJSON), &rep); err != nil {
		t.Fatal(err)
	}
	page, err := ScoreHTML(&rep)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "score.html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	p := testutil.RenderPage(t, path, 1366, 768)
	testutil.CheckPageLayout(t, p)
	if len(p.Images) != 2 {
		t.Errorf("%d images, want 2", len(p.Images))
	}
	testutil.CheckNoPageRequests(t, p.NetLog, path)
}
