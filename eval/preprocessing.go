package eval

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/infer"
	"github.com/unlearn-tool/unlearn/internal/setting"
)

// The preprocessing check (issue 64): before any training, the main
// command measures the model on a sample of its training split under the
// preprocessing it was given and under the documented alternatives, and
// refuses the run where one scores far better. A model fed data
// preprocessed unlike its training still scores well above chance (the
// user trial of the issue: 20.9 % to 70 % where 96.7 % was right), so the
// near-chance check (chance.go) misses it, and unlearning then retrains
// the model towards the wrong input.

// FarBetter is how much more (a fraction: 0.20 = 20 points) an alternative
// must score on the sample than the given preprocessing for the check to
// refuse the run. The sample's accuracies are known to ±1.6 points (one
// standard error at worst, on 1,000 examples), and the cross-validated
// class assignment's (see ClassOrderMinPerClass) to about twice that:
// 20 points is far outside both, and below every gap of the trial
// (23 to 75 points).
const FarBetter = 0.20

// ClassOrderMinPerClass is the fewest sample examples per class (on
// average) for which the class-order check runs: with fewer, the best
// assignment of outputs to labels is fitted to noise. On the 1,000-example
// sample it covers image folders of up to 100 classes.
const ClassOrderMinPerClass = 10

// ImageNet's per-channel mean and std (torchvision's Normalize for its
// pretrained weights), one of the alternatives on 3-channel images.
var (
	ImageNetMean = []float32{0.485, 0.456, 0.406}
	ImageNetStd  = []float32{0.229, 0.224, 0.225}
)

// The kinds of finding, one per fix. Finding.Kind holds one; the text of
// each is made by preprocessingText alone.
const (
	// PrepDataNorm: the data's own per-channel mean/std scores far better.
	PrepDataNorm = "data-normalization"
	// PrepImageNet: ImageNet's mean/std scores far better.
	PrepImageNet = "imagenet-normalization"
	// PrepNoNorm: the pixels (8-bit, or floats in [0, 1]) score far better
	// without the normalization given.
	PrepNoNorm = "no-normalization"
	// PrepAlreadyNormalized: float pixels that are already normalized (some
	// negative) score far better not normalized again, or brought back to
	// [0, 1].
	PrepAlreadyNormalized = "already-normalized"
	// PrepFloat255: float pixels in [0, 255] score far better divided by 255.
	PrepFloat255 = "float-0-255"
	// PrepScaleUp: the model takes pixels in [0, 255], not [0, 1].
	PrepScaleUp = "pixels-0-255"
	// PrepClassOrder: the class folders' order is not the model's outputs'.
	PrepClassOrder = "class-order"
)

// Pixel conventions of the sample, as PreprocessingCheck.Pixels names them.
const (
	Pixels8Bit       = "8-bit"
	PixelsUnit       = "floats in [0, 1]"
	Pixels255        = "floats in [0, 255]"
	PixelsNormalized = "normalized floats"
)

// Alternative is one preprocessing of the sample and what the model scored
// on it: the unnormalized pixels (data.Split.BatchUnnormalized) times
// Scale plus Offset per channel (nil: as they are), then normalized by
// Mean/Std per channel (nil: not normalized).
type Alternative struct {
	// Kind is the finding this alternative would make ("" for the
	// preprocessing as given).
	Kind string
	// Name says what it is, for the message: "as given", "with the data's
	// own mean/std (…)".
	Name          string
	Scale, Offset []float32
	Mean, Std     []float32
	// ImageNet marks Mean/Std as ImageNet's (the fix then names them).
	ImageNet bool
	// Accuracy is the model's on the sample; Assigned its accuracy with the
	// model's outputs reassigned to the labels by the best assignment,
	// cross-validated (image folders only; Accuracy otherwise).
	Accuracy, Assigned float64
	// Assignment maps each label to the model output the best assignment
	// on the whole sample gives it (image folders only).
	Assignment []int
}

