package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/shapes"
)

// TestToomCook checks y = Aᵀ[(G g) ⊙ (Bᵀ d)] against the correlation
// y_i = Σ_k g_k d_{i+k} for both matrix sets the Winograd form uses.
func TestToomCook(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, mr := range [][2]int{{4, 3}, {3, 4}} {
		m, r := mr[0], mr[1]
		AT, G, BT := toomCook(m, r)
		n := m + r - 1
		for range 5 {
			g, d := make([]float64, r), make([]float64, n)
			for i := range g {
				g[i] = rng.NormFloat64()
			}
			for i := range d {
				d[i] = rng.NormFloat64()
			}
			prod := make([]float64, n)
			for j := range n {
				var gj, dj float64
				for k := range r {
					gj += G[j][k] * g[k]
				}
				for l := range n {
					dj += BT[j][l] * d[l]
				}
				prod[j] = gj * dj
			}
			for i := range m {
				var want, got float64
				for k := range r {
					want += g[k] * d[i+k]
				}
				for j := range n {
					got += AT[i][j] * prod[j]
				}
				if math.Abs(got-want) > 1e-12*(1+math.Abs(want)) {
					t.Fatalf("F(%d,%d): y[%d] = %v, want %v", m, r, i, got, want)
				}
			}
		}
	}
}

// TestConvFormChoice pins the per-shape choice on ResNet-18's layer shapes.
func TestConvFormChoice(t *testing.T) {
	b := &builder{}
	g3 := func(s, p int64) shapes.Geom {
		return shapes.Geom{K: []int64{3, 3}, S: []int64{s, s}, D: []int64{1, 1}, PB: []int64{p, p}, PE: []int64{p, p}, Group: 1}
	}
	g1s2 := shapes.Geom{K: []int64{1, 1}, S: []int64{2, 2}, D: []int64{1, 1}, PB: []int64{0, 0}, PE: []int64{0, 0}, Group: 1}
	for _, c := range []struct {
		geo      shapes.Geom
		cg, i, o int64
		weight   string
		input    string
	}{
		{g3(1, 1), 64, 28, 28, ConvWeightBatched, ConvInputFlipped},
		{g3(1, 1), 1, 28, 28, ConvWeightGemm, ConvInputFlipped},
		{g3(2, 1), 64, 28, 14, ConvWeightGemm, ConvInputTranspose},
		{g3(1, 1), 128, 14, 14, ConvWeightGemm, ConvInputFlipped},
		{g3(2, 1), 128, 14, 7, ConvWeightGemm, ConvInputTranspose},
		{g3(1, 1), 256, 7, 7, ConvWeightValid, ConvInputFlipped},
		{g3(2, 1), 256, 7, 4, ConvWeightValid, ConvInputTranspose},
		{g3(1, 1), 512, 4, 4, ConvWeightValid, ConvInputFlipped},
		{g1s2, 64, 28, 14, ConvWeightBatched, ConvInputTranspose},
		{g1s2, 256, 7, 4, ConvWeightGemm, ConvInputTranspose},
	} {
		if w := b.chooseWeightForm(c.geo, c.cg, []int64{c.i, c.i}, []int64{c.o, c.o}); w != c.weight {
			t.Errorf("C/g %d, %d×%d → %d×%d, stride %d: weight form %s, want %s", c.cg, c.i, c.i, c.o, c.o, c.geo.S[0], w, c.weight)
		}
		if in := b.chooseInputForm(c.geo); in != c.input {
			t.Errorf("stride %d: input form %s, want %s", c.geo.S[0], in, c.input)
		}
	}
	// Valid (output, offset) pairs of a 3×3 pad-1 kernel: per axis 10 of 12
	// at 4 outputs, 19 of 21 at 7, 40 of 42 at 14.
	for _, c := range []struct {
		i, o int64
		want float64
	}{{4, 4, 100.0 / 144}, {7, 7, 361.0 / 441}, {14, 14, 1600.0 / 1764}, {7, 4, 100.0 / 144}} {
		s := int64(1)
		if c.o < c.i {
			s = 2
		}
		if got := validShare(g3(s, 1), []int64{c.i, c.i}, []int64{c.o, c.o}); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("validShare %d×%d → %d×%d = %v, want %v", c.i, c.i, c.o, c.o, got, c.want)
		}
	}
}

// TestWinogradChoice pins where the per-shape choice takes the Winograd
// form on ResNet-18's layer shapes.
func TestWinogradChoice(t *testing.T) {
	g3 := func(s int64) shapes.Geom {
		return shapes.Geom{K: []int64{3, 3}, S: []int64{s, s}, D: []int64{1, 1}, PB: []int64{1, 1}, PE: []int64{1, 1}, Group: 1}
	}
	for _, c := range []struct {
		geo    shapes.Geom
		xs, ws []int64
		want   bool
	}{
		{g3(1), []int64{128, 512, 4, 4}, []int64{512, 512, 3, 3}, true},
		{g3(1), []int64{-1, 512, 4, 4}, []int64{512, 512, 3, 3}, true},
		{g3(2), []int64{128, 256, 7, 7}, []int64{512, 256, 3, 3}, false},
		{g3(1), []int64{128, 256, 7, 7}, []int64{256, 256, 3, 3}, true},
		{g3(1), []int64{128, 128, 14, 14}, []int64{128, 128, 3, 3}, false},
		{g3(1), []int64{128, 64, 28, 28}, []int64{64, 64, 3, 3}, false},
		{g3(1), []int64{128, 64, 7, 7}, []int64{64, 64, 3, 3}, false},
		{g3(1), []int64{128, 128, 7, 7}, []int64{128, 128, 3, 3}, true},
	} {
		_, got := winograd("", c.xs, c.ws, c.geo, graph.Float)
		if got != c.want {
			t.Errorf("x %v w %v stride %d: Winograd %v, want %v", c.xs, c.ws, c.geo.S[0], got, c.want)
		}
	}
	if _, ok := winograd(ConvForwardDirect, []int64{1, 512, 4, 4}, []int64{512, 512, 3, 3}, g3(1), graph.Float); ok {
		t.Error("a forced direct form took the Winograd form")
	}
}
