package report

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"math/rand/v2"
	"testing"

	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/schema"
)

// outputsK makes logits of n examples of k classes (labels i mod k) whose
// true-class margin is drawn from N(mu, 1).
func outputsK(rng *rand.Rand, n, k int, mu float64) eval.Outputs {
	o := eval.Outputs{Logits: make([]float32, k*n), Labels: make([]int, n), Classes: k}
	for i := range n {
		y := i % k
		o.Labels[i] = y
		o.Logits[k*i+y] = float32(mu + rng.NormFloat64())
		o.Logits[k*i+(y+1)%k] = float32(rng.NormFloat64())
	}
	return o
}

// runMetrics evaluates one model of fixtureReport: 1,000 training
// examples of 10 classes, the forget set is the first 200 of classes 0 and
// 1, whose margin is forgetMu.
func runMetrics(t testing.TB, seed uint64, forgetMu float64) *eval.Metrics {
	t.Helper()
	const k = 10
	rng := rand.New(rand.NewPCG(seed, 7))
	train := outputsK(rng, 1000, k, 3)
	test := outputsK(rng, 400, k, 1.5)
	f := outputsK(rng, 1000, k, forgetMu)
	var forget, retain []int
	for i := range 1000 {
		if i < 200 && i%k < 2 {
			forget = append(forget, i)
			copy(train.Logits[k*i:k*(i+1)], f.Logits[k*i:k*(i+1)])
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

// fixtureReport is the report of an unlearning run as the main command
// writes it: the input model (before), the unlearned model and an oracle,
// on an ImageFolder dataset whose class names are long, with the auto
// schedule's choice and proxies.
func fixtureReport(t testing.TB) (*schema.Report, eval.Measurements) {
	t.Helper()
	before := runMetrics(t, 1, 3)
	model := runMetrics(t, 2, 2)
	oracle := runMetrics(t, 3, 1.5)
	rep := &schema.Report{
		Schema: schema.MetricsSchema, Tool: "unlearn test",
		Model: &schema.ModelInfo{Path: "/runs/2026-12-07/unlearned_resnet18_imagefolder.onnx", SHA256: "ab12"},
		Data: &schema.DataInfo{Path: "/data/imagefolder/train", Format: "imagefolder", Classes: 10,
			ClassNames: imageFolderNames(10)},
		Forget:   &schema.ForgetInfo{Path: "/data/imagefolder/forget_ids.txt", N: 40, Given: "ids"},
		Metrics:  &model.Metrics,
		Before:   &schema.Section{Model: &schema.ModelInfo{Path: "/models/resnet18_imagefolder.onnx"}, Metrics: &before.Metrics},
		Oracle:   &schema.Section{Model: &schema.ModelInfo{Path: "/models/oracle.onnx"}, Metrics: &oracle.Metrics},
		Delta:    eval.NewDelta(oracle, model),
		Settings: schema.Settings{BatchSize: 256, Device: "cpu", ThreadsUsed: 2, MIA: eval.NewMIASettings(model, eval.MIAOptions{})},
		Unlearning: &schema.Unlearning{Method: "del", Strategy: "del", Algorithm: "rft", Schedule: "auto", Epochs: 2,
			LR: 0.03, Budget: 0.1, BatchSize: 64,
			Auto: &schema.AutoSchedule{LR: 0.03, RangeTest: []schema.LRTrial{{LR: 0.01, Loss: 0.5}, {LR: 0.03, Loss: 0.51},
				{LR: 0.1, Diverged: true}}, RangeSteps: 10, StopEpoch: 2, MaxEpochs: 20, Reason: "unseen-and-recovered",
				Detail: "epoch 2: the forget set looks unseen and the held-out accuracy recovered"},
			Proxies: &schema.ProxyLog{Reference: &schema.ProxyReference{Classes: []int{0, 1}, NTest: 80}, HoldoutSize: 360,
				BeforeMatchedTest: 0.821,
				Before:            schema.Proxies{ForgetAccuracy: 0.8925, ReferenceAccuracy: 0.6931, HoldoutAccuracy: 0.8806},
				Epochs: []schema.EpochProxies{{Epoch: 1, LR: 0.03, Proxies: schema.Proxies{ForgetAccuracy: 0.5},
					Decision: &schema.ProxyDecision{}}},
				After: schema.Proxies{ForgetAccuracy: 0.6925, ReferenceAccuracy: 0.6931, HoldoutAccuracy: 0.8028}},
		},
	}
	var err error
	if rep.Agreement, err = eval.NewAgreement(oracle, model); err != nil {
		t.Fatal(err)
	}
	return rep, eval.Measurements{Model: model, Oracle: oracle}
}

// pageImages decodes the page's images in order.
func pageImages(t *testing.T, page []byte) []image.Image {
	t.Helper()
	var imgs []image.Image
	for i, m := range imgRE.FindAllSubmatch(page, -1) {
		b, err := base64.StdEncoding.DecodeString(string(m[1]))
		if err != nil {
			t.Fatalf("image %d: %v", i, err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("image %d: %v", i, err)
		}
		imgs = append(imgs, img)
	}
	return imgs
}

// countColor counts the pixels of exactly colour c (bars are filled with
// it; anti-aliased text rarely hits it exactly).
func countColor(img image.Image, c [3]uint8) int {
	n := 0
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if uint8(cr>>8) == c[0] && uint8(cg>>8) == c[1] && uint8(cb>>8) == c[2] {
				n++
			}
		}
	}
	return n
}

// With a before section the bar charts (overview and per class) draw the
// input model's bars beside the model's and the oracle's, as the table
// shows its column; without one they do not.
func TestHTMLChartsShowBefore(t *testing.T) {
	rep, ms := fixtureReport(t)
	before := [3]uint8{colBefore.R, colBefore.G, colBefore.B}
	page, err := HTML(rep, ms)
	if err != nil {
		t.Fatal(err)
	}
	imgs := pageImages(t, page)
	// 2 overview + 3 per class + 5 features × (model, oracle)
	if len(imgs) != 15 {
		t.Fatalf("%d images, want 15", len(imgs))
	}
	for i, img := range imgs[:5] {
		n, m := countColor(img, before), countColor(img, [3]uint8{colModel.R, colModel.G, colModel.B})
		// Forget bars: the input model's accuracy is the highest, so its
		// bars cover at least a third of the model's.
		if n < 1000 || 3*n < m {
			t.Errorf("bar chart %d: %d pixels of the before colour, %d of the model's", i, n, m)
		}
	}
	rep.Before = nil
	if page, err = HTML(rep, ms); err != nil {
		t.Fatal(err)
	}
	for i, img := range pageImages(t, page)[:5] {
		// Anti-aliased text hits the grey now and then; a legend swatch
		// alone would be 400 pixels.
		if n := countColor(img, before); n > 200 {
			t.Errorf("without a before section, bar chart %d has %d pixels of the before colour", i, n)
		}
	}
}

// The provenance says how many threads ran, and that 0 asked for the
// default.
func TestHTMLThreads(t *testing.T) {
	rep, ms := fixtureReport(t)
	for _, c := range []struct {
		threads, used int
		want          string
	}{{0, 2, "device cpu, 2 threads (the default: the usable cores within the CPU quota)</dd>"},
		{3, 3, "device cpu, 3 threads</dd>"}, {4, 0, "device cpu, threads 4</dd>"}} {
		rep.Settings.Threads, rep.Settings.ThreadsUsed = c.threads, c.used
		page, err := HTML(rep, ms)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(page, []byte(c.want)) {
			t.Errorf("threads %d, used %d: page lacks %q", c.threads, c.used, c.want)
		}
	}
}
