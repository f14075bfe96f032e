package report

import (
	"bytes"
	"encoding/base64"
	"image/png"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/schema"
)

// outputs makes logits of n examples of 3 classes whose true-class margin
// is drawn from N(mu, 1).
func outputs(rng *rand.Rand, n int, mu float64) eval.Outputs {
	o := eval.Outputs{Logits: make([]float32, 3*n), Labels: make([]int, n), Classes: 3}
	for i := range n {
		y := i % 3
		o.Labels[i] = y
		o.Logits[3*i+y] = float32(mu + rng.NormFloat64())
		o.Logits[3*i+(y+1)%3] = float32(rng.NormFloat64())
	}
	return o
}

func metrics(t *testing.T, seed uint64, forgetMu float64) *eval.Metrics {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	train := outputs(rng, 300, 3)
	// the first 60 training examples are the forget set
	f := outputs(rng, 60, forgetMu)
	copy(train.Logits, f.Logits)
	test := outputs(rng, 120, 1.5)
	var forget, retain []int
	for i := range 300 {
		if i < 60 {
			forget = append(forget, i)
		} else {
			retain = append(retain, i)
		}
	}
	m, err := eval.EvaluateOutputs(train, test, forget, retain, eval.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var (
	srcRE  = regexp.MustCompile(`(?:src|href)="([^"]*)"`)
	imgRE  = regexp.MustCompile(`<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"`)
	urlRE  = regexp.MustCompile(`(?i)(https?:|ftp:|//[a-z0-9.-]+\.[a-z]{2,}/|url\()`)
	cspTag = `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">`
)

// checkPage verifies that a page is self-contained: every src/href is a
// PNG data URI that decodes, nothing names another resource, and the CSP
// forbids requests. It returns the number of images.
func checkPage(t *testing.T, page []byte) int {
	t.Helper()
	s := string(page)
	if !strings.Contains(s, cspTag) {
		t.Error("no Content-Security-Policy")
	}
	for _, m := range srcRE.FindAllStringSubmatch(s, -1) {
		if !strings.HasPrefix(m[1], "data:image/png;base64,") {
			t.Errorf("reference to %q", m[1])
		}
	}
	// Outside the data URIs no text may look like an address.
	stripped := imgRE.ReplaceAllString(s, "<img")
	if m := urlRE.FindString(stripped); m != "" {
		t.Errorf("page mentions %q", m)
	}
	imgs := imgRE.FindAllStringSubmatch(s, -1)
	for i, m := range imgs {
		b, err := base64.StdEncoding.DecodeString(m[1])
		if err != nil {
			t.Fatalf("image %d: %v", i, err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("image %d: %v", i, err)
		}
		r := img.Bounds()
		if r.Dx() < 400 || r.Dy() < 200 {
			t.Errorf("image %d is %v", i, r)
		}
		// Not blank: some pixels are neither white nor grey.
		colored := 0
		for y := r.Min.Y; y < r.Max.Y; y += 3 {
			for x := r.Min.X; x < r.Max.X; x += 3 {
				cr, cg, cb, _ := img.At(x, y).RGBA()
				if max(cr, cg, cb)-min(cr, cg, cb) > 0x2000 {
					colored++
				}
			}
		}
		if colored < 50 {
			t.Errorf("image %d has %d coloured sample pixels", i, colored)
		}
	}
	return len(imgs)
}

func TestHTMLWithOracle(t *testing.T) {
	model := metrics(t, 1, 3)    // remembers the forget set like the rest
	oracle := metrics(t, 2, 1.5) // forget set looks like test data
	rep := &schema.Report{
		Schema:   schema.MetricsSchema,
		Model:    &schema.ModelInfo{Path: "m<odd>.onnx", SHA256: "ab"},
		Data:     &schema.DataInfo{Path: "d", Classes: 3, ClassNames: []string{"cat", "dog", "eel"}},
		Forget:   &schema.ForgetInfo{Path: "f.txt", N: 60},
		Metrics:  &model.Metrics,
		Oracle:   &schema.Section{Model: &schema.ModelInfo{Path: "o.onnx"}, Metrics: &oracle.Metrics},
		Delta:    eval.NewDelta(oracle, model),
		Settings: schema.Settings{MIA: eval.NewMIASettings(model, eval.MIAOptions{})},
	}
	var err error
	if rep.Agreement, err = eval.NewAgreement(oracle, model); err != nil {
		t.Fatal(err)
	}
	page, err := HTML(rep, eval.Measurements{Model: model, Oracle: oracle})
	if err != nil {
		t.Fatal(err)
	}
	// 2 overview + 3 per-class + 5 features × (model, oracle)
	if n := checkPage(t, page); n != 15 {
		t.Errorf("%d images, want 15", n)
	}
	s := string(page)
	for _, want := range []string{"m&lt;odd&gt;.onnx", "avg_gap", "loss_lr", "agreement", "Δ (points)", "MIA feature: m_entropy"} {
		if !strings.Contains(s, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(s, "m<odd>") {
		t.Error("path not escaped")
	}
	if len(Rows(rep)) != 4+6+3+1 {
		t.Errorf("%d rows", len(Rows(rep)))
	}
}

func TestHTMLWithoutOracle(t *testing.T) {
	model := metrics(t, 1, 3)
	rep := &schema.Report{Schema: schema.MetricsSchema, Model: &schema.ModelInfo{Path: "m.onnx"}, Data: &schema.DataInfo{Path: "d"}, Metrics: &model.Metrics}
	page, err := HTML(rep, eval.Measurements{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	// 2 overview + 3 per-class (test, forget, retain) + 5 features
	if n := checkPage(t, page); n != 10 {
		t.Errorf("%d images, want 10", n)
	}
	if strings.Contains(string(page), "oracle</th>") {
		t.Error("oracle column without an oracle")
	}
	if _, err := HTML(&schema.Report{Model: &schema.ModelInfo{}}, eval.Measurements{}); err == nil {
		t.Error("empty report rendered")
	}
}

// The unlearning section shows the auto schedule's choice and the proxies'
// trajectory, with the numbers of the log.
func TestHTMLProxies(t *testing.T) {
	model := metrics(t, 1, 3)
	mia := func(f, r float64) *schema.ProxyMIA {
		return &schema.ProxyMIA{Feature: "confidence", Forget: f, Reference: r}
	}
	stop := &schema.ProxyDecision{Stop: true, Reason: "unseen-and-recovered"}
	rep := &schema.Report{Schema: schema.MetricsSchema, Model: &schema.ModelInfo{Path: "m.onnx"}, Data: &schema.DataInfo{Path: "d"}, Metrics: &model.Metrics,
		Unlearning: &schema.Unlearning{Method: "del", Strategy: "del", Algorithm: "rft", Schedule: "auto", Epochs: 2, LR: 0.03,
			Auto: &schema.AutoSchedule{LR: 0.03, RangeTest: []schema.LRTrial{{LR: 0.01, Loss: 0.5}, {LR: 0.03, Loss: 0.51}, {LR: 0.1, Diverged: true}}, RangeSteps: 10,
				StopEpoch: 2, MaxEpochs: 20, Reason: "unseen-and-recovered", Detail: "epoch 2: looks unseen"},
			Proxies: &schema.ProxyLog{Reference: &schema.ProxyReference{IID: false, Classes: []int{2, 5}, NTest: 198}, HoldoutSize: 360, BeforeMatchedTest: 0.821,
				Before: schema.Proxies{ForgetAccuracy: 0.8925, ReferenceAccuracy: 0.6931, HoldoutAccuracy: 0.8806, MIA: mia(0.2525, 0.5202)},
				Epochs: []schema.EpochProxies{{Epoch: 1, LR: 0.03, Proxies: schema.Proxies{ForgetAccuracy: 0.5, ReferenceAccuracy: 0.6, HoldoutAccuracy: 0.7, MIA: mia(0.6, 0.5)}, Decision: &schema.ProxyDecision{}},
					{Epoch: 2, LR: 0.015, Proxies: schema.Proxies{ForgetAccuracy: 0.6925, ReferenceAccuracy: 0.6931, HoldoutAccuracy: 0.8028, MIA: mia(0.4925, 0.5202)}, Decision: stop}},
				After: schema.Proxies{ForgetAccuracy: 0.6925, ReferenceAccuracy: 0.6931, HoldoutAccuracy: 0.8028, MIA: mia(0.4925, 0.5202)}},
		}}
	page, err := HTML(rep, eval.Measurements{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	checkPage(t, page)
	s := string(page)
	for _, want := range []string{"Oracle-free proxies", "0.1: diverged", "stopped after epoch 2 of at most 20 (unseen-and-recovered)",
		"198 test examples of classes [2 5]", "360 retain examples", "89.25%", "69.31%", "80.28%", "49.25%", "52.02%", "82.10%",
		"epoch 1 (lr 0.03)", "go on", "stop: unseen-and-recovered"} {
		if !strings.Contains(s, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	rep.Unlearning.Proxies, rep.Unlearning.Auto = nil, nil
	if page, err = HTML(rep, eval.Measurements{Model: model}); err != nil || strings.Contains(string(page), "Oracle-free proxies") {
		t.Errorf("no proxies: err %v, section shown %v", err, strings.Contains(string(page), "Oracle-free proxies"))
	}
}

// The report says the run's numbers as the terminal does: "1 epoch", rates
// to 4 significant digits, the epochs the auto schedule trained (and the
// result's epoch when it differs), and a run slower than retraining as
// "so this run cost N× retraining".
func TestHTMLRunWording(t *testing.T) {
	met := metrics(t, 1, 3)
	rep := &schema.Report{Schema: schema.MetricsSchema, Model: &schema.ModelInfo{Path: "m.onnx"}, Data: &schema.DataInfo{Path: "d"}, Metrics: &met.Metrics,
		Unlearning: &schema.Unlearning{Method: "del", Strategy: "del", Algorithm: "rft", Schedule: "fixed", Epochs: 1, LR: 0.09486832980505139,
			RetrainEstimateS: 10, RetrainEpochs: 1, Speedup: 0.1136, EpochsEquivalent: 8.84, EpochsTrained: 7.25,
			RetrainEstimateBasis: schema.RetrainBasisTimed, RetrainStepsTimed: 6, Timings: schema.UnlearningTimings{RetrainTimingS: 1.2}}}
	page, err := HTML(rep, eval.Measurements{Model: met})
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	for _, want := range []string{"algorithm rft, 1 epoch, lr 0.09487,", "retraining from scratch (1 epoch) would take about 10 s (timed: 6 full training steps, 1.2 s), so this run cost 8.8× retraining",
		"(8.8 epochs over the retain set at this run&#39;s speed; 7.2 by examples trained)"} {
		if !strings.Contains(s, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, bad := range []string{"1 epochs", "0.0948683", "× this run"} {
		if strings.Contains(s, bad) {
			t.Errorf("page has %q", bad)
		}
	}
	u := rep.Unlearning
	u.Schedule, u.Epochs, u.Speedup = "auto", 16, 2.5
	u.Auto = &schema.AutoSchedule{LR: 0.09486832980505139, StopEpoch: 16, Epoch: 13, MaxEpochs: 20, Reason: "no-progress",
		RangeTest: []schema.LRTrial{{LR: 0.03, Loss: 0.5}, {LR: 0.09486832980505139, Loss: 0.49}, {LR: 0.3, Diverged: true}}, RangeSteps: 10}
	if page, err = HTML(rep, eval.Measurements{Model: met}); err != nil {
		t.Fatal(err)
	}
	s = string(page)
	for _, want := range []string{"algorithm rft, 16 epochs (the result is epoch 13), lr 0.09487,", "lr 0.09487 chosen by a range test (0.03: 0.5000, 0.09487: 0.4900, 0.3: diverged",
		"about 10 s (timed: 6 full training steps, 1.2 s), 2.5× this run"} {
		if !strings.Contains(s, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(s, "0.0948683") {
		t.Error("page prints a rate to full precision")
	}
}