// PreprocessingCheck is what CheckPreprocessing measured.
type PreprocessingCheck struct {
	// N is the number of training examples in the sample.
	N int
	// Pixels is the sample's convention (Pixels8Bit, …); Lo and Hi the
	// range of its unnormalized values.
	Pixels string
	Lo, Hi float32
	// Given is Alternatives[0], the preprocessing as given.
	Alternatives []Alternative
	// ClassOrder says whether the class-order check ran (image folders
	// with at least ClassOrderMinPerClass sample examples per class).
	ClassOrder bool
	// Seconds is the check's wall time.
	Seconds float64
	// Finding is the refusal, or nil where no alternative scores far better.
	Finding *Finding
}

// Finding is a preprocessing that scores far better than the given one:
// the fields of a structured note (Kind, Setting, Suggest) and what its
// one line of text says (Text).
type Finding struct {
	Kind string
	// Given and Better are the accuracies on the sample as given and with
	// the fix; N the sample's size.
	Given, Better float64
	N             int
	// Setting is what the fix changes: "mean/std" (the settings {mean}
	// and {std}) or "data" (the dataset itself); Suggest the value to give
	// it: "0.286 0.353" (mean, then std) or the class folders' new names.
	Setting, Suggest string
	// Alt is the alternative that scored Better; ClassOrder says the class
	// folders must be reordered too (Alt's Assignment).
	Alt        Alternative
	ClassOrder bool
	// From says where the given normalization came from: "settings"
	// (the caller's, {mean}/{std}), "metadata" (the model's) or "" (none).
	From string
	// Lo and Hi are the unnormalized pixels' range, ClassNames the class
	// folders (image folders only).
	Lo, Hi     float32
	ClassNames []string
	// Data is the dataset's path.
	Data string
}

// ErrPreprocessing marks a refusal of CheckPreprocessing's finding.
var ErrPreprocessing = errors.New("the data's preprocessing does not fit the model")

// Err is the refusal: one line, settings named as {name}.
func (f *Finding) Err() error {
	return setting.Textf("%w: %s; or pass %s if the model truly scores this low", ErrPreprocessing, f.Message(),
		setting.Of("allow-chance"))
}

// Message is the finding as one line with its settings as values: what
// scored how much, and the fix.
func (f *Finding) Message() setting.Message { return preprocessingText(f) }

// Text is Message in plain terms (settings by name).
func (f *Finding) Text() string { return f.Message().String() }

// preprocessingText builds every text the check writes, from the finding's
// fields alone, so that the texts can move onto structured notes (kind,
// setting, suggested value) in one place.
func preprocessingText(f *Finding) setting.Message {
	lead := fmt.Sprintf("the model scores %.1f%% on %s training examples of %s as given and %.1f%% %s",
		100*f.Given, thousandsSep(f.N), f.Data, 100*f.Better, f.Alt.Name)
	if f.ClassOrder {
		lead += " and its outputs matched to the class folders in another order"
	}
	rng := fmt.Sprintf("%.3g to %.3g", f.Lo, f.Hi)
	normBy := map[string]setting.Message{
		"settings": setting.Msgf("%s/%s normalize them again", setting.Of("mean"), setting.Of("std")),
		"metadata": setting.Msgf("the model's %s/%s metadata normalizes them again", data.MetaMean, data.MetaStd)}[f.From]
	var fix setting.Message
	add := func(format string, a ...any) { fix = setting.Msgf("%s"+format, append([]any{fix}, a...)...) }
	switch f.Kind {
	case PrepDataNorm, PrepImageNet:
		m, sd, _ := strings.Cut(f.Suggest, " ")
		add("pass %s %s (or the normalization the model was trained with)", setting.Use("mean", m), setting.Use("std", sd))
		switch f.From {
		case "":
			add(", or export the model with %s/%s metadata", data.MetaMean, data.MetaStd)
		case "metadata":
			add("; the model's %s/%s metadata does not fit it", data.MetaMean, data.MetaStd)
		}
	case PrepNoNorm:
		if f.From == "settings" {
			add("drop %s/%s: the model takes the pixels in [0, 1] as they are", setting.Of("mean"), setting.Of("std"))
		} else {
			add("the model's %s/%s metadata does not fit it: pass %s %s, or correct the metadata",
				data.MetaMean, data.MetaStd, setting.Use("mean", 0), setting.Use("std", 1))
		}
	case PrepAlreadyNormalized:
		add("the float pixels (%s) are already normalized", rng)
		if normBy != nil && f.Alt.Scale == nil {
			add(" and %s", normBy)
		}
		add(": store them in %s in [0, 1] (the 8-bit values / 255), before any normalization", f.Data)
	case PrepFloat255:
		add("the float pixels (%s) are 8-bit values, not the [0, 1] the tool takes floats in: store them in %s "+
			"divided by 255, or as uint8", rng, f.Data)
	case PrepScaleUp:
		add("the model takes pixels in [0, 255]: pass %s %s (1/255, which scales the [0, 1] pixels to [0, 255])",
			setting.Use("mean", 0), setting.Use("std", strings.TrimPrefix(f.Suggest, "0 ")))
	case PrepClassOrder:
		add("the class folders sort (alphabetically, as torchvision's ImageFolder) into another order than the "+
			"model's outputs: rename them so that they sort in the model's order, e.g. %s", f.Suggest)
	}
	if f.Alt.ImageNet && f.Kind != PrepImageNet {
		add("; then pass %s %s (ImageNet's)", setting.Use("mean", joinFloats(ImageNetMean)),
			setting.Use("std", joinFloats(ImageNetStd)))
	}
	if f.ClassOrder && f.Kind != PrepClassOrder {
		add("; and rename the class folders so that they sort in the model's output order, e.g. %s",
			renamedFolders(f.ClassNames, f.Alt.Assignment))
	}
	return setting.Msgf("%s: %s", lead, fix)
}

