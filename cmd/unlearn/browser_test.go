package main

import (
	"context"
	"encoding/json"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// renderInChromium renders the HTML report rep in headless Chromium
// (Debian's chromium package; skipped where it is not installed), checks
// that the screenshot shows the plots and that the page made no request of
// its own. UNLEARN_SCREENSHOT_DIR keeps the screenshot for a look.
func renderInChromium(t *testing.T, rep string) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed (apt-get install chromium)")
	}
	dir := t.TempDir()
	shotDir := dir
	if d := os.Getenv("UNLEARN_SCREENSHOT_DIR"); d != "" {
		shotDir = d
	}
	shot := filepath.Join(shotDir, "report.png")
	netlog := filepath.Join(dir, "netlog.json")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--hide-scrollbars", "--window-size=1200,4200",
		"--log-net-log="+netlog, "--screenshot="+shot, (&url.URL{Scheme: "file", Path: rep}).String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	// The plots' colours only come from the embedded PNGs: the model's blue,
	// the oracle's orange and the forget set's red must cover a good part
	// of the page. A broken image would leave an icon and alt text.
	counts := map[string]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			cr, cg, cb, _ := img.At(x, y).RGBA()
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
	t.Logf("screenshot %s: %v sampled pixels per colour", shot, counts)
	for _, k := range []string{"model", "oracle", "forget"} {
		if counts[k] < 500 {
			t.Errorf("screenshot shows little %s colour (%d pixels): plots missing?", k, counts[k])
		}
	}
	checkNoPageRequests(t, netlog, rep)
}

func near(a, b [3]uint32) bool {
	for i := range a {
		if d := int(a[i]) - int(b[i]); d > 12 || d < -12 {
			return false
		}
	}
	return true
}

// checkNoPageRequests reads Chromium's net log: apart from the report
// itself, every URL requested must be one of Chromium's own background
// services (it contacts Google's update and account hosts whatever the
// page holds), never a file or a host the page could have named.
func checkNoPageRequests(t *testing.T, netlog, page string) {
	t.Helper()
	b, err := os.ReadFile(netlog)
	if err != nil {
		t.Fatal(err)
	}
	var log struct {
		Events []struct {
			Params map[string]any `json:"params"`
		} `json:"events"`
	}
	if err := json.Unmarshal(b, &log); err != nil {
		// Chromium may leave the log unterminated when killed; the static
		// checks of eval/report still hold.
		t.Logf("net log unreadable: %v", err)
		return
	}
	seen, own := 0, 0
	defer func() { t.Logf("net log: %d URL events, %d of them Chromium's own services", seen, own) }()
	for _, e := range log.Events {
		u, _ := e.Params["url"].(string)
		if u == "" {
			continue
		}
		seen++
		pu, err := url.Parse(u)
		if err != nil {
			t.Errorf("request for %q", u)
			continue
		}
		switch {
		case pu.Scheme == "file" && pu.Path == page:
		case pu.Scheme == "data":
		case (pu.Scheme == "http" || pu.Scheme == "https") && ownHost(pu.Hostname()):
			own++
		default:
			t.Errorf("the page requested %s", u)
		}
	}
}

func ownHost(h string) bool {
	for _, d := range []string{"google.com", "googleapis.com", "gvt1.com", "gstatic.com"} {
		if h == d || strings.HasSuffix(h, "."+d) {
			return true
		}
	}
	return false
}
