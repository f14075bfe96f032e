package data

import (
	"archive/zip"
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// writeZip writes entries (name -> bytes) as a zip, stored or deflated.
func writeZip(t *testing.T, path string, deflate bool, entries map[string][]byte) {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range entries {
			if !yield(k) {
				return
			}
		}
	}) {
		m := zip.Store
		if deflate {
			m = zip.Deflate
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: m})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(entries[name])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Dir(path), filepath.Base(path), b.Bytes())
}

func TestDecodeNPYDTypes(t *testing.T) {
	cases := []struct {
		descr, shape string
		data         []byte
		want         []float64
		wantShape    []int
	}{
		{"|u1", "(2, 2)", []byte{1, 2, 3, 255}, []float64{1, 2, 3, 255}, []int{2, 2}},
		{"<f4", "(3,)", le([]float32{0.5, -1, 3.25}), []float64{0.5, -1, 3.25}, []int{3}},
		{"<f8", "(1, 2)", le([]float64{math.Pi, -2}), []float64{math.Pi, -2}, []int{1, 2}},
		{"<i8", "(2,)", le([]int64{-7, 1 << 40}), []float64{-7, 1 << 40}, []int{2}},
		{"<i4", "(2, 1)", le([]int32{-3, 9}), []float64{-3, 9}, []int{2, 1}},
		{"|b1", "(2,)", []byte{0, 1}, []float64{0, 1}, []int{2}},
		{"<f4", "()", le([]float32{7}), []float64{7}, []int{}},
	}
	for _, c := range cases {
		a, err := DecodeNPY(bytes.NewReader(npyRaw(c.descr, c.shape, c.data)))
		if err != nil {
			t.Fatalf("%s %s: %v", c.descr, c.shape, err)
		}
		if a.DType != c.descr || !slices.Equal(a.Shape, c.wantShape) {
			t.Errorf("%s: got dtype %s shape %v", c.descr, a.DType, a.Shape)
		}
		if got := a.Float64s(); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.descr, got, c.want)
		}
	}
	a, _ := DecodeNPY(bytes.NewReader(npyRaw("<i8", "(2,)", le([]int64{-7, 1 << 40}))))
	if a.I64[1] != 1<<40 {
		t.Errorf("I64 = %v", a.I64)
	}
}

func TestDecodeNPYErrors(t *testing.T) {
	for _, c := range []struct {
		b    []byte
		want string
	}{
		{[]byte("\x93NUMPX\x01\x00"), "wrong magic number"},
		{npyRaw(">f4", "(1,)", make([]byte, 4)), `unsupported dtype ">f4"`},
		{npyRaw("<c8", "(1,)", make([]byte, 8)), `unsupported dtype "<c8"`},
		{npyRaw("<f4", "(2, 3)", make([]byte, 20)), "truncated array data: expected 24 bytes, got 20"},
		{npyRaw("<f4", "(2, 3", nil), "shape is not a tuple"},
		{npyRaw("<f4", "(99999999999, 99999999999)", nil), "too large"},
		{bytes.Replace(npyRaw("<f4", "(1,)", make([]byte, 4)), []byte("False"), []byte("True "), 1), "fortran_order True is not supported"},
		{[]byte("\x93NUMPY\x01\x00\xff"), "truncated header"},
		{[]byte("\x93NUMPY\x09\x00\x00\x00"), "unsupported .npy version 9.0"},
	} {
		_, err := DecodeNPY(bytes.NewReader(c.b))
		wantErr(t, err, c.want)
	}
}

func TestNPYRoundTrip(t *testing.T) {
	dir := t.TempDir()
	x := NewF32([]int{2, 3}, []float32{1, 2, 3, 4, 5, float32(math.Inf(-1))})
	y := NewI64([]int{2}, []int64{-1, math.MaxInt64})
	p := filepath.Join(dir, "ref.npz")
	if err := WriteNPZ(p, map[string]*Array{"x": x, "y": y}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadNPZ(p)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got["x"].F32, x.F32) || !slices.Equal(got["x"].Shape, x.Shape) || !slices.Equal(got["y"].I64, y.I64) || got["y"].DType != "<i8" {
		t.Fatalf("round trip: %+v %+v", got["x"], got["y"])
	}
	if err := WriteNPY(filepath.Join(dir, "x.npy"), x); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "x.npy"))
	if (len(raw)-6*4)%64 != 0 {
		t.Errorf("header not 64-byte aligned: %d bytes", len(raw))
	}
	if err := WriteNPY(filepath.Join(dir, "bad.npy"), NewF32([]int{4}, []float32{1})); err == nil {
		t.Error("shape/data mismatch accepted")
	}
}

