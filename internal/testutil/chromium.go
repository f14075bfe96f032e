package testutil

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Chromium returns the path of Debian's chromium (`make test` installs
// it), or skips the test where it is not installed. With
// UNLEARN_REQUIRE_CHROMIUM=1 (set by `make test` and .ci/run) or CI set,
// a missing browser fails the test instead, so CI cannot pass by skipping.
func Chromium(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("chromium")
	if err == nil {
		return p
	}
	if os.Getenv("UNLEARN_REQUIRE_CHROMIUM") == "1" || os.Getenv("CI") != "" {
		t.Fatalf("chromium required (UNLEARN_REQUIRE_CHROMIUM=1 or CI): %v; apt-get install chromium, or make deps", err)
	}
	t.Skip("chromium not installed (apt-get install chromium, or make deps)")
	return ""
}

// Box is an element's border box in CSS pixels, relative to the page.
type Box struct {
	X, Y, W, H float64
}

// Right and Bottom are the box's far edges.
func (b Box) Right() float64  { return b.X + b.W }
func (b Box) Bottom() float64 { return b.Y + b.H }

// Overlaps says whether two boxes share an area of more than half a pixel
// each way (neighbouring blocks may share an edge, rounded).
func (b Box) Overlaps(o Box) bool {
	const eps = 0.5
	return b.X < o.Right()-eps && o.X < b.Right()-eps && b.Y < o.Bottom()-eps && o.Y < b.Bottom()-eps
}

// Element is one element of a rendered page as the page measures it.
type Element struct {
	Tag   string // lower case
	Class string
	Text  string // the first 60 characters of its text
	Box
	// Images only: whether the image loaded, and its decoded size.
	Complete                    bool
	NaturalWidth, NaturalHeight int
}

func (e Element) String() string {
	return fmt.Sprintf("<%s class=%q> %q at (%.0f, %.0f) %.0f×%.0f", e.Tag, e.Class, e.Text, e.X, e.Y, e.W, e.H)
}

// Page is a page rendered by headless Chromium: its geometry, read by a
// script evaluated in the page through the DevTools protocol (a page's
// Content-Security-Policy does not apply to it), a screenshot of the
// whole page and the browser's net log.
type Page struct {
	ViewportWidth, ViewportHeight float64
	ScrollWidth, ScrollHeight     float64 // of the document element
	// Blocks are the body's children; Figures every figure; Images every
	// img; Headings every h1 to h3.
	Blocks, Figures, Images, Headings []Element
	Screenshot                        image.Image
	NetLog                            string // path of Chromium's net log (JSON)
}

// geometryJS waits for every image to be decoded and returns the page's
// geometry as JSON (Page's fields).
const geometryJS = `(async () => {
  await Promise.all([...document.images].map(i => i.decode().catch(() => null)));
  const el = e => {
    const r = e.getBoundingClientRect();
    const o = {Tag: e.tagName.toLowerCase(), Class: e.className || "",
      Text: (e.innerText || e.alt || "").slice(0, 60),
      X: r.left + scrollX, Y: r.top + scrollY, W: r.width, H: r.height};
    if (o.Tag === "img") {
      o.Complete = e.complete; o.NaturalWidth = e.naturalWidth; o.NaturalHeight = e.naturalHeight;
    }
    return o;
  };
  const all = s => [...document.querySelectorAll(s)].map(el);
  const d = document.documentElement;
  return JSON.stringify({ViewportWidth: innerWidth, ViewportHeight: innerHeight,
    ScrollWidth: d.scrollWidth, ScrollHeight: d.scrollHeight,
    Blocks: [...document.body.children].map(el), Figures: all("figure"), Images: all("img"),
    Headings: all("h1, h2, h3")});
})()`

