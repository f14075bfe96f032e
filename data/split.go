package data

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Split holds the examples of one split (train or test): N images of shape
// C×H×W stored channel-first, with one int32 label each. Pixels are stored
// compactly: as uint8 when the source is 8-bit, as float32 otherwise.
//
// A Split made by Subset shares pixel and label storage with its parent and
// remembers, for every example, its id in the original split (see ID).
type Split struct {
	c, h, w int
	u8      []uint8   // N*C*H*W, or nil
	f32     []float32 // N*C*H*W, or nil
	labels  []int32   // one per stored example
	rows    []int     // storage row of example i; nil means the identity
	ds      *Dataset  // owner, for Mean/Std; nil means no normalization
	src     string    // file the labels came from, for error messages
	files   []string  // per stored row, the image file relative to the split folder; nil when the format has none
}

// NewSplitU8 makes a Split over 8-bit pixels laid out N×C×H×W, N = len(labels).
// The slices are used, not copied.
func NewSplitU8(c, h, w int, pix []uint8, labels []int32) (*Split, error) {
	if err := checkSplitDims(c, h, w, len(pix), len(labels)); err != nil {
		return nil, err
	}
	return &Split{c: c, h: h, w: w, u8: pix, labels: labels}, nil
}

// NewSplitF32 makes a Split over float32 pixels laid out N×C×H×W,
// N = len(labels). The values are used as they are (no /255 scaling).
// The slices are used, not copied.
func NewSplitF32(c, h, w int, pix []float32, labels []int32) (*Split, error) {
	if err := checkSplitDims(c, h, w, len(pix), len(labels)); err != nil {
		return nil, err
	}
	return &Split{c: c, h: h, w: w, f32: pix, labels: labels}, nil
}

func checkSplitDims(c, h, w, npix, nlabels int) error {
	if c < 1 || h < 1 || w < 1 {
		return fmt.Errorf("data: invalid image shape %d×%d×%d", c, h, w)
	}
	if npix != nlabels*c*h*w {
		return fmt.Errorf("data: %d pixel values for %d examples of %d×%d×%d (want %d)",
			npix, nlabels, c, h, w, nlabels*c*h*w)
	}
	return nil
}

// Len returns the number of examples.
func (s *Split) Len() int {
	if s.rows != nil {
		return len(s.rows)
	}
	return len(s.labels)
}

// Shape returns [C, H, W].
func (s *Split) Shape() [3]int { return [3]int{s.c, s.h, s.w} }

// Is8Bit reports whether pixels are stored as uint8 (and scaled by 1/255 in
// Batch) rather than float32.
func (s *Split) Is8Bit() bool { return s.u8 != nil || s.f32 == nil }

func (s *Split) row(i int) int {
	if s.rows != nil {
		return s.rows[i]
	}
	return i
}

// Label returns the label of example i. It panics if i is out of range.
func (s *Split) Label(i int) int { return int(s.labels[s.row(i)]) }

// Labels returns the labels of the examples idx, or of every example when
// idx is nil. It panics if an index is out of range.
func (s *Split) Labels(idx []int) []int {
	if idx == nil {
		idx = Range(s.Len())
	}
	out := make([]int, len(idx))
	for k, i := range idx {
		out[k] = s.Label(i)
	}
	return out
}