// TestNPYNumpy checks both directions against numpy when available.
func TestNPYNumpy(t *testing.T) {
	py := systemPython(t)
	dir := t.TempDir()
	ours := filepath.Join(dir, "ours.npz")
	if err := WriteNPZ(ours, map[string]*Array{
		"f": NewF32([]int{2, 2}, []float32{1.5, -2, 0, 3}),
		"i": NewI64([]int{3}, []int64{-5, 0, 1 << 50}),
	}); err != nil {
		t.Fatal(err)
	}
	script := `
import sys, numpy as np
d = sys.argv[1]
z = np.load(d + "/ours.npz")
assert z["f"].dtype == np.float32 and z["f"].shape == (2, 2) and z["f"].tolist() == [[1.5, -2.0], [0.0, 3.0]], z["f"]
assert z["i"].dtype == np.int64 and z["i"].tolist() == [-5, 0, 1 << 50], z["i"]
np.savez_compressed(d + "/theirs.npz", a=np.arange(24, dtype=np.float64).reshape(2, 3, 4), b=np.array([[1, 2]], dtype=np.int32), c=np.array([True, False]), u=np.arange(5, dtype=np.uint8))
`
	if out, err := exec.Command(py, "-c", script, dir).CombinedOutput(); err != nil {
		if bytes.Contains(out, []byte("No module named 'numpy'")) {
			t.Skip("numpy unavailable")
		}
		t.Fatalf("numpy: %v\n%s", err, out)
	}
	got, err := ReadNPZ(filepath.Join(dir, "theirs.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if a := got["a"]; a.DType != "<f8" || !slices.Equal(a.Shape, []int{2, 3, 4}) || a.F64[23] != 23 || a.F64[5] != 5 {
		t.Errorf("a = %+v", a)
	}
	if b := got["b"]; b.DType != "<i4" || !slices.Equal(b.I32, []int32{1, 2}) {
		t.Errorf("b = %+v", b)
	}
	if c := got["c"]; c.DType != "|b1" || !slices.Equal(c.U8, []uint8{1, 0}) {
		t.Errorf("c = %+v", c)
	}
	if u := got["u"]; u.DType != "|u1" || !slices.Equal(u.U8, []uint8{0, 1, 2, 3, 4}) {
		t.Errorf("u = %+v", u)
	}
}

// npzPix gives pixel (n, c, y, x) a distinct value.
func npzPix(n, c, y, x int) int { return (n*50 + c*20 + y*5 + x) % 256 }

func TestNPZDataset(t *testing.T) {
	const n, c, h, w = 3, 3, 4, 2
	nchw := make([]byte, n*c*h*w)
	nhwc := make([]byte, n*c*h*w)
	nchwF := make([]float32, n*c*h*w)
	nhw := make([]byte, n*h*w)
	for k := range n {
		for ci := range c {
			for y := range h {
				for x := range w {
					v := npzPix(k, ci, y, x)
					nchw[((k*c+ci)*h+y)*w+x] = byte(v)
					nchwF[((k*c+ci)*h+y)*w+x] = float32(v) / 1000
					nhwc[((k*h+y)*w+x)*c+ci] = byte(v)
					if ci == 0 {
						nhw[(k*h+y)*w+x] = byte(v)
					}
				}
			}
		}
	}
	y := le([]int64{2, 0, 1})
	yTest := le([]int64{1, 1, 0})
	cases := []struct {
		name    string
		x       []byte
		descr   string
		shape   string
		deflate bool
		c       int
		scale   float32 // pixel value = npzPix * scale
		ydescr  string
		y       []byte
	}{
		{"nchw-u1-stored", nchw, "|u1", "(3, 3, 4, 2)", false, 3, 1.0 / 255, "<i8", y},
		{"nhwc-u1-deflated", nhwc, "|u1", "(3, 4, 2, 3)", true, 3, 1.0 / 255, "|u1", []byte{2, 0, 1}},
		{"nchw-f4-deflated", le(nchwF), "<f4", "(3, 3, 4, 2)", true, 3, 1.0 / 1000, "<i4", le([]int32{2, 0, 1})},
		{"nhw-u1", nhw, "|u1", "(3, 4, 2)", false, 1, 1.0 / 255, "<i8", y},
		{"n1hw-i8-labels2d", nhw, "|u1", "(3, 1, 4, 2)", true, 1, 1.0 / 255, "<i8", y},
		{"nhw1-f8", le(func() []float64 {
			v := make([]float64, len(nhw))
			for i, b := range nhw {
				v[i] = float64(b) / 1000
			}
			return v
		}()), "<f8", "(3, 4, 2, 1)", false, 1, 1.0 / 1000, "<i8", y},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "toy.npz")
			writeZip(t, p, tc.deflate, map[string][]byte{
				"x_train.npy": npyRaw(tc.descr, tc.shape, tc.x),
				"y_train.npy": npyRaw(tc.ydescr, "(3,)", tc.y),
				"x_test.npy":  npyRaw(tc.descr, tc.shape, tc.x),
				"y_test.npy":  npyRaw("<i8", "(3, 1)", yTest),
			})
			d, err := Open(p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Name != "toy" || d.Format != FormatNPZ || d.Classes != 3 || d.Train.Shape() != [3]int{tc.c, h, w} {
				t.Fatalf("name %q format %q classes %d shape %v", d.Name, d.Format, d.Classes, d.Train.Shape())
			}
			if d.Train.Label(0) != 2 || d.Train.Label(2) != 1 || d.Test.Label(1) != 1 {
				t.Errorf("labels %d %d %d", d.Train.Label(0), d.Train.Label(2), d.Test.Label(1))
			}
			for k := range n {
				for ci := range tc.c {
					for yy := range h {
						for x := range w {
							want := float32(npzPix(k, ci, yy, x)) * tc.scale
							if got := pixel(t, d.Test, k, ci, yy, x); !near(got, want) {
								t.Fatalf("(%d,%d,%d,%d) = %v, want %v", k, ci, yy, x, got, want)
							}
						}
					}
				}
			}
		})
	}
}

