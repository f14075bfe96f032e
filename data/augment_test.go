package data

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

type augRef struct {
	Torch, Torchvision string
	Cases              []struct {
		Name      string
		Kind      string
		C, H, W   int
		Pad       int
		Mean, Std []float32
		Pixels    []float64
		Params    []struct {
			I, J int
			Flip bool
		}
		Outputs [][]float64
	}
}

// cropFlip with the parameters torchvision was given reproduces
// testdata/augment/reference.json (make_augment_ref.py: F.pad, F.crop,
// F.hflip, then ToTensor and Normalize as Compose runs them) exactly, float32
// bit for bit: the padding's fill after normalization, offsets, flip and
// padding wider than the image.
func TestAugmentMatchesTorchvision(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "augment", "reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref augRef
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Cases) < 4 {
		t.Fatalf("%d reference cases", len(ref.Cases))
	}
	for _, tc := range ref.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			chw := tc.C * tc.H * tc.W
			var s *Split
			var err error
			if tc.Kind == "u8" {
				pix := make([]uint8, chw)
				for k, v := range tc.Pixels {
					pix[k] = uint8(v)
				}
				s, err = NewSplitU8(tc.C, tc.H, tc.W, pix, []int32{0})
			} else {
				pix := make([]float32, chw)
				for k, v := range tc.Pixels {
					pix[k] = float32(v)
				}
				s, err = NewSplitF32(tc.C, tc.H, tc.W, pix, []int32{0})
			}
			if err != nil {
				t.Fatal(err)
			}
			test, _ := NewSplitU8(tc.C, tc.H, tc.W, make([]uint8, chw), []int32{0})
			if _, err := NewDataset("ref", s, test, Options{Mean: tc.Mean, Std: tc.Std}); err != nil {
				t.Fatal(err)
			}
			x := make([]float32, chw)
			if err := s.Batch(x, []int{0}); err != nil {
				t.Fatal(err)
			}
			fill, err := s.fill()
			if err != nil {
				t.Fatal(err)
			}
			if len(tc.Params) != len(tc.Outputs) || len(tc.Params) == 0 {
				t.Fatalf("%d parameter sets, %d outputs", len(tc.Params), len(tc.Outputs))
			}
			filled := 0
			for k, p := range tc.Params {
				got := make([]float32, chw)
				cropFlip(got, x, tc.C, tc.H, tc.W, tc.Pad, p.I, p.J, p.Flip, fill)
				want := tc.Outputs[k]
				if len(want) != chw {
					t.Fatalf("reference output %d has %d values, want %d", k, len(want), chw)
				}
				for e := range got {
					if math.Float32bits(got[e]) != math.Float32bits(float32(want[e])) {
						t.Fatalf("params %+v: value %d (c %d, y %d, x %d) = %v, torchvision %v",
							p, e, e/(tc.H*tc.W), e/tc.W%tc.H, e%tc.W, got[e], float32(want[e]))
					}
					if slices.Contains(fill, got[e]) {
						filled++
					}
				}
			}
			if tc.Pad > 0 && filled == 0 {
				t.Error("no padded value in any output: the case does not test the fill")
			}
		})
	}
}