// CheckPreprocessing measures m on up to ChanceSample training examples
// (spread evenly over the split, as TrainAccuracySample) under the suite's
// preprocessing and under the alternatives: no normalization, the sample's
// own per-channel mean/std, ImageNet's (3 channels), and the pixels
// rescaled (8-bit and [0, 1] pixels times 255; float pixels in [0, 255]
// divided by 255; normalized floats brought back to [0, 1] by their
// per-channel range), alone and followed by the given normalization or
// ImageNet's. For image folders it also finds the best assignment of the
// model's outputs to the class folders. from says where the suite's
// normalization came from ("settings", "metadata" or "" for none). The
// result's Finding is set where an alternative scores at least FarBetter
// more than the given preprocessing.
func (s *Suite) CheckPreprocessing(m *graph.Model, from string) (*PreprocessingCheck, error) {
	start := time.Now()
	split := s.Data.Train
	n := min(split.Len(), ChanceSample)
	if n == 0 {
		return nil, setting.Errorf("data", " %s has an empty training split", s.Data.Path)
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i * split.Len() / n
	}
	sh := split.Shape()
	c, hw := sh[0], sh[1]*sh[2]
	chw := c * hw
	// The sample is read in chunks of at most 4 Mi values (16 MiB), so that
	// large images do not hold the whole sample in memory twice.
	chunk := max(1, min(n, (4<<20)/chw))
	raw := make([]float32, chunk*chw)
	// First pass: the unnormalized pixels' range and per-channel moments.
	sum, sq := make([]float64, c), make([]float64, c)
	lo, hi := make([]float32, c), make([]float32, c)
	for ci := range c {
		lo[ci], hi[ci] = float32(math.Inf(1)), float32(math.Inf(-1))
	}
	for at := 0; at < n; at += chunk {
		part := idx[at:min(n, at+chunk)]
		if err := split.BatchUnnormalized(raw, part); err != nil {
			return nil, err
		}
		for k := range part {
			for ci := range c {
				for _, v := range raw[k*chw+ci*hw : k*chw+(ci+1)*hw] {
					sum[ci] += float64(v)
					sq[ci] += float64(v) * float64(v)
					lo[ci], hi[ci] = min(lo[ci], v), max(hi[ci], v)
				}
			}
		}
	}
	res := &PreprocessingCheck{N: n, Lo: lo[0], Hi: hi[0]}
	for ci := range c {
		res.Lo, res.Hi = min(res.Lo, lo[ci]), max(res.Hi, hi[ci])
	}
	switch {
	case split.Is8Bit():
		res.Pixels = Pixels8Bit
	case res.Lo < 0:
		res.Pixels = PixelsNormalized
	case res.Hi > 1:
		res.Pixels = Pixels255
	default:
		res.Pixels = PixelsUnit
	}
	mean, std := make([]float32, c), make([]float32, c)
	flat := false
	for ci := range c {
		cnt := float64(n * hw)
		mu := sum[ci] / cnt
		mean[ci] = float32(mu)
		std[ci] = float32(math.Sqrt(max(sq[ci]/cnt-mu*mu, 0)))
		flat = flat || !(std[ci] > 1e-6)
	}
	res.Alternatives = alternatives(res.Pixels, c, s.Data.Mean, s.Data.Std, mean, std, lo, hi, flat)

	cl, err := infer.NewClassifier(m, s.Options.Runtime, s.Options.batch())
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	classes := max(cl.Classes(), s.Data.Classes)
	labels := split.Labels(idx)
	preds := make([][]int, len(res.Alternatives))
	x := make([]float32, chunk*chw)
	for at := 0; at < n; at += chunk {
		part := idx[at:min(n, at+chunk)]
		if err := split.BatchUnnormalized(raw, part); err != nil {
			return nil, err
		}
		for a := range res.Alternatives {
			alt := &res.Alternatives[a]
			alt.apply(x[:len(part)*chw], raw[:len(part)*chw], c, hw)
			sp, err := data.NewSplitF32(sh[0], sh[1], sh[2], x[:len(part)*chw], make([]int32, len(part)))
			if err != nil {
				return nil, err
			}
			lg, err := cl.Logits(sp, data.Range(len(part)), nil)
			if err != nil {
				return nil, err
			}
			preds[a] = append(preds[a], infer.Argmax(lg, cl.Classes())...)
		}
	}
	res.ClassOrder = s.Data.Format == data.FormatImageFolder && classes*ClassOrderMinPerClass <= n
	for a := range res.Alternatives {
		alt := &res.Alternatives[a]
		alt.Accuracy = infer.Accuracy(preds[a], labels)
		alt.Assigned = alt.Accuracy
		if res.ClassOrder {
			alt.Assigned, alt.Assignment = assignedAccuracy(preds[a], labels, classes)
		}
	}
	res.Finding = res.finding(from, s.Data)
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// alternatives lists the preprocessings to try, the given one first and
// the rest in the order a tie is decided in (the simpler fix first).
// pixels is the sample's convention; given mean/std the suite's (each
// empty, one value or one per channel); mean/std the sample's own
// per-channel moments (flat: a channel is constant, so they are no
// normalization); lo/hi its per-channel range.
func alternatives(pixels string, c int, givenMean, givenStd, mean, std, lo, hi []float32, flat bool) []Alternative {
	gm, gs := perChannel(givenMean, c, 0), perChannel(givenStd, c, 1)
	if len(givenMean) == 0 && len(givenStd) == 0 {
		gm, gs = nil, nil
	}
	out := []Alternative{{Name: "as given", Mean: gm, Std: gs}}
	normDesc := func(m, s []float32) string { return "(mean " + joinFloats(m) + ", std " + joinFloats(s) + ")" }
	if gm != nil {
		kind := PrepNoNorm
		if pixels == PixelsNormalized {
			kind = PrepAlreadyNormalized
		}
		out = append(out, Alternative{Kind: kind, Name: "without its normalization " + normDesc(gm, gs)})
	}
	if !flat {
		out = append(out, Alternative{Kind: PrepDataNorm,
			Name: "with the data's own mean/std " + normDesc(mean, std), Mean: mean, Std: std})
	}
	if c == 3 {
		out = append(out, Alternative{Kind: PrepImageNet, Name: "with ImageNet's mean/std",
			Mean: ImageNetMean, Std: ImageNetStd, ImageNet: true})
	}
	// The rescaling the pixels' convention suggests.
	scale, offset := make([]float32, c), make([]float32, c)
	var kind, name string
	switch pixels {
	case Pixels8Bit, PixelsUnit:
		kind, name = PrepScaleUp, "with the pixels in [0, 255]"
		for ci := range c {
			scale[ci] = 255
		}
	case Pixels255:
		kind, name = PrepFloat255, "with the pixels divided by 255"
		for ci := range c {
			scale[ci] = 1.0 / 255
		}
	case PixelsNormalized:
		kind, name = PrepAlreadyNormalized, "with the pixels brought back to [0, 1]"
		for ci := range c {
			if r := hi[ci] - lo[ci]; r > 0 {
				scale[ci], offset[ci] = 1/r, -lo[ci]/r
			}
		}
	}
	out = append(out, Alternative{Kind: kind, Name: name, Scale: scale, Offset: offset})
	if kind != PrepScaleUp {
		if gm != nil {
			out = append(out, Alternative{Kind: kind, Name: name + " and normalized " + normDesc(gm, gs),
				Scale: scale, Offset: offset, Mean: gm, Std: gs})
		}
		if c == 3 {
			out = append(out, Alternative{Kind: kind, Name: name + " and ImageNet's mean/std", Scale: scale, Offset: offset,
				Mean: ImageNetMean, Std: ImageNetStd, ImageNet: true})
		}
	}
	return out
}

// apply writes the alternative's preprocessing of raw (examples of c
// channels of hw values) into dst.
func (a *Alternative) apply(dst, raw []float32, c, hw int) {
	for i, v := range raw {
		ci := (i / hw) % c
		if a.Scale != nil {
			v = v*a.Scale[ci] + a.Offset[ci]
		}
		if a.Mean != nil {
			v = (v - a.Mean[ci]) / a.Std[ci]
		}
		dst[i] = v
	}
}

// Tie is how close (a fraction: 0.02 = 2 points) to the best accuracy an
// alternative earlier in the list must come to be chosen instead: within
// the sample's noise (±1.6 points at worst on 1,000 examples) the simpler
// explanation wins. Pixels already normalized and normalized again, for
// one, score about as well without the second normalization as with the
// data's own (which undoes it but for a shift), and "do not normalize
// twice" is the fix.
const Tie = 0.02

// finding picks the alternative with the highest accuracy (the class
// assignment's where it ran), or an earlier one within Tie of it, and
// returns it as a Finding where it beats the given preprocessing by
// FarBetter, else nil.
func (r *PreprocessingCheck) finding(from string, ds *data.Dataset) *Finding {
	given := r.Alternatives[0]
	top := 0.0
	for _, alt := range r.Alternatives {
		top = max(top, alt.Assigned)
	}
	best := 0
	for a, alt := range r.Alternatives {
		if alt.Assigned >= top-Tie {
			best = a
			break
		}
	}
	alt := r.Alternatives[best]
	if alt.Assigned < given.Accuracy+FarBetter {
		return nil
	}
	f := &Finding{Kind: alt.Kind, Given: given.Accuracy, Better: alt.Assigned, N: r.N, Alt: alt, From: from,
		Lo: r.Lo, Hi: r.Hi, ClassNames: ds.ClassNames, Data: ds.Path, Setting: "mean/std"}
	// The class folders need reordering where the plain accuracy alone
	// would not have been far better.
	f.ClassOrder = r.ClassOrder && alt.Accuracy < given.Accuracy+FarBetter
	switch f.Kind {
	case "":
		f.Kind, f.Alt.Name = PrepClassOrder, "with its outputs matched to the class folders in another order"
		f.ClassOrder = false
		f.Setting, f.Suggest = "data", renamedFolders(ds.ClassNames, alt.Assignment)
	case PrepDataNorm, PrepImageNet:
		f.Suggest = joinFloats(alt.Mean) + " " + joinFloats(alt.Std)
	case PrepNoNorm:
		f.Suggest = "0 1"
	case PrepScaleUp:
		f.Suggest = "0 " + strconv.FormatFloat(1.0/255, 'g', 6, 32)
	case PrepAlreadyNormalized, PrepFloat255:
		f.Setting, f.Suggest = "data", "pixels in [0, 1]"
	}
	if f.ClassOrder {
		f.Better = alt.Assigned
	}
	return f
}

// assignedAccuracy is the accuracy of preds on labels with the model's
// outputs reassigned to labels one to one, the assignment fitted on one
// half of the sample and scored on the other, both ways: an unbiased
// estimate of what the best assignment scores, where the assignment fitted
// and scored on the same examples would gain from noise. The halves
// alternate within each label (its 1st, 3rd, … example in one, its 2nd,
// 4th, … in the other), so both hold every class whatever the split's
// order. It also returns the assignment fitted on the whole sample
// (label → output).
func assignedAccuracy(preds, labels []int, classes int) (float64, []int) {
	half := make([]int, len(labels))
	seen := make([]int, classes)
	for i, l := range labels {
		if l >= 0 && l < classes {
			half[i] = seen[l] % 2
			seen[l]++
		}
	}
	conf := func(parity int) [][]int {
		m := make([][]int, classes)
		for i := range m {
			m[i] = make([]int, classes)
		}
		for i := range preds {
			if parity < 0 || half[i] == parity {
				if p, l := preds[i], labels[i]; p >= 0 && p < classes && l >= 0 && l < classes {
					m[l][p]++
				}
			}
		}
		return m
	}
	even, odd := conf(0), conf(1)
	pe, po := assign(even), assign(odd)
	right := 0
	for l := range classes {
		right += odd[l][pe[l]] + even[l][po[l]]
	}
	return float64(right) / float64(len(preds)), assign(conf(-1))
}

// assign solves the assignment problem on the square matrix w: the
// permutation p (row r to column p[r]) with the largest Σ w[r][p[r]]. It is
// the Hungarian algorithm (Kuhn–Munkres with potentials, O(n³)) on the
// costs −w.
func assign(w [][]int) []int {
	n := len(w)
	const inf = math.MaxInt / 4
	u, v := make([]int, n+1), make([]int, n+1)
	p, way := make([]int, n+1), make([]int, n+1) // p[j]: the row given column j (1-based; 0: none)
	minv, used := make([]int, n+1), make([]bool, n+1)
	for i := 1; i <= n; i++ {
		p[0] = i
		j0 := 0
		for j := range minv {
			minv[j], used[j] = inf, false
		}
		for {
			used[j0] = true
			i0, delta, j1 := p[j0], inf, 0
			for j := 1; j <= n; j++ {
				if used[j] {
					continue
				}
				if cur := -w[i0-1][j-1] - u[i0] - v[j]; cur < minv[j] {
					minv[j], way[j] = cur, j0
				}
				if minv[j] < delta {
					delta, j1 = minv[j], j
				}
			}
			for j := 0; j <= n; j++ {
				if used[j] {
					u[p[j]] += delta
					v[j] -= delta
				} else {
					minv[j] -= delta
				}
			}
			j0 = j1
			if p[j0] == 0 {
				break
			}
		}
		for j0 != 0 {
			j1 := way[j0]
			p[j0] = p[j1]
			j0 = j1
		}
	}
	out := make([]int, n)
	for j := 1; j <= n; j++ {
		if p[j] > 0 {
			out[p[j]-1] = j - 1
		}
	}
	return out
}

// renamedFolders names the class folders so that they sort in the model's
// output order: each prefixed by the output the assignment gives it ("0_",
// zero-padded), in that order, at most 10 shown.
func renamedFolders(names []string, assignment []int) string {
	if len(assignment) == 0 {
		return ""
	}
	width := len(strconv.Itoa(len(assignment) - 1))
	byOutput := make([]string, len(assignment))
	for l, o := range assignment {
		name := strconv.Itoa(l)
		if l < len(names) {
			name = names[l]
		}
		byOutput[o] = fmt.Sprintf("%0*d_%s", width, o, name)
	}
	if len(byOutput) > 10 {
		byOutput = append(byOutput[:10], "…")
	}
	return strings.Join(byOutput, ", ")
}

// perChannel expands v (empty: def; one value: for all) to c values.
func perChannel(v []float32, c int, def float32) []float32 {
	out := make([]float32, c)
	for i := range out {
		switch len(v) {
		case 0:
			out[i] = def
		case 1:
			out[i] = v[0]
		default:
			out[i] = v[i]
		}
	}
	return out
}

// joinFloats writes v comma-separated, as {mean} and {std} take it, to 3
// significant digits (4 below 0.1).
func joinFloats(v []float32) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.FormatFloat(float64(x), 'g', 3, 32)
	}
	return strings.Join(parts, ",")
}

// thousandsSep writes n with commas between thousands (1,000).
func thousandsSep(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
