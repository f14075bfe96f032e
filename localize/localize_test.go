package localize

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/onnxrt"
	"github.com/unlearn-tool/unlearn/schema"
)

func setup(t *testing.T, file string) (*graph.Model, *data.Dataset, []int) {
	t.Helper()
	testutil.RequireORT(t)
	if err := onnxrt.Setup(onnxrt.Options{}); err != nil {
		t.Fatal(err)
	}
	m, err := onnxio.Load(testutil.Testdata(t, file))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := graph.UntieIdentityInitializers(m.Graph); err != nil {
		t.Fatal(err)
	}
	ds, err := data.Open(testutil.Testdata(t, "fashion"), data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := data.ReadIDs(testutil.Testdata(t, "demo", "forget_nonIID.txt"), ds.Train.Len())
	if err != nil {
		t.Fatal(err)
	}
	return m, ds, ids
}

// DEL scores against PyTorch's (testdata/ref/<model>_del_scores.npz, float64
// sums over the same batches of 128 in ids order). Tolerance: max abs error
// ≤ 1e-4 × the tensor's largest score; entries are sums of products that
// cancel, so small ones carry float32 noise relative to themselves.
func TestDELScoresMatchPyTorch(t *testing.T) {
	for _, c := range []struct{ file, ref string }{
		{"resnet_small_train.onnx", "resnet_small_train"},
		{"resnet_small_fused.onnx", "resnet_small_fused"},
		{"vgg_small.onnx", "vgg_small"},
		{"vit_small.onnx", "vit_small"},
		{"vit_small_op13.onnx", "vit_small_op13"},
	} {
		t.Run(c.ref, func(t *testing.T) {
			m, ds, ids := setup(t, c.file)
			ref, err := data.ReadNPZ(testutil.Testdata(t, "ref", c.ref+"_del_scores.npz"))
			if err != nil {
				t.Fatal(err)
			}
			sc, err := Scores(context.Background(), m, ds.Train, ids, "del", Options{Runtime: onnxrt.Options{Threads: 2}})
			if err != nil {
				t.Fatal(err)
			}
			// Scores of tensors whose gradient is zero in exact arithmetic
			// (attention key biases) are float32 noise; as in the
			// autodiff parity test, a tensor below 1e-5 of the model's
			// largest score is measured against 1e-2 of it.
			gmax := 0.0
			for _, w := range ref {
				for _, v := range w.Float32s() {
					gmax = max(gmax, math.Abs(float64(v)))
				}
			}
			worst := 0.0
			for name, got := range sc {
				want := ref[name]
				if want == nil {
					t.Fatalf("no reference for %s", name)
				}
				w := want.Float32s()
				var maxRef, maxDiff float64
				for i := range w {
					maxRef = max(maxRef, math.Abs(float64(w[i])))
					maxDiff = max(maxDiff, math.Abs(got[i]-float64(w[i])))
				}
				if maxRef < 1e-5*gmax {
					maxRef = 1e-2 * gmax
				}
				e := maxDiff / max(maxRef, 1e-30)
				worst = max(worst, e)
				if e > 1e-4 {
					t.Errorf("%s: max error %.3g of the largest score", name, e)
				}
			}
			t.Logf("%d tensors, worst %.3g", len(sc), worst)
		})
	}
}

func TestMasks(t *testing.T) {
	m, ds, ids := setup(t, "resnet_small_train.onnx")
	nm, _ := graph.Neurons(m.Graph)
	ctx := context.Background()
	for _, strategy := range []string{"del", "salloc", "deepest", "shallowest", "random"} {
		for _, budget := range []float64{0.05, 0.3} {
			o := Options{Strategy: strategy, Budget: budget, Seed: 7, Runtime: onnxrt.Options{Threads: 2}}
			mk, _, err := Localize(ctx, m, ds.Train, ids, o)
			if err != nil {
				t.Fatal(err)
			}
			limit := int64(math.Floor(budget * float64(nm.NumParams)))
			if mk.Selected > limit || mk.Selected == 0 {
				t.Fatalf("%s %.2f: %d selected, limit %d", strategy, budget, mk.Selected, limit)
			}
			var count int64
			for _, sel := range mk.Elements {
				for _, on := range sel {
					if on {
						count++
					}
				}
			}
			if count != mk.Selected {
				t.Fatalf("%s: Selected %d, elements %d", strategy, mk.Selected, count)
			}
			if strategy == "salloc" {
				if mk.Selected != limit {
					t.Errorf("salloc selects exactly α·p elements: %d, want %d", mk.Selected, limit)
				}
				continue
			}
			// Whole neurons only: no partial channel.
			for _, lc := range mk.Layers {
				if len(lc.Partial) > 0 {
					t.Errorf("%s: layer %s has partial neurons %v", strategy, lc.Layer, lc.Partial)
				}
			}
			// Deterministic.
			again, _, _ := Localize(ctx, m, ds.Train, ids, o)
			a, _ := json.Marshal(mk)
			b, _ := json.Marshal(again)
			if !bytes.Equal(a, b) {
				t.Errorf("%s: two runs differ", strategy)
			}
		}
	}
	// del: the prefix is maximal (the next neuron in order would not fit) and
	// a chosen conv channel carries its BN scale and shift.
	mk, sc, err := Localize(ctx, m, ds.Train, ids, Options{Strategy: "del", Budget: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	limit := int64(math.Floor(0.3 * float64(nm.NumParams)))
	if used := prefixParams(nm, sc, limit, 0); used != mk.Selected {
		t.Fatalf("selected %d, the prefix rule gives %d", mk.Selected, used)
	}
	for _, lc := range mk.Layers {
		if lc.Layer != "layer1.conv1.weight" || len(lc.Chosen) == 0 {
			continue
		}
		c := lc.Chosen[0]
		if !mk.Elements["layer1.bn1.weight"][c] || !mk.Elements["layer1.bn1.bias"][c] {
			t.Errorf("channel %d of layer1.conv1 chosen without its BN scale and shift", c)
		}
	}
	// Element ranking may split the last neuron but fills the budget.
	er, _, _ := Localize(ctx, m, ds.Train, ids, Options{Strategy: "del", Budget: 0.3, ElementRank: true})
	if er.Selected != limit {
		t.Errorf("element ranking selected %d, want %d", er.Selected, limit)
	}
	if _, _, err := Localize(ctx, m, ds.Train, ids, Options{Strategy: "del", Budget: 1.5}); err == nil {
		t.Error("budget 1.5 accepted")
	}
	if _, _, err := Localize(ctx, m, ds.Train, ids, Options{Strategy: "dartboard", Budget: 0.3}); err == nil {
		t.Error("unknown strategy accepted")
	}
}

func TestMaskJSONAndSafetensors(t *testing.T) {
	m, ds, ids := setup(t, "resnet_small_train.onnx")
	mk, sc, err := Localize(context.Background(), m, ds.Train, ids, Options{Strategy: "del", Budget: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(mk)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "mask.json")
	os.WriteFile(p, b, 0o644)
	back, err := ReadMask(p, m)
	if err != nil {
		t.Fatal(err)
	}
	if back.Selected != mk.Selected || len(back.Elements) != len(mk.Elements) {
		t.Fatalf("round trip: %d/%d selected", back.Selected, mk.Selected)
	}
	for k, sel := range mk.Elements {
		for i := range sel {
			if sel[i] != back.Elements[k][i] {
				t.Fatalf("%s[%d] differs after the round trip", k, i)
			}
		}
	}
	// A mask for another model is refused, naming the tensor.
	other, _ := onnxio.Load(testutil.Testdata(t, "vgg_small.onnx"))
	if _, err := ReadMask(p, other); err == nil {
		t.Error("mask of another model accepted")
	}
	vals, shapes := map[string][]float32{}, map[string][]int64{}
	for k, v := range sc {
		f := make([]float32, len(v))
		for i := range v {
			f[i] = float32(v[i])
		}
		vals[k] = f
		shapes[k] = m.Graph.LocalValue(k).Init.Shape
	}
	var buf bytes.Buffer
	if err := WriteSafetensors(&buf, vals, shapes); err != nil {
		t.Fatal(err)
	}
	got, gs, err := ReadSafetensors(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range vals {
		if len(got[k]) != len(v) || len(gs[k]) != len(shapes[k]) {
			t.Fatalf("%s lost in safetensors", k)
		}
		for i := range v {
			if got[k][i] != v[i] {
				t.Fatalf("%s[%d] differs", k, i)
			}
		}
	}
}

// CritMem: with one example and one zeroing, the neuron it picks is the one
// whose parameters have the largest Σ|θ·g|, which for a single example is the
// sum of DEL's per-parameter scores |θ·g| (Scores, computed independently in
// one batch); the classifier is never picked; the statistics add up; the
// mask is the union ranked by count and is deterministic.
func TestCritMem(t *testing.T) {
	m, ds, ids := setup(t, "resnet_small_train.onnx")
	nm, _ := graph.Neurons(m.Graph)
	cl, err := nm.Classifier("")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt := onnxrt.Options{Threads: 2}
	id := ids[3]
	o := Options{Strategy: "critmem", Budget: 1, CritMemMaxSteps: 1, Runtime: rt}
	counts, _, st, err := critMem(ctx, m, nm, ds.Train, []int{id}, o)
	if err != nil {
		t.Fatal(err)
	}
	if st.Examples != 1 || st.Zeroed != 1 || st.Union != 1 || st.Excluded != cl.Name {
		t.Fatalf("stats %+v", st)
	}
	sc, err := Scores(ctx, m, ds.Train, []int{id}, "del", Options{Runtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	best, bestScore := -1, -1.0
	for n, nr := range nm.Neurons {
		if nr.Layer == cl {
			continue
		}
		s := 0.0
		for _, sl := range nm.ElementsOf(nr.Layer, nr.Index) {
			for _, i := range sl.Flat {
				s += sc[sl.Param.Name][i]
			}
		}
		if s > bestScore {
			best, bestScore = n, s
		}
	}
	if counts[best] != 1 {
		got := -1
		for n, c := range counts {
			if c > 0 {
				got = n
			}
		}
		t.Fatalf("critmem zeroed neuron %d (%s/%d), the largest Σ|θ·g| is %d (%s/%d)",
			got, nm.Neurons[got].Layer.Name, nm.Neurons[got].Index, best, nm.Neurons[best].Layer.Name, nm.Neurons[best].Index)
	}

	// The full search on 12 examples.
	o = Options{Strategy: "critmem", Budget: 0.1, Seed: 3, CritMemExamples: 12, Runtime: rt}
	mk, psc, err := Localize(ctx, m, ds.Train, ids, o)
	if err != nil {
		t.Fatal(err)
	}
	s := mk.CritMem
	if s == nil || s.Examples != 12 || s.Flipped > 12 || s.Flipped == 0 || s.Zeroed < s.Union || s.Union == 0 {
		t.Fatalf("stats %+v", s)
	}
	limit := int64(math.Floor(o.Budget * float64(nm.NumParams)))
	if mk.Selected == 0 || mk.Selected > limit {
		t.Fatalf("selected %d, limit %d", mk.Selected, limit)
	}
	for _, lc := range mk.Layers {
		if lc.Layer == cl.Name {
			t.Errorf("critmem selected the classifier %s", cl.Name)
		}
		if len(lc.Partial) > 0 {
			t.Errorf("layer %s: partial neurons %v", lc.Layer, lc.Partial)
		}
		for _, c := range lc.Chosen {
			if l := nm.Layer(lc.Layer); psc[l.Members[0].Param.Name][l.Members[0].Indices(c)[0]] < 1 {
				t.Errorf("%s/%d selected but never zeroed", lc.Layer, c)
			}
		}
	}
	again, _, _ := Localize(ctx, m, ds.Train, ids, o)
	a, _ := json.Marshal(mk)
	b, _ := json.Marshal(again)
	if !bytes.Equal(a, b) {
		t.Error("two runs differ")
	}
	if !bytes.Contains(a, []byte(`"critmem":{"examples":12`)) {
		t.Errorf("mask file lacks critmem statistics: %.200s", a)
	}
}

// TestDELMaskMatchesNumPy feeds PyTorch's DEL scores to the selection rule
// and compares the chosen neurons with testdata/ref/make_masks.py's NumPy
// implementation (neurons from the PyTorch module structure, not the ONNX
// graph), for several budgets and h.
func TestDELMaskMatchesNumPy(t *testing.T) {
	b, err := os.ReadFile(testutil.Testdata(t, "ref", "del_masks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string][]struct {
		Budget   float64          `json:"budget"`
		TopK     int              `json:"topk"`
		Limit    int64            `json:"limit"`
		Selected int64            `json:"selected"`
		Layers   map[string][]int `json:"layers"`
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	for model, cases := range want {
		t.Run(model, func(t *testing.T) {
			m, err := onnxio.Load(testutil.Testdata(t, model+".onnx"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := graph.UntieIdentityInitializers(m.Graph); err != nil {
				t.Fatal(err)
			}
			nm, err := graph.Neurons(m.Graph)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := data.ReadNPZ(testutil.Testdata(t, "ref", model+"_del_scores.npz"))
			if err != nil {
				t.Fatal(err)
			}
			sc := map[string][]float64{}
			for k, v := range ref {
				sc[k] = v.Float64s()
			}
			for _, c := range cases {
				limit := int64(math.Floor(c.Budget * float64(nm.NumParams)))
				if limit != c.Limit {
					t.Fatalf("budget %g: limit %d, NumPy %d (parameter counts differ)", c.Budget, limit, c.Limit)
				}
				mk := delMask(nm, sc, limit, Options{Strategy: "del", Budget: c.Budget, TopK: c.TopK, TopFrac: 0.1})
				got := map[string][]int{}
				for _, lc := range mk.Layers {
					if len(lc.Partial) > 0 {
						t.Fatalf("partial neurons in %s", lc.Layer)
					}
					if len(lc.Chosen) > 0 {
						got[lc.Layer] = lc.Chosen
					}
				}
				gb, _ := json.Marshal(got)
				wb, _ := json.Marshal(c.Layers)
				if mk.Selected != c.Selected || !bytes.Equal(gb, wb) {
					t.Errorf("budget %g topk %d: selected %d, NumPy %d\n got %s\nwant %s", c.Budget, c.TopK, mk.Selected, c.Selected, gb, wb)
				}
			}
		})
	}
}

// TestReadMaskRefusesBadFiles: a mask file that lists a tensor twice, has a
// run whose end overflows int64, or records a budget or strategy that
// cannot be is refused with the file and the culprit named (each used to be
// accepted).
func TestReadMaskRefusesBadFiles(t *testing.T) {
	m, err := onnxio.Load(testutil.Testdata(t, "resnet_small_train.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	const w = "conv1.weight" // 144 elements
	doc := func(budget float64, strategy string, tensors ...TensorMask) []byte {
		b, err := json.Marshal(MaskJSON{Schema: "unlearn.mask/v1", Strategy: strategy, Budget: budget, Layers: []schema.LayerChoice{}, Tensors: tensors})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	run := func(start, n int64) TensorMask {
		return TensorMask{Name: w, Elements: 144, Runs: [][2]int64{{start, n}}}
	}
	for _, c := range []struct {
		name string
		file []byte
		want []string
	}{
		{"duplicate tensor", doc(0.1, "del", run(0, 4), run(8, 4)), []string{w, "listed twice"}},
		{"overflowing run", doc(0.1, "del", run(5, math.MaxInt64)), []string{w, "outside [0, 144)"}},
		{"negative budget", doc(-7, "del", run(0, 4)), []string{"budget -7"}},
		{"unknown strategy", doc(0.1, "magic", run(0, 4)), []string{`strategy "magic"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "mask.json")
			if err := os.WriteFile(p, c.file, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadMask(p, m)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, s := range append(c.want, p) {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not name %q", err, s)
				}
			}
		})
	}
	// The good form of the same file is read.
	p := filepath.Join(t.TempDir(), "mask.json")
	os.WriteFile(p, doc(0.1, "del", run(0, 4), TensorMask{Name: "fc.weight", Elements: 640, Runs: [][2]int64{{0, 640}}}), 0o644)
	if mk, err := ReadMask(p, m); err != nil || mk.Selected != 644 {
		t.Errorf("good mask: %v, %v", mk, err)
	}
}

// The depth floor: del never picks a layer shallower than ⌈floor·max
// depth⌉, takes the same ranked prefix of the eligible neurons as without
// the floor, records the floor in the mask and its file, and refuses a
// floor outside [0, 1).
func TestDepthFloor(t *testing.T) {
	m, ds, ids := setup(t, "resnet_small_train.onnx")
	nm, _ := graph.Neurons(m.Graph)
	ctx := context.Background()
	plain, sc, err := Localize(ctx, m, ds.Train, ids, Options{Strategy: "del", Budget: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	shallow := false
	for _, lc := range plain.Layers {
		for _, l := range nm.Layers {
			if l.Name == lc.Layer && l.Depth < 3 {
				shallow = true
			}
		}
	}
	if !shallow {
		t.Fatal("without a floor the demo's mask has no layer below depth 3; the test proves nothing")
	}
	mk, _, err := Localize(ctx, m, ds.Train, ids, Options{Strategy: "del", Budget: 0.1, DepthFloor: 0.4})
	if err != nil {
		t.Fatal(err)
	}
	if mk.MinDepth != 3 || mk.DepthFloor != 0.4 {
		t.Errorf("mask min depth %d, floor %g", mk.MinDepth, mk.DepthFloor)
	}
	depth := map[string]int{}
	for _, l := range nm.Layers {
		depth[l.Name] = l.Depth
	}
	for _, lc := range mk.Layers {
		if depth[lc.Layer] < 3 {
			t.Errorf("layer %s at depth %d chosen under floor 0.4 (min depth 3)", lc.Layer, depth[lc.Layer])
		}
	}
	// The same prefix rule over the eligible neurons.
	if used := prefixParams(nm, sc, int64(math.Floor(0.1*float64(nm.NumParams))), 3); used != mk.Selected {
		t.Errorf("selected %d, the prefix rule over eligible layers gives %d", mk.Selected, used)
	}
	b, err := json.Marshal(mk)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"depth_floor":0.4,"min_depth":3`) {
		t.Errorf("mask file without the floor: %.200s", b)
	}
	path := filepath.Join(t.TempDir(), "mask.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := ReadMask(path, m)
	if err != nil {
		t.Fatal(err)
	}
	if back.MinDepth != 3 || back.DepthFloor != 0.4 || back.Selected != mk.Selected {
		t.Errorf("read back: floor %g, min depth %d, selected %d", back.DepthFloor, back.MinDepth, back.Selected)
	}
	for _, f := range []float64{-0.1, 1, math.NaN()} {
		if _, _, err := Localize(ctx, m, ds.Train, ids, Options{Strategy: "del", Budget: 0.1, DepthFloor: f}); err == nil {
			t.Errorf("depth floor %v accepted", f)
		}
	}
}

// prefixParams is del's rule recomputed from the scores: the parameters of
// the longest prefix of the neurons of layers at depth minDepth or more,
// ranked by score, that fits in limit.
func prefixParams(nm *graph.NeuronMap, sc map[string][]float64, limit int64, minDepth int) int64 {
	var order []ranked
	for _, l := range nm.Layers {
		if l.Depth < minDepth {
			continue
		}
		for c := 0; c < l.Channels; c++ {
			order = append(order, ranked{l, c, neuronScore(nm, l, c, sc, Options{TopFrac: 0.1})})
		}
	}
	sortRanked(order)
	var used int64
	for _, r := range order {
		n := int64(nm.Neuron(r.layer, r.c).NumParams)
		if used+n > limit {
			break
		}
		used += n
	}
	return used
}

// TestDELMaskWidens: DELMask cuts the ranking of an earlier localization at
// another budget: at each budget it gives what Localize gives there, and a
// larger budget's mask holds every element of a smaller one's (the
// widening of unlearn relies on both).
func TestDELMaskWidens(t *testing.T) {
	m, ds, ids := setup(t, "resnet_small_train.onnx")
	nm, _ := graph.Neurons(m.Graph)
	ctx := context.Background()
	o := Options{Strategy: "del", Budget: 0.1, DepthFloor: 0.4, Neurons: nm}
	first, sc, err := Localize(ctx, m, ds.Train, ids, o)
	if err != nil {
		t.Fatal(err)
	}
	prev := first
	for _, b := range []float64{0.3, 0.5} {
		o.Budget = b
		wide, err := DELMask(nm, sc, o)
		if err != nil {
			t.Fatal(err)
		}
		direct, _, err := Localize(ctx, m, ds.Train, ids, o)
		if err != nil {
			t.Fatal(err)
		}
		if wide.Selected != direct.Selected || wide.Budget != b || wide.MinDepth != direct.MinDepth {
			t.Errorf("budget %g: DELMask selected %d (budget %g, min depth %d), Localize %d (min depth %d)",
				b, wide.Selected, wide.Budget, wide.MinDepth, direct.Selected, direct.MinDepth)
		}
		if !(wide.Selected > prev.Selected) {
			t.Errorf("budget %g selected %d, no more than the smaller budget's %d", b, wide.Selected, prev.Selected)
		}
		for name, sel := range prev.Elements {
			for i, on := range sel {
				if on && !wide.Elements[name][i] {
					t.Fatalf("budget %g drops %s[%d], which budget %g selected", b, name, i, prev.Budget)
				}
			}
		}
		prev = wide
	}
	if _, err := DELMask(nm, sc, Options{Budget: 1.5}); err == nil {
		t.Error("budget 1.5 accepted")
	}
}
