package data

import (
	"fmt"
	"github.com/unlearn-tool/unlearn/internal/setting"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Augment is a training-time augmentation with torchvision's semantics, the
// usual CIFAR recipe
//
//	Compose([RandomCrop((H, W), padding=CropPad), RandomHorizontalFlip(),
//	         ToTensor(), Normalize(mean, std)])
//
// RandomCrop (fill=0, padding_mode="constant") pads CropPad zero pixels on
// every side and crops an H×W window whose top-left corner (i, j) is drawn
// uniformly from [0, 2·CropPad]² (torch.randint(0, h − th + 1) for i, then
// for j); RandomHorizontalFlip reverses the width axis when torch.rand(1) <
// 0.5. The zero the padding adds is a zero pixel before normalization, so
// after Normalize it is (0 − mean[c]) / std[c]: that is the fill here, since
// Split.Batch has already normalized. Cropping and flipping only move
// pixels, so applying them after normalization gives the same values as
// torchvision's order.
//
// The zero Augment is off.
type Augment struct {
	// CropPad is RandomCrop's padding in pixels; 0 means no crop.
	CropPad int
	// Flip enables RandomHorizontalFlip(p=0.5).
	Flip bool
}

// MaxCropPad bounds Augment.CropPad; larger values are refused as typos.
const MaxCropPad = 1024

// On reports whether a changes anything.
func (a Augment) On() bool { return a.CropPad > 0 || a.Flip }

// String is a's flag syntax: "pad=4,flip", "pad=4", "flip", or "none".
func (a Augment) String() string {
	var parts []string
	if a.CropPad > 0 {
		parts = append(parts, "pad="+strconv.Itoa(a.CropPad))
	}
	if a.Flip {
		parts = append(parts, "flip")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}

// Torchvision names a as the torchvision transforms it matches, e.g.
// "RandomCrop(size, padding=4), RandomHorizontalFlip()"; "" when off.
func (a Augment) Torchvision() string {
	var parts []string
	if a.CropPad > 0 {
		parts = append(parts, fmt.Sprintf("RandomCrop(size, padding=%d)", a.CropPad))
	}
	if a.Flip {
		parts = append(parts, "RandomHorizontalFlip()")
	}
	return strings.Join(parts, ", ")
}

// Check refuses a negative or implausibly large CropPad.
func (a Augment) Check() error {
	if a.CropPad < 0 || a.CropPad > MaxCropPad {
		return fmt.Errorf("augment: pad=%d: must be in [0, %d]", a.CropPad, MaxCropPad)
	}
	return nil
}

// ParseAugment reads the --augment syntax: comma-separated items, each
// CheckImage refuses a crop padding larger than half the images' smaller
// side (pad=4 on 32×32 is CIFAR's): beyond it a crop can keep less than a
// quarter of the image and the rest is padding, which destroys a model
// instead of augmenting its data.
func (a Augment) CheckImage(h, w int) error {
	if m := min(h, w) / 2; a.CropPad > m {
		return setting.Errorf("augment", " pad=%d on %d×%d images: at most %d (half the smaller side); "+
			"a crop could keep less than a quarter of the image", a.CropPad, h, w, m)
	}
	return nil
}

// "pad=N" (RandomCrop with padding N ≥ 0, N ≤ MaxCropPad) or "flip"
// (RandomHorizontalFlip). "" and "none" are off. An item may appear once.
func ParseAugment(s string) (Augment, error) {
	var a Augment
	s = strings.TrimSpace(s)
	if s == "" || s == "none" {
		return a, nil
	}
	seen := map[string]bool{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		key, val, hasVal := strings.Cut(item, "=")
		key = strings.TrimSpace(key)
		if seen[key] {
			return Augment{}, setting.Errorf("augment", " %q: %s given twice", s, key)
		}
		seen[key] = true
		switch key {
		case "pad":
			n, err := strconv.Atoi(strings.TrimSpace(val))
			if !hasVal || err != nil {
				return Augment{}, setting.Errorf("augment", " %q: pad needs a whole number of pixels, as in pad=4", s)
			}
			a.CropPad = n
		case "flip":
			if hasVal {
				return Augment{}, setting.Errorf("augment", " %q: flip takes no value (write flip, or leave it out)", s)
			}
			a.Flip = true
		case "none":
			return Augment{}, setting.Errorf("augment", " %q: none cannot be combined with other items", s)
		default:
			return Augment{}, setting.Errorf("augment", " %q: unknown item %q (want pad=N and/or flip, e.g. pad=4,flip)",
				s, item)
		}
	}
	if err := a.Check(); err != nil {
		return Augment{}, err
	}
	return a, nil
}

// Augmenter applies an Augment to training batches, drawing its random
// choices from its own stream so that example order and every other use of
// randomness are the same with augmentation on or off.
type Augmenter struct {
	a   Augment
	rng *rand.Rand
	buf []float32
}

// NewAugmenter returns an Augmenter for a drawing from rng, or nil when a
// is off (a nil *Augmenter's Apply does nothing and draws nothing).
func NewAugmenter(a Augment, rng *rand.Rand) (*Augmenter, error) {
	if err := a.Check(); err != nil {
		return nil, err
	}
	if !a.On() {
		return nil, nil
	}
	if rng == nil {
		return nil, fmt.Errorf("augment: no random stream")
	}
	return &Augmenter{a: a, rng: rng}, nil
}

// Apply augments the first n examples of x in place; x holds examples of s
// as Split.Batch wrote them (C×H×W each, normalized with s's Dataset). Each
// example draws, in torchvision's order, the crop's top then left offset
// (when CropPad > 0) and then the flip (when Flip).
func (g *Augmenter) Apply(s *Split, x []float32, n int) error {
	if g == nil || n <= 0 {
		return nil
	}
	c, h, w := s.c, s.h, s.w
	chw := c * h * w
	if len(x) < n*chw {
		return fmt.Errorf("data: augment: %d values for %d examples of %d×%d×%d", len(x), n, c, h, w)
	}
	fill, err := s.fill()
	if err != nil {
		return err
	}
	if cap(g.buf) < chw {
		g.buf = make([]float32, chw)
	}
	src := g.buf[:chw]
	p := g.a.CropPad
	for k := range n {
		i, j := p, p // no crop: the window sits on the original image
		if p > 0 {
			i = g.rng.IntN(2*p + 1)
			j = g.rng.IntN(2*p + 1)
		}
		flip := g.a.Flip && g.rng.Float64() < 0.5
		img := x[k*chw : (k+1)*chw]
		copy(src, img)
		cropFlip(img, src, c, h, w, p, i, j, flip, fill)
	}
	return nil
}

// fill is the value of a zero pixel after s's normalization, per channel:
// (0 − mean[c]) / std[c], computed in float32 as Batch and torchvision's
// Normalize do; 0 without normalization.
func (s *Split) fill() ([]float32, error) {
	out := make([]float32, s.c)
	if s.ds == nil {
		return out, nil
	}
	mean, std, err := normParams(s.ds.Mean, s.ds.Std, s.c)
	if err != nil || mean == nil {
		return out, err
	}
	for c := range out {
		var zero float32
		out[c] = (zero - mean[c]) / std[c]
	}
	return out, nil
}

// cropFlip writes into dst (C×H×W) the image src (C×H×W) padded by pad
// pixels of fill[c] on every side (torchvision F.pad(img, pad, fill,
// "constant")), cropped to the H×W window at top i, left j of the padded
// image (F.crop(img, i, j, H, W)) and, with flip, mirrored along the width
// (F.hflip): dst[c][y][x] = padded[c][y+i][x'+j] with x' = W−1−x when
// flipped, else x. dst and src must not overlap.
func cropFlip(dst, src []float32, c, h, w, pad, i, j int, flip bool, fill []float32) {
	hw := h * w
	for ch := range c {
		f := fill[ch]
		in := src[ch*hw : (ch+1)*hw]
		out := dst[ch*hw : (ch+1)*hw]
		for y := range h {
			sy := y + i - pad
			row := out[y*w : (y+1)*w]
			if sy < 0 || sy >= h {
				for x := range row {
					row[x] = f
				}
				continue
			}
			srow := in[sy*w : (sy+1)*w]
			for x := range row {
				xx := x
				if flip {
					xx = w - 1 - x
				}
				sx := xx + j - pad
				if sx < 0 || sx >= w {
					row[x] = f
				} else {
					row[x] = srow[sx]
				}
			}
		}
	}
}