// Range returns the indices 0, 1, …, n−1.
func Range(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// ID returns the id of example i in the split it was originally read as
// (the index an ids file refers to). For a Split that is not a subset,
// ID(i) == i. It panics if i is out of range.
func (s *Split) ID(i int) int { return s.row(i) }

// HasFiles reports whether the examples were read from files of their own
// (image folders), which File names.
func (s *Split) HasFiles() bool { return s.files != nil }

// File returns the file example i was read from, relative to its split's
// folder with '/' between folders ("cat/img_001.png"), or "" when the
// format keeps all examples in one file (IDX, CIFAR, SVHN, npz, memory).
// It panics if i is out of range.
func (s *Split) File(i int) string {
	r := s.row(i)
	if s.files == nil {
		if r < 0 || r >= len(s.labels) {
			panic(fmt.Sprintf("data: File index %d out of range [0, %d)", i, s.Len()))
		}
		return ""
	}
	return s.files[r]
}

// Subset returns the examples idx (indices into s, in that order) as a new
// Split sharing s's storage; ID on the result still reports original ids.
// It panics if an index is out of range, like slice indexing; ids from
// ParseIDs/ReadIDs are already range-checked.
func (s *Split) Subset(idx []int) *Split {
	n := s.Len()
	rows := make([]int, len(idx))
	for k, i := range idx {
		if i < 0 || i >= n {
			panic(fmt.Sprintf("data: Subset index %d out of range [0, %d)", i, n))
		}
		rows[k] = s.row(i)
	}
	t := *s
	t.rows = rows
	return &t
}

// Batch writes the examples idx (indices into s) into dst as float32 N×C×H×W,
// len(idx) examples one after another. 8-bit pixels are scaled to [0,1]
// (v/255); float pixels are used as stored. Then, if the owning Dataset has
// Mean/Std, every channel c becomes (x - Mean[c]) / Std[c] (a single value
// applies to all channels). dst must hold at least len(idx)*C*H*W values;
// only that prefix is written.
func (s *Split) Batch(dst []float32, idx []int) error {
	chw := s.c * s.h * s.w
	if len(dst) < len(idx)*chw {
		return fmt.Errorf("data: Batch: dst holds %d values, %d examples of %d×%d×%d need %d",
			len(dst), len(idx), s.c, s.h, s.w, len(idx)*chw)
	}
	var mean, std []float32
	if s.ds != nil {
		var err error
		if mean, std, err = normParams(s.ds.Mean, s.ds.Std, s.c); err != nil {
			return err
		}
	}
	n := s.Len()
	hw := s.h * s.w
	var lut [][256]float32
	if s.f32 == nil {
		lut = make([][256]float32, s.c)
		for c := range s.c {
			for v := range 256 {
				x := float32(v) / 255
				if mean != nil {
					x = (x - mean[c]) / std[c]
				}
				lut[c][v] = x
			}
		}
	}
	for k, i := range idx {
		if i < 0 || i >= n {
			return fmt.Errorf("data: Batch: index %d out of range [0, %d)", i, n)
		}
		r := s.row(i)
		out := dst[k*chw : (k+1)*chw]
		if s.f32 == nil {
			src := s.u8[r*chw : (r+1)*chw]
			for c := range s.c {
				l := &lut[c]
				o := out[c*hw : (c+1)*hw]
				for j, v := range src[c*hw : (c+1)*hw] {
					o[j] = l[v]
				}
			}
			continue
		}
		src := s.f32[r*chw : (r+1)*chw]
		if mean == nil {
			copy(out, src)
			continue
		}
		for c := range s.c {
			m, sd := mean[c], std[c]
			o := out[c*hw : (c+1)*hw]
			for j, v := range src[c*hw : (c+1)*hw] {
				o[j] = (v - m) / sd
			}
		}
	}
	return nil
}

// BatchUnnormalized is Batch without the owning Dataset's Mean/Std: 8-bit
// pixels scaled to [0,1], float pixels as stored. The preprocessing check
// (eval.Suite.CheckPreprocessing) tries other normalizations on these.
func (s *Split) BatchUnnormalized(dst []float32, idx []int) error {
	t := *s
	t.ds = nil
	return t.Batch(dst, idx)
}

// BatchLabels writes the labels of the examples idx into dst (int64, as ONNX
// classifiers' label inputs usually are). dst must hold len(idx) values.
func (s *Split) BatchLabels(dst []int64, idx []int) error {
	if len(dst) < len(idx) {
		return fmt.Errorf("data: BatchLabels: dst holds %d values, need %d", len(dst), len(idx))
	}
	n := s.Len()
	for k, i := range idx {
		if i < 0 || i >= n {
			return fmt.Errorf("data: BatchLabels: index %d out of range [0, %d)", i, n)
		}
		dst[k] = int64(s.labels[s.row(i)])
	}
	return nil
}

// normParams expands mean/std (each empty, one value, or one per channel) to
// one value per channel; both empty gives nil, nil.
func normParams(mean, std []float32, c int) ([]float32, []float32, error) {
	if len(mean) == 0 && len(std) == 0 {
		return nil, nil, nil
	}
	expand := func(what string, v []float32, def float32) ([]float32, error) {
		out := make([]float32, c)
		switch len(v) {
		case 0:
			for i := range out {
				out[i] = def
			}
		case 1:
			for i := range out {
				out[i] = v[0]
			}
		case c:
			copy(out, v)
		default:
			if c == 1 {
				return nil, fmt.Errorf("data: %s has %d values; the images have 1 channel (give 1 value)", what, len(v))
			}
			return nil, fmt.Errorf("data: %s has %d values; the images have %d channels (give 1 or %d)", what, len(v), c, c)
		}
		return out, nil
	}
	m, err := expand("mean", mean, 0)
	if err != nil {
		return nil, nil, err
	}
	s, err := expand("std", std, 1)
	if err != nil {
		return nil, nil, err
	}
	for i, v := range s {
		if !(v > 0) || v != v {
			return nil, nil, fmt.Errorf("data: std[%d] = %v; must be > 0", i, v)
		}
		// Pixels lie in [0, 1]: a normalized pixel as large as
		// MaxNormalized means a mean or std off by orders of magnitude
		// (1e-45 for 0.25), which would only surface later as NaN logits.
		if r := max(math.Abs(float64(m[i])), math.Abs(1-float64(m[i]))) / float64(v); !(r <= MaxNormalized) {
			return nil, nil, fmt.Errorf("data: mean[%d] = %v, std[%d] = %v make normalized pixels as large as %.3g "+
				"(at most %g); pixels are scaled to [0, 1] before the mean is subtracted", i, m[i], i, v, r, float64(MaxNormalized))
		}
	}
	return m, s, nil
}

// MaxNormalized bounds |pixel − mean| / std over pixels in [0, 1].
const MaxNormalized = 1e4

// Dataset is a labelled image dataset with a training and a test split of
// the same image shape.
type Dataset struct {
	Name       string // base name of Path, without extension for files
	Format     string // one of the Format* constants
	Path       string
	Train      *Split
	Test       *Split
	Classes    int      // labels lie in [0, Classes)
	ClassNames []string // nil when the source has none; else len == Classes
	Mean, Std  []float32
}

// Dataset formats, as reported in Dataset.Format.
const (
	FormatIDX         = "idx"
	FormatCIFAR10     = "cifar10"
	FormatCIFAR100    = "cifar100"
	FormatSVHN        = "svhn-mat"
	FormatImageFolder = "imagefolder"
	FormatNPZ         = "npz"
	FormatMemory      = "memory"
)

// Options adjust how Open reads a dataset.
type Options struct {
	// Mean and Std normalize every channel after [0,1] scaling; each is empty,
	// one value for all channels, or one value per channel.
	Mean, Std []float32
	// Classes, when > 0, is the number of classes; a label outside
	// [0, Classes) is an error. When 0 the format's own count is used
	// (CIFAR-10: 10, CIFAR-100: 100, SVHN: 10, image folders: the number of
	// class folders) or, for IDX and npz, the largest label + 1.
	Classes int
}

// NewDataset assembles a Dataset from splits built in memory (Format
// "memory"), checking labels and options as Open does.
func NewDataset(name string, train, test *Split, opts Options) (*Dataset, error) {
	if train == nil || test == nil {
		return nil, errors.New("data: NewDataset needs both splits")
	}
	d := &Dataset{Name: name, Format: FormatMemory, Train: train, Test: test}
	if err := d.finish(opts, 0); err != nil {
		return nil, err
	}
	return d, nil
}

// finish validates shapes, labels and normalization, sets Classes, Mean and
// Std, and binds the splits to d. native is the format's class count (0 when
// the format has none).
func (d *Dataset) finish(opts Options, native int) error {
	if d.Train.Shape() != d.Test.Shape() {
		tr, te := d.Train.Shape(), d.Test.Shape()
		return fileErr(d.where(), "training images are %s but test images are %s",
			shapeString(tr[:]), shapeString(te[:]))
	}
	classes := native
	if opts.Classes > 0 {
		classes = opts.Classes
	}
	if classes == 0 {
		for _, s := range []*Split{d.Train, d.Test} {
			for _, l := range s.labels {
				if int(l)+1 > classes {
					classes = int(l) + 1
				}
			}
		}
	}
	if err := d.CheckLabels(classes); err != nil {
		return err
	}
	if d.ClassNames != nil && len(d.ClassNames) != classes {
		return fileErr(d.where(), "%d class names for %d classes", len(d.ClassNames), classes)
	}
	d.Classes = classes
	if _, _, err := normParams(opts.Mean, opts.Std, d.Train.c); err != nil {
		return err
	}
	d.Mean = append([]float32(nil), opts.Mean...)
	d.Std = append([]float32(nil), opts.Std...)
	if len(d.Mean) == 0 {
		d.Mean = nil
	}
	if len(d.Std) == 0 {
		d.Std = nil
	}
	d.Train.ds = d
	d.Test.ds = d
	return nil
}

// CheckLabels returns an error naming the first example, training split
// first, whose label is outside [0, classes), and the file it comes from.
func (d *Dataset) CheckLabels(classes int) error {
	for _, sp := range []struct {
		name string
		s    *Split
	}{{"training", d.Train}, {"test", d.Test}} {
		for i := range sp.s.Len() {
			if l := sp.s.Label(i); l < 0 || l >= classes {
				src := sp.s.src
				if src == "" {
					src = d.where()
				}
				return fileErr(src, "%s example %d has label %d, out of range [0, %d)",
					sp.name, i, l, classes)
			}
		}
	}
	return nil
}

// where names d in error messages: its path, else its name.
func (d *Dataset) where() string {
	if d.Path != "" {
		return d.Path
	}
	return "dataset " + d.Name
}

func shapeString(dims []int) string {
	parts := make([]string, len(dims))
	for i, v := range dims {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, "×")
}

// CheckInput reports whether images of d fit a model input named input with
// the given shape: [N, C, H, W] or [C, H, W], where a dimension ≤ 0 is dynamic
// and matches anything. A rank-2 shape [N, F] (a flattening model) fits when F
// equals C·H·W, since Batch's layout is the same bytes.
func CheckInput(d *Dataset, input string, shape []int64) error {
	s := d.Train.Shape()
	want := []int64{int64(s[0]), int64(s[1]), int64(s[2])}
	dimStr := func(v []int64) string {
		parts := make([]string, len(v))
		for i, x := range v {
			if x <= 0 {
				parts[i] = "?"
			} else {
				parts[i] = fmt.Sprint(x)
			}
		}
		return strings.Join(parts, "×")
	}
	var got []int64
	switch len(shape) {
	case 4:
		got = shape[1:]
	case 3:
		got = shape
	case 2:
		f := want[0] * want[1] * want[2]
		if shape[1] <= 0 || shape[1] == f {
			return nil
		}
		return fmt.Errorf("dataset %s has images %s (%d values), model input %q expects %d values per example",
			d.Name, shapeString(s[:]), f, input, shape[1])
	default:
		return fmt.Errorf("dataset %s has images %s, model input %q has rank %d (shape [%s]); expected [N,C,H,W]",
			d.Name, shapeString(s[:]), input, len(shape), dimStr(shape))
	}
	for i := range got {
		if got[i] > 0 && got[i] != want[i] {
			return fmt.Errorf("dataset %s has images %s, model input %q expects %s",
				d.Name, shapeString(s[:]), input, dimStr(got))
		}
	}
	return nil
}

// ParseValues reads a comma-separated list of per-channel values (--mean,
// --std): "" is none; each value must be a finite number, and positive
// when positive is set (a standard deviation).
func ParseValues(s string, positive bool) ([]float32, error) {
	if s == "" {
		return nil, nil
	}
	var out []float32
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 32)
		switch {
		case err != nil || math.IsNaN(v) || math.IsInf(v, 0):
			return nil, fmt.Errorf("%q is not a finite number", f)
		case positive && v <= 0:
			return nil, fmt.Errorf("every value must be positive, %q is not", f)
		}
		out = append(out, float32(v))
	}
	return out, nil
}

// SetNormalization sets the dataset's per-channel normalization after it
// was opened (from a model's metadata, when no flag gave one); every split
// applies it from then on.
func (d *Dataset) SetNormalization(mean, std []float32) error {
	if _, _, err := normParams(mean, std, d.Train.c); err != nil {
		return err
	}
	d.Mean, d.Std = append([]float32(nil), mean...), append([]float32(nil), std...)
	return nil
}
