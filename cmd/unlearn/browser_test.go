package main

import (
	"testing"

	"github.com/unlearn-tool/unlearn/internal/testutil"
)

// renderInChromium renders the HTML report rep that a real run wrote in
// headless Chromium at a laptop's width (internal/testutil.RenderPage;
// `make test` installs chromium and requires it) and checks the page's own
// geometry (testutil.CheckPageLayout), that the screenshot shows the plots
// and that the page made no request of its own. UNLEARN_SCREENSHOT_DIR
// keeps the screenshot for a look.
func renderInChromium(t *testing.T, rep string) {
	p := testutil.RenderPage(t, rep, 1366, 768)
	testutil.CheckPageLayout(t, p)
	// The plots' colours only come from the embedded PNGs: the model's blue,
	// the oracle's orange and the forget set's red must cover a good part
	// of the page. A broken image would leave an icon and alt text.
	counts := map[string]int{}
	b := p.Screenshot.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			cr, cg, cb, _ := p.Screenshot.At(x, y).RGBA()
			switch rgb := [3]uint32{cr >> 8, cg >> 8, cb >> 8}; {
			case near(rgb, [3]uint32{0x1f, 0x77, 0xb4}):
				counts["model"]++
			case near(rgb, [3]uint32{0xff, 0x7f, 0x0e}):
				counts["oracle"]++
			case near(rgb, [3]uint32{0xd6, 0x27, 0x28}):
				counts["forget"]++
			}
		}
	}
	t.Logf("screenshot %v: %v sampled pixels per colour", b, counts)
	for _, k := range []string{"model", "oracle", "forget"} {
		if counts[k] < 500 {
			t.Errorf("screenshot shows little %s colour (%d pixels): plots missing?", k, counts[k])
		}
	}
	testutil.CheckNoPageRequests(t, p.NetLog, rep)
}

func near(a, b [3]uint32) bool {
	for i := range a {
		if d := int(a[i]) - int(b[i]); d > 12 || d < -12 {
			return false
		}
	}
	return true
}