// Apply draws, per example and in torchvision's order, the crop's top and
// left offsets uniformly in [0, 2·pad] and then the flip with probability
// ½, from the stream it is given: the same seed gives the same images.
func TestAugmenterDraws(t *testing.T) {
	const c, h, w, n = 2, 4, 5, 400
	pix := make([]uint8, n*c*h*w)
	for k := range pix {
		pix[k] = uint8(k * 7)
	}
	s, err := NewSplitU8(c, h, w, pix, make([]int32, n))
	if err != nil {
		t.Fatal(err)
	}
	test, _ := NewSplitU8(c, h, w, make([]uint8, c*h*w), []int32{0})
	if _, err := NewDataset("d", s, test, Options{Mean: []float32{0.5, 0.25}, Std: []float32{0.2, 0.3}}); err != nil {
		t.Fatal(err)
	}
	chw := c * h * w
	orig := make([]float32, n*chw)
	if err := s.Batch(orig, Range(n)); err != nil {
		t.Fatal(err)
	}
	fill, _ := s.fill()
	a := Augment{CropPad: 2, Flip: true}
	run := func(seed uint64) []float32 {
		g, err := NewAugmenter(a, rand.New(rand.NewPCG(seed, 1)))
		if err != nil || g == nil {
			t.Fatalf("NewAugmenter: %v, %v", g, err)
		}
		x := slices.Clone(orig)
		if err := g.Apply(s, x, n); err != nil {
			t.Fatal(err)
		}
		return x
	}
	x := run(9)
	if !slices.Equal(x, run(9)) {
		t.Error("one seed gave different images")
	}
	if slices.Equal(x, run(10)) {
		t.Error("two seeds gave the same images")
	}
	// Replay the draws and check every example.
	rng := rand.New(rand.NewPCG(9, 1))
	seenI, seenJ := map[int]int{}, map[int]int{}
	flips := 0
	want := make([]float32, chw)
	for k := range n {
		i, j := rng.IntN(5), rng.IntN(5)
		flip := rng.Float64() < 0.5
		seenI[i]++
		seenJ[j]++
		if flip {
			flips++
		}
		cropFlip(want, orig[k*chw:(k+1)*chw], c, h, w, 2, i, j, flip, fill)
		if !slices.Equal(want, x[k*chw:(k+1)*chw]) {
			t.Fatalf("example %d differs from crop (%d, %d) flip %v", k, i, j, flip)
		}
	}
	for v := range 5 {
		if seenI[v] < n/10 || seenJ[v] < n/10 {
			t.Errorf("offset %d drawn %d (top), %d (left) times of %d", v, seenI[v], seenJ[v], n)
		}
	}
	if flips < n/3 || flips > 2*n/3 {
		t.Errorf("%d flips of %d", flips, n)
	}
	// Off: no augmenter, Apply does nothing.
	g, err := NewAugmenter(Augment{}, rand.New(rand.NewPCG(1, 1)))
	if g != nil || err != nil {
		t.Fatalf("off: %v, %v", g, err)
	}
	y := slices.Clone(orig)
	if err := g.Apply(s, y, n); err != nil || !slices.Equal(y, orig) {
		t.Errorf("a nil augmenter changed the batch (%v)", err)
	}
	// Flip only: each image is itself or its mirror, and no crop draws.
	g, _ = NewAugmenter(Augment{Flip: true}, rand.New(rand.NewPCG(3, 1)))
	y = slices.Clone(orig)
	if err := g.Apply(s, y, n); err != nil {
		t.Fatal(err)
	}
	rng = rand.New(rand.NewPCG(3, 1))
	for k := range n {
		cropFlip(want, orig[k*chw:(k+1)*chw], c, h, w, 0, 0, 0, rng.Float64() < 0.5, fill)
		if !slices.Equal(want, y[k*chw:(k+1)*chw]) {
			t.Fatalf("flip only: example %d", k)
		}
	}
	if err := g.Apply(s, y[:chw], 2); err == nil {
		t.Error("a short buffer was accepted")
	}
}

func TestParseAugment(t *testing.T) {
	for in, want := range map[string]Augment{
		"":               {},
		"none":           {},
		"pad=4,flip":     {CropPad: 4, Flip: true},
		" flip , pad=2 ": {CropPad: 2, Flip: true},
		"pad=4":          {CropPad: 4},
		"flip":           {Flip: true},
		"pad=0":          {},
		"pad=1024,flip":  {CropPad: 1024, Flip: true},
	} {
		got, err := ParseAugment(in)
		if err != nil || got != want {
			t.Errorf("ParseAugment(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if err == nil {
			if back, err := ParseAugment(got.String()); err != nil || back != got {
				t.Errorf("%q: String %q parses to %+v, %v", in, got.String(), back, err)
			}
		}
	}
	for in, msg := range map[string]string{
		"pad":         "whole number",
		"pad=":        "whole number",
		"pad=x":       "whole number",
		"pad=2.5":     "whole number",
		"pad=-1":      "must be in [0, 1024]",
		"pad=1025":    "must be in [0, 1024]",
		"flip=1":      "takes no value",
		"flip,flip":   "given twice",
		"pad=2,pad=4": "given twice",
		"crop=4":      "unknown item",
		"pad=4;flip":  "whole number",
		"none,flip":   "cannot be combined",
		"pad=4,":      "unknown item",
		"hflip":       "unknown item",
	} {
		_, err := ParseAugment(in)
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseAugment(%q): %v; want an error saying %q", in, err, msg)
		}
	}
	if (Augment{CropPad: 4, Flip: true}).String() != "pad=4,flip" || (Augment{}).String() != "none" {
		t.Error("String")
	}
}
