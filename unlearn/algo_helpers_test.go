package unlearn

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/infer"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/onnxrt"
)

// testRuntime is the runtime every test uses: a fixed thread count makes
// ONNX Runtime's results reproducible bit for bit.
var testRuntime = onnxrt.Options{Threads: 2}

func loadModel(t testing.TB, parts ...string) *graph.Model {
	t.Helper()
	m, err := onnxio.Load(testutil.Testdata(t, parts...))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := graph.UntieIdentityInitializers(m.Graph); err != nil {
		t.Fatal(err)
	}
	return m
}

// demo is the bundled demo: Fashion-MNIST subset, non-IID forget set.
type demo struct {
	ds             *data.Dataset
	forget, retain []int
}

func loadDemo(t testing.TB) demo {
	t.Helper()
	ds, f, r := testutil.Demo(t)
	return demo{ds: ds, forget: f, retain: r}
}

// every returns every k-th element of idx.
func every(idx []int, k int) []int {
	var out []int
	for i := 0; i < len(idx); i += k {
		out = append(out, idx[i])
	}
	return out
}

type accs struct{ forget, retain, test float64 }

func accuracy(t testing.TB, m *graph.Model, split *data.Split, idx []int) float64 {
	t.Helper()
	c, err := infer.NewClassifier(m, testRuntime, 256)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if idx == nil {
		idx = make([]int, split.Len())
		for i := range idx {
			idx[i] = i
		}
	}
	logits, err := c.Logits(split, idx, nil)
	if err != nil {
		t.Fatal(err)
	}
	pred := infer.Argmax(logits, c.Classes())
	labels := make([]int, len(idx))
	for k, i := range idx {
		labels[k] = split.Label(i)
	}
	return infer.Accuracy(pred, labels)
}

func measure(t testing.TB, m *graph.Model, d demo) accs {
	return accs{
		forget: accuracy(t, m, d.ds.Train, d.forget),
		retain: accuracy(t, m, d.ds.Train, d.retain),
		test:   accuracy(t, m, d.ds.Test, nil),
	}
}

// params returns a copy of every trainable parameter's values.
func paramValues(t testing.TB, m *graph.Model) map[string][]float32 {
	t.Helper()
	nm, err := graph.Neurons(m.Graph)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]float32{}
	for _, p := range nm.Params {
		v, err := p.Value.Init.Float32s()
		if err != nil {
			t.Fatal(err)
		}
		out[p.Value.Name] = append([]float32(nil), v...)
	}
	return out
}

// randomMask selects each element of every parameter with probability frac.
func randomMask(t testing.TB, m *graph.Model, frac float64, seed uint64) map[string][]bool {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := map[string][]bool{}
	vals := paramValues(t, m)
	names := make([]string, 0, len(vals))
	for n := range vals {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		mk := make([]bool, len(vals[n]))
		for i := range mk {
			mk[i] = rng.Float64() < frac
		}
		out[n] = mk
	}
	return out
}

// delMask builds a DEL mask (paper's whole-channel rule, h = max(1,
// ⌊0.1·C_out⌋)) for budget from the committed PyTorch DEL scores of the
// non-IID forget set. A test helper only: localize/ owns the real thing.
func delMask(t testing.TB, m *graph.Model, scoresFile string, budget float64) map[string][]bool {
	t.Helper()
	sc, err := data.ReadNPZ(testutil.Testdata(t, "ref", scoresFile))
	if err != nil {
		t.Fatal(err)
	}
	nm, err := graph.Neurons(m.Graph)
	if err != nil {
		t.Fatal(err)
	}
	type neuron struct {
		l     *graph.Layer
		c     int
		score float64
		size  int
	}
	var ns []neuron
	for _, l := range nm.Layers {
		h := max(1, int(math.Floor(0.1*float64(l.Channels))))
		for c := 0; c < l.Channels; c++ {
			var s []float64
			size := 0
			for _, mb := range l.Members {
				a := sc[mb.Param.Name]
				if a == nil {
					t.Fatalf("no scores for %s", mb.Param.Name)
				}
				v := a.Float32s()
				for _, i := range mb.Indices(c) {
					s = append(s, float64(v[i]))
					size++
				}
			}
			sort.Sort(sort.Reverse(sort.Float64Slice(s)))
			sum := 0.0
			for _, x := range s[:min(h, len(s))] {
				sum += x
			}
			ns = append(ns, neuron{l, c, sum / float64(min(h, len(s))), size})
		}
	}
	sort.SliceStable(ns, func(i, j int) bool { return ns[i].score > ns[j].score })
	limit := int(budget * float64(nm.NumParams))
	mask := map[string][]bool{}
	used := 0
	for _, n := range ns {
		if used+n.size > limit {
			break
		}
		used += n.size
		for _, mb := range n.l.Members {
			name := mb.Param.Name
			if mask[name] == nil {
				mask[name] = make([]bool, mb.Param.Init.Len())
			}
			for _, i := range mb.Indices(n.c) {
				mask[name][i] = true
			}
		}
	}
	return mask
}