func TestNPZDatasetErrors(t *testing.T) {
	base := func() map[string][]byte {
		return map[string][]byte{
			"x_train.npy": npyRaw("|u1", "(2, 2, 2)", make([]byte, 8)),
			"y_train.npy": npyRaw("<i8", "(2,)", le([]int64{0, 1})),
			"x_test.npy":  npyRaw("|u1", "(1, 2, 2)", make([]byte, 4)),
			"y_test.npy":  npyRaw("<i8", "(1,)", le([]int64{1})),
		}
	}
	for _, c := range []struct {
		name   string
		change func(m map[string][]byte)
		opts   Options
		want   []string
	}{
		{"missing", func(m map[string][]byte) { delete(m, "y_test.npy") }, Options{}, []string{"toy.npz", `missing array "y_test"`}},
		{"counts", func(m map[string][]byte) { m["y_train.npy"] = npyRaw("<i8", "(3,)", le([]int64{0, 1, 1})) }, Options{},
			[]string{"toy.npz", "inconsistent counts: x_train holds 2 images, y_train holds 3 labels"}},
		{"negative", func(m map[string][]byte) { m["y_train.npy"] = npyRaw("<i8", "(2,)", le([]int64{0, -4})) }, Options{},
			[]string{"toy.npz", "y_train[1] = -4: label out of range"}},
		{"classes", func(m map[string][]byte) {}, Options{Classes: 1}, []string{"toy.npz", "training example 1 has label 1, out of range [0, 1)"}},
		{"shape", func(m map[string][]byte) { m["x_test.npy"] = npyRaw("|u1", "(1, 2, 3)", make([]byte, 6)) }, Options{},
			[]string{"training images are 1×2×2 but test images are 1×2×3"}},
		{"entry", func(m map[string][]byte) { m["x_test.npy"] = npyRaw("|u1", "(1, 2, 2)", make([]byte, 3)) }, Options{},
			[]string{"toy.npz", "entry x_test.npy", "truncated array data: expected 4 bytes, got 3"}},
		{"float-labels", func(m map[string][]byte) { m["y_test.npy"] = npyRaw("<f8", "(1,)", le([]float64{0.5})) }, Options{},
			[]string{"y_test", "element 0 = 0.5 is not an integer"}},
		// Float pixels: finite and within ±255 (MaxFloatPixel), the first
		// offender named by its index.
		{"float-nan", func(m map[string][]byte) {
			m["x_train.npy"] = npyRaw("<f4", "(2, 2, 2)", le([]float32{0, 0.5, 1, float32(math.NaN()), 0, 0, 0, 0}))
		}, Options{}, []string{"toy.npz", "x_train: float pixel 3 = NaN", "finite and within ±255", "[0, 1]"}},
		{"float-inf", func(m map[string][]byte) {
			m["x_test.npy"] = npyRaw("<f8", "(1, 2, 2)", le([]float64{0, math.Inf(-1), 0, 0}))
		}, Options{}, []string{"x_test: float pixel 1 = -Inf"}},
		{"float-65535", func(m map[string][]byte) {
			m["x_train.npy"] = npyRaw("<f4", "(2, 2, 2)", le([]float32{0, 0, 0, 0, 0, 65535, 0, 0}))
		}, Options{}, []string{"x_train: float pixel 5 = 65535"}},
		{"float-minus-300", func(m map[string][]byte) {
			m["x_train.npy"] = npyRaw("<f4", "(2, 2, 2)", le([]float32{-300, 0, 0, 0, 0, 0, 0, 0}))
		}, Options{}, []string{"x_train: float pixel 0 = -300"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := base()
			c.change(m)
			p := filepath.Join(t.TempDir(), "toy.npz")
			writeZip(t, p, false, m)
			_, err := Open(p, c.opts)
			wantErr(t, err, c.want...)
		})
	}
	p := writeFile(t, t.TempDir(), "junk.npz", []byte("PK not really"))
	_, err := Open(p, Options{})
	wantErr(t, err, "junk.npz", "not a readable .npz")
}

