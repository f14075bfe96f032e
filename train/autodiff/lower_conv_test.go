package autodiff

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/graph/shapes"
)

// convForms lists every forced combination of Conv gradient formulations.
var convForms = func() []ConvGrad {
	var out []ConvGrad
	for _, in := range []string{ConvInputTranspose, ConvInputFlipped} {
		for _, w := range []string{ConvWeightTrick, ConvWeightGemm, ConvWeightBatched, ConvWeightValid} {
			out = append(out, ConvGrad{Input: in, Weight: w})
		}
	}
	return out
}()

// flippedApplies names the Conv cases of nnCases where the flipped-kernel
// input gradient applies (stride 1, pads ≤ d(k−1)).
var flippedApplies = map[string]bool{
	"Conv/k3p1": true, "Conv/asym-pads": true, "Conv/groups2": true, "Conv/1x1": true,
	"Conv/1d-dilation2": true, "Conv/one-channel": true, "Conv/offsets-in-padding": true,
}

// TestConvForms checks every Conv and ConvTranspose case of nnCases with
// every formulation of the Conv gradients against finite differences, and
// that the forced form is the one used where it applies.
func TestConvForms(t *testing.T) {
	for i, tc := range nnCases {
		if !strings.HasPrefix(tc.name, "Conv") {
			continue
		}
		for _, form := range convForms {
			t.Run(tc.name+"/"+form.Input+"+"+form.Weight, func(t *testing.T) {
				f := newFG(t, tc.dt, uint64(100+i))
				out, shape, params := tc.build(f)
				art := checkVJP(t, f, out, shape, params, Spec{ConvGrad: form}, tc.eps, tc.tol)
				wantW := form.Weight
				if wantW == ConvWeightValid && (strings.Contains(tc.name, "group") || strings.Contains(tc.name, "depthwise") ||
					tc.name == "Conv/offsets-in-padding") {
					wantW = ConvWeightGemm // the valid form is for group 1 and offsets that meet X
				}
				if !slices.Contains(art.convForms, "weight:"+wantW) {
					t.Errorf("weight form %s not used: %v", wantW, art.convForms)
				}
				if strings.HasPrefix(tc.name, "Conv/") {
					want := form.Input
					if !flippedApplies[tc.name] {
						want = ConvInputTranspose
					}
					if !slices.Contains(art.convForms, "input:"+want) {
						t.Errorf("input form %s not used: %v", want, art.convForms)
					}
				}
			})
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
