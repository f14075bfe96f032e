package data

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// toy returns a 2-channel 1×2 dataset of 4 examples; pixel (c, 0, x) of
// example i is 10*i + 2*c + x.
func toy(t *testing.T, opts Options) *Dataset {
	t.Helper()
	pix := make([]uint8, 4*2*1*2)
	for i := range 4 {
		for c := range 2 {
			for x := range 2 {
				pix[i*4+c*2+x] = uint8(10*i + 2*c + x)
			}
		}
	}
	train, err := NewSplitU8(2, 1, 2, pix, []int32{0, 1, 2, 1})
	if err != nil {
		t.Fatal(err)
	}
	test, err := NewSplitF32(2, 1, 2, []float32{0.5, 0.25, 1, 0}, []int32{2})
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDataset("toy", train, test, opts)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestBatchAndSubset(t *testing.T) {
	d := toy(t, Options{})
	dst := make([]float32, 3*4+1)
	dst[12] = -7
	if err := d.Train.Batch(dst, []int{3, 0, 3}); err != nil {
		t.Fatal(err)
	}
	want := []float32{30, 31, 32, 33, 0, 1, 2, 3, 30, 31, 32, 33}
	for i, w := range want {
		if !near(dst[i], w/255) {
			t.Fatalf("dst[%d] = %v, want %v", i, dst[i], w/255)
		}
	}
	if dst[12] != -7 {
		t.Error("Batch wrote past len(idx)*C*H*W")
	}
	sub := d.Train.Subset([]int{3, 1})
	subsub := sub.Subset([]int{1})
	if sub.Len() != 2 || sub.ID(0) != 3 || sub.ID(1) != 1 || subsub.ID(0) != 1 || subsub.Label(0) != 1 || sub.Label(0) != 1 {
		t.Fatalf("subset ids %d %d %d labels %d", sub.ID(0), sub.ID(1), subsub.ID(0), sub.Label(0))
	}
	if got := pixel(t, subsub, 0, 1, 0, 1); !near(got, 13.0/255) {
		t.Errorf("subset pixel %v", got)
	}
	labels := make([]int64, 2)
	if err := sub.BatchLabels(labels, []int{1, 0}); err != nil || !slices.Equal(labels, []int64{1, 1}) {
		t.Errorf("labels %v %v", labels, err)
	}
	wantErr(t, d.Train.Batch(make([]float32, 3), []int{0}), "dst holds 3 values", "need 4")
	wantErr(t, sub.Batch(make([]float32, 4), []int{2}), "index 2 out of range [0, 2)")
	wantErr(t, sub.BatchLabels(labels, []int{-1}), "index -1 out of range")
}

func TestNormalization(t *testing.T) {
	d := toy(t, Options{Mean: []float32{0.5, 0.25}, Std: []float32{0.5, 2}})
	got := batchOf(t, d.Train, 1)
	for i, raw := range []float32{10, 11, 12, 13} {
		c := i / 2
		want := (raw/255 - d.Mean[c]) / d.Std[c]
		if !near(got[i], want) {
			t.Errorf("value %d = %v, want %v", i, got[i], want)
		}
	}
	// float storage: values as stored, then normalized
	got = batchOf(t, d.Test, 0)
	if !near(got[0], 0) || !near(got[2], (1-0.25)/2) {
		t.Errorf("float batch %v", got)
	}
	// one value applies to all channels
	d = toy(t, Options{Mean: []float32{1}})
	if got := batchOf(t, d.Test, 0); !near(got[1], -0.75) || !near(got[2], 0) {
		t.Errorf("broadcast mean: %v", got)
	}
	// changing Mean after Open takes effect; bad values are errors, not panics
	d.Mean = []float32{1, 2, 3}
	wantErr(t, d.Train.Batch(make([]float32, 4), []int{0}), "mean has 3 values", "2 channel")
	for _, o := range []Options{{Std: []float32{0, 1}}, {Mean: []float32{1, 2, 3}}} {
		train, _ := NewSplitU8(2, 1, 1, []uint8{1, 2}, []int32{0})
		test, _ := NewSplitU8(2, 1, 1, []uint8{1, 2}, []int32{0})
		if _, err := NewDataset("x", train, test, o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
}

func TestNewSplitErrors(t *testing.T) {
	_, err := NewSplitU8(1, 2, 2, make([]uint8, 7), []int32{0, 1})
	wantErr(t, err, "7 pixel values for 2 examples of 1×2×2 (want 8)")
	_, err = NewSplitF32(0, 2, 2, nil, nil)
	wantErr(t, err, "invalid image shape 0×2×2")
}

func TestCheckInput(t *testing.T) {
	train, _ := NewSplitU8(1, 28, 28, make([]uint8, 784), []int32{0})
	test, _ := NewSplitU8(1, 28, 28, make([]uint8, 784), []int32{0})
	d, err := NewDataset("fashion-mnist", train, test, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ok := range [][]int64{{-1, 1, 28, 28}, {8, 1, 28, 28}, {1, 28, 28}, {-1, -1, 28, -1}, {-1, 784}, {1, -1}} {
		if err := CheckInput(d, "input", ok); err != nil {
			t.Errorf("%v: %v", ok, err)
		}
	}
	err = CheckInput(d, "input", []int64{-1, 3, 32, 32})
	wantErr(t, err, `dataset fashion-mnist has images 1×28×28, model input "input" expects 3×32×32`)
	err = CheckInput(d, "x", []int64{-1, 3, -1, -1})
	wantErr(t, err, `model input "x" expects 3×?×?`)
	err = CheckInput(d, "x", []int64{-1, 3072})
	wantErr(t, err, "784 values", "expects 3072 values")
	err = CheckInput(d, "x", []int64{1, 2, 3, 4, 5})
	if err == nil || !strings.Contains(err.Error(), "rank 5") {
		t.Errorf("rank 5: %v", err)
	}
}

func TestOpenUnknown(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "readme.txt", []byte("hi"))
	_, err := Open(dir, Options{})
	if !errors.Is(err, ErrUnknownFormat) {
		t.Fatalf("got %v, want ErrUnknownFormat", err)
	}
	wantErr(t, err, dir, "train-images-idx3-ubyte")
	_, err = Open(filepath.Join(dir, "readme.txt"), Options{})
	wantErr(t, err, "readme.txt", "not .npz")
	_, err = Open(filepath.Join(dir, "absent"), Options{})
	wantErr(t, err, "absent")
}