// RenderPage opens the HTML file at path in headless Chromium with a
// window width × height CSS pixels wide (device scale 1), waits for the
// load event and the images, and returns what the page measures of
// itself and a screenshot of the whole page.
func RenderPage(t testing.TB, path string, width, height int) *Page {
	t.Helper()
	chromium := Chromium(t)
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	netlog := filepath.Join(dir, "netlog.json")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// --no-sandbox: Chromium's sandbox refuses to start as root (the CI
	// machine's user) and needs user namespaces that containers often lack.
	// The page is the tool's own file, opened offline, and its CSP forbids
	// every request; the browser runs for this test only. A private
	// --user-data-dir keeps the profile in the test's temporary folder.
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir=" + filepath.Join(dir, "profile"), "--log-net-log=" + netlog,
		fmt.Sprintf("--window-size=%d,%d", width, height), "--remote-debugging-pipe", "about:blank"}
	cmd := exec.CommandContext(ctx, chromium, args...)
	// --remote-debugging-pipe: Chromium reads commands on fd 3 and writes
	// replies and events on fd 4, each a JSON message ending in a NUL.
	toR, toW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fromR, fromW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.ExtraFiles = []*os.File{toR, fromW}
	if err := cmd.Start(); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	toR.Close()
	fromW.Close()
	cdp := newDevTools(toW, fromR)
	defer func() {
		_, _ = cdp.call(ctx, "", "Browser.close", nil)
		toW.Close()
		if err := cmd.Wait(); err != nil && ctx.Err() == nil {
			t.Logf("chromium: %v", err)
		}
		fromR.Close()
		if t.Failed() {
			t.Logf("chromium's stderr:\n%s", stderr.String())
		}
	}()

	must := func(session, method string, params map[string]any) json.RawMessage {
		t.Helper()
		r, err := cdp.call(ctx, session, method, params)
		if err != nil {
			t.Fatalf("DevTools %s: %v\nchromium's stderr:\n%s", method, err, stderr.String())
		}
		return r
	}
	var target struct{ TargetID string }
	if err := json.Unmarshal(must("", "Target.createTarget", map[string]any{"url": "about:blank"}), &target); err != nil {
		t.Fatal(err)
	}
	var attached struct{ SessionID string }
	if err := json.Unmarshal(must("", "Target.attachToTarget",
		map[string]any{"targetId": target.TargetID, "flatten": true}), &attached); err != nil {
		t.Fatal(err)
	}
	s := attached.SessionID
	must(s, "Emulation.setDeviceMetricsOverride",
		map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false})
	must(s, "Page.enable", nil)
	loaded := cdp.await(s, "Page.loadEventFired")
	must(s, "Page.navigate", map[string]any{"url": (&url.URL{Scheme: "file", Path: abs}).String()})
	select {
	case <-loaded:
	case <-ctx.Done():
		t.Fatalf("chromium: %s did not load: %v", abs, ctx.Err())
	}
	var res struct {
		Result struct {
			Value string
		}
		ExceptionDetails any
	}
	if err := json.Unmarshal(must(s, "Runtime.evaluate", map[string]any{"expression": geometryJS,
		"awaitPromise": true, "returnByValue": true}), &res); err != nil {
		t.Fatal(err)
	}
	if res.ExceptionDetails != nil {
		t.Fatalf("geometry script: %v", res.ExceptionDetails)
	}
	page := &Page{NetLog: netlog}
	if err := json.Unmarshal([]byte(res.Result.Value), page); err != nil {
		t.Fatalf("geometry %q: %v", res.Result.Value, err)
	}
	var shot struct{ Data string }
	if err := json.Unmarshal(must(s, "Page.captureScreenshot", map[string]any{"format": "png",
		"captureBeyondViewport": true, "clip": map[string]any{"x": 0, "y": 0, "width": page.ScrollWidth,
			"height": page.ScrollHeight, "scale": 1}}), &shot); err != nil {
		t.Fatal(err)
	}
	b, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		t.Fatal(err)
	}
	if page.Screenshot, err = png.Decode(bytes.NewReader(b)); err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if d := os.Getenv("UNLEARN_SCREENSHOT_DIR"); d != "" {
		name := fmt.Sprintf("%s-%dx%d.png", strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()), width, height)
		if err := os.WriteFile(filepath.Join(d, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return page
}

// devTools speaks the DevTools protocol over Chromium's pipe: calls with
// ids, replies matched to them, events handed to whoever awaits them.
type devTools struct {
	w       *os.File
	mu      sync.Mutex
	next    int
	pending map[int]chan devReply
	waiters map[string][]chan struct{} // session + " " + method
	readErr error
}

type devReply struct {
	result json.RawMessage
	err    error
}

func newDevTools(w, r *os.File) *devTools {
	d := &devTools{w: w, pending: map[int]chan devReply{}, waiters: map[string][]chan struct{}{}}
	go d.read(r)
	return d
}

func (d *devTools) read(r *os.File) {
	br := bufio.NewReader(r)
	for {
		msg, err := br.ReadBytes(0)
		if err != nil {
			d.mu.Lock()
			d.readErr = fmt.Errorf("pipe closed: %w", err)
			for id, ch := range d.pending {
				ch <- devReply{err: d.readErr}
				delete(d.pending, id)
			}
			d.mu.Unlock()
			return
		}
		var m struct {
			ID        int             `json:"id"`
			Method    string          `json:"method"`
			SessionID string          `json:"sessionId"`
			Result    json.RawMessage `json:"result"`
			Error     *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(msg[:len(msg)-1], &m) != nil {
			continue
		}
		d.mu.Lock()
		switch {
		case m.ID != 0:
			if ch, ok := d.pending[m.ID]; ok {
				rep := devReply{result: m.Result}
				if m.Error != nil {
					rep.err = fmt.Errorf("%s", m.Error.Message)
				}
				ch <- rep
				delete(d.pending, m.ID)
			}
		case m.Method != "":
			key := m.SessionID + " " + m.Method
			for _, ch := range d.waiters[key] {
				close(ch)
			}
			delete(d.waiters, key)
		}
		d.mu.Unlock()
	}
}

// await returns a channel closed when the next event method arrives for
// session; call it before the command that causes the event.
func (d *devTools) await(session, method string) <-chan struct{} {
	ch := make(chan struct{})
	d.mu.Lock()
	key := session + " " + method
	d.waiters[key] = append(d.waiters[key], ch)
	d.mu.Unlock()
	return ch
}

func (d *devTools) call(ctx context.Context, session, method string, params map[string]any) (json.RawMessage, error) {
	d.mu.Lock()
	if d.readErr != nil {
		d.mu.Unlock()
		return nil, d.readErr
	}
	d.next++
	id := d.next
	ch := make(chan devReply, 1)
	d.pending[id] = ch
	d.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	if _, err := d.w.Write(append(b, 0)); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		return r.result, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// CheckPageLayout asserts what any page of the tool must hold at the
// page's width: nothing wider than the viewport (no horizontal scrolling),
// every image loaded, the body's blocks one below the other without
// overlapping, headings clear of everything else, figures side by side or
// stacked without overlapping, and each image inside its figure.
func CheckPageLayout(t testing.TB, p *Page) {
	t.Helper()
	if p.ViewportWidth <= 0 || len(p.Blocks) == 0 {
		t.Fatalf("no page measured: %+v", p)
	}
	if p.ScrollWidth > p.ViewportWidth {
		t.Errorf("page is %.0f px wide in a %.0f px viewport", p.ScrollWidth, p.ViewportWidth)
	}
	for _, group := range [][]Element{p.Blocks, p.Figures, p.Images, p.Headings} {
		for _, e := range group {
			if e.X < 0 || e.Right() > p.ViewportWidth+0.5 {
				t.Errorf("%v reaches past the viewport's %.0f px", e, p.ViewportWidth)
			}
		}
	}
	for _, img := range p.Images {
		if !img.Complete || img.NaturalWidth == 0 || img.W < 100 {
			t.Errorf("image not loaded or not shown: %v, natural %d×%d", img, img.NaturalWidth, img.NaturalHeight)
		}
	}
	overlaps := func(what string, es []Element) {
		t.Helper()
		for i := range es {
			for j := range i {
				if es[i].W > 0 && es[j].W > 0 && es[i].Overlaps(es[j].Box) {
					t.Errorf("%s overlap: %v and %v", what, es[j], es[i])
				}
			}
		}
	}
	overlaps("blocks", p.Blocks)
	overlaps("figures", p.Figures)
	for _, h := range p.Headings {
		for _, group := range [][]Element{p.Figures, p.Images} {
			for _, e := range group {
				if h.Overlaps(e.Box) {
					t.Errorf("heading %v overlaps %v", h, e)
				}
			}
		}
	}
	for _, img := range p.Images {
		in := false
		for _, f := range p.Figures {
			if img.X >= f.X-0.5 && img.Right() <= f.Right()+0.5 && img.Y >= f.Y-0.5 && img.Bottom() <= f.Bottom()+0.5 {
				in = true
			}
		}
		if !in && len(p.Figures) > 0 {
			t.Errorf("image %v lies outside every figure", img)
		}
	}
}

// CheckNoPageRequests reads Chromium's net log: apart from the page
// itself, every URL requested must be one of Chromium's own background
// services (it contacts Google's update and account hosts whatever the
// page holds), never a file or a host the page could have named.
func CheckNoPageRequests(t testing.TB, netlog, page string) {
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
		case pu.Scheme == "data", pu.Scheme == "about":
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