// TestNPZFloatConventions: float pixels in 0–255 and already normalized
// ones (within ±255) load as stored, without scaling; BatchUnnormalized
// gives them back without the dataset's mean/std, and Batch with it.
func TestNPZFloatConventions(t *testing.T) {
	px := []float32{-255, -2.1, 0, 255, 0.5, 1, 2, 3}
	p := filepath.Join(t.TempDir(), "toy.npz")
	writeZip(t, p, false, map[string][]byte{
		"x_train.npy": npyRaw("<f4", "(2, 2, 2)", le(px)),
		"y_train.npy": npyRaw("<i8", "(2,)", le([]int64{0, 1})),
		"x_test.npy":  npyRaw("<f4", "(1, 2, 2)", le(px[:4])),
		"y_test.npy":  npyRaw("<i8", "(1,)", le([]int64{1})),
	})
	d, err := Open(p, Options{Mean: []float32{1}, Std: []float32{2}})
	if err != nil {
		t.Fatal(err)
	}
	raw, norm := make([]float32, 8), make([]float32, 8)
	if err := d.Train.BatchUnnormalized(raw, []int{0, 1}); err != nil {
		t.Fatal(err)
	}
	if err := d.Train.Batch(norm, []int{0, 1}); err != nil {
		t.Fatal(err)
	}
	for i, v := range px {
		if raw[i] != v || !near(norm[i], (v-1)/2) {
			t.Fatalf("pixel %d: unnormalized %v, normalized %v; want %v and %v", i, raw[i], norm[i], v, (v-1)/2)
		}
	}
}

func FuzzNPY(f *testing.F) {
	f.Add(npyRaw("<f4", "(2, 2)", le([]float32{1, 2, 3, 4})))
	f.Add(npyRaw("|u1", "(3,)", []byte{1, 2, 3}))
	f.Add(npyRaw("<i8", "()", le([]int64{5})))
	f.Add(npyRaw("<f8", "(4294967295, 4294967295, 4294967295)", nil))
	f.Add([]byte("\x93NUMPY\x02\x00\xff\xff\xff\x7f{"))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := DecodeNPY(bytes.NewReader(b))
		if err != nil {
			return
		}
		n, err := a.dataLen()
		if err != nil || n != a.Len() {
			t.Fatalf("shape %v dtype %s but %d elements (%v)", a.Shape, a.DType, n, err)
		}
		var buf bytes.Buffer
		if err := EncodeNPY(&buf, a); err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		b2, err := DecodeNPY(&buf)
		if err != nil || !slices.Equal(b2.Shape, a.Shape) {
			t.Fatalf("round trip: %v %v", err, b2)
		}
	})
}
