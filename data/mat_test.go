package data

import (
	"bytes"
	"os/exec"
	"testing"
)

// svhnX returns X for n images of h×w×c in MATLAB's column-major order with
// value(h, w, c, n) = (11*n + 5*c + 3*y + x) % 256 at row y, column x.
func svhnX(n, h, w, c int) []byte {
	x := make([]byte, h*w*c*n)
	for k := range n {
		for ci := range c {
			for xi := range w {
				for yi := range h {
					x[yi+h*xi+h*w*ci+h*w*c*k] = byte((11*k + 5*ci + 3*yi + xi) % 256)
				}
			}
		}
	}
	return x
}

func writeSVHN(t *testing.T, dir string, compress, bigEndian bool, labelsAsUint8 bool) {
	t.Helper()
	for _, sp := range []struct {
		name string
		y    []float64
	}{{"train_32x32.mat", []float64{10, 1, 5, 10}}, {"test_32x32.mat", []float64{3, 10}}} {
		m := newMatW(bigEndian)
		n := len(sp.y)
		m.add(t, compress, "X", mxUINT8, []int{32, 32, 3, n}, miUINT8, svhnX(n, 32, 32, 3))
		if labelsAsUint8 { // MATLAB stores integer-valued doubles compactly
			b := make([]byte, n)
			for i, v := range sp.y {
				b[i] = byte(v)
			}
			m.add(t, compress, "y", mxDOUBLE, []int{n, 1}, miUINT8, b)
		} else {
			m.add(t, compress, "y", mxDOUBLE, []int{n, 1}, miDOUBLE, m.f64s(sp.y))
		}
		writeFile(t, dir, sp.name, m.Bytes())
	}
}

func TestSVHN(t *testing.T) {
	for _, tc := range []struct {
		name                       string
		compress, big, labelsUint8 bool
	}{{"plain", false, false, false}, {"compressed", true, false, false}, {"bigendian", false, true, false}, {"compressed-uint8-labels", true, false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeSVHN(t, dir, tc.compress, tc.big, tc.labelsUint8)
			d, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Format != FormatSVHN || d.Classes != 10 || d.Train.Len() != 4 || d.Test.Len() != 2 || d.Train.Shape() != [3]int{3, 32, 32} {
				t.Fatalf("format %q classes %d, %d/%d of %v", d.Format, d.Classes, d.Train.Len(), d.Test.Len(), d.Train.Shape())
			}
			for i, want := range []int{0, 1, 5, 0} {
				if d.Train.Label(i) != want {
					t.Errorf("label %d = %d, want %d", i, d.Train.Label(i), want)
				}
			}
			for _, p := range [][4]int{{0, 0, 0, 0}, {3, 2, 17, 5}, {1, 1, 0, 31}, {2, 0, 31, 30}} {
				n, c, y, x := p[0], p[1], p[2], p[3]
				want := float32((11*n+5*c+3*y+x)%256) / 255
				if got := pixel(t, d.Train, n, c, y, x); !near(got, want) {
					t.Errorf("image %d (c=%d,y=%d,x=%d) = %v, want %v", n, c, y, x, got, want)
				}
			}
		})
	}
}

func TestSVHNErrors(t *testing.T) {
	write := func(t *testing.T, train []byte) string {
		dir := t.TempDir()
		writeSVHN(t, dir, false, false, false)
		writeFile(t, dir, "train_32x32.mat", train)
		return dir
	}
	t.Run("magic", func(t *testing.T) {
		b := newMatW(false).Bytes()
		b[126], b[127] = 'X', 'Y'
		_, err := Open(write(t, b), Options{})
		wantErr(t, err, "train_32x32.mat", "wrong magic number", "not a MAT v5 file")
	})
	t.Run("class", func(t *testing.T) {
		m := newMatW(false)
		m.add(t, true, "X", 7 /* single */, []int{32, 32, 3, 1}, miSINGLE, make([]byte, 4*3072))
		m.add(t, false, "y", mxDOUBLE, []int{1, 1}, miDOUBLE, m.f64s([]float64{1}))
		_, err := Open(write(t, m.Bytes()), Options{})
		wantErr(t, err, "train_32x32.mat", `variable "X"`, "single arrays are not supported")
	})
	t.Run("counts", func(t *testing.T) {
		m := newMatW(false)
		m.add(t, false, "X", mxUINT8, []int{32, 32, 3, 2}, miUINT8, svhnX(2, 32, 32, 3))
		m.add(t, false, "y", mxDOUBLE, []int{3, 1}, miDOUBLE, m.f64s([]float64{1, 2, 3}))
		_, err := Open(write(t, m.Bytes()), Options{})
		wantErr(t, err, "train_32x32.mat", "inconsistent counts: X holds 2 images, y holds 3 labels")
	})
	t.Run("label", func(t *testing.T) {
		m := newMatW(false)
		m.add(t, true, "X", mxUINT8, []int{32, 32, 3, 2}, miUINT8, svhnX(2, 32, 32, 3))
		m.add(t, true, "y", mxDOUBLE, []int{2, 1}, miDOUBLE, m.f64s([]float64{1, 0}))
		_, err := Open(write(t, m.Bytes()), Options{})
		wantErr(t, err, "train_32x32.mat", "y[1] = 0", "label out of range")
	})
	t.Run("truncated", func(t *testing.T) {
		m := newMatW(false)
		m.add(t, false, "X", mxUINT8, []int{32, 32, 3, 2}, miUINT8, svhnX(2, 32, 32, 3))
		b := m.Bytes()
		_, err := Open(write(t, b[:len(b)-1000]), Options{})
		wantErr(t, err, "train_32x32.mat", "truncated matrix element 0")
	})
	t.Run("missing-var", func(t *testing.T) {
		m := newMatW(false)
		m.add(t, false, "X", mxUINT8, []int{32, 32, 3, 1}, miUINT8, svhnX(1, 32, 32, 3))
		_, err := Open(write(t, m.Bytes()), Options{})
		wantErr(t, err, "train_32x32.mat", `no variable "y"`)
	})
}

// TestSVHNScipy cross-checks the MAT reader against scipy.io.savemat when
// python3 with numpy and scipy is available.
func TestSVHNScipy(t *testing.T) {
	py := systemPython(t)
	dir := t.TempDir()
	script := `
import sys, numpy as np, scipy.io as sio
d = sys.argv[1]
for name, n, comp in (("train_32x32.mat", 3, True), ("test_32x32.mat", 2, False)):
    X = np.zeros((32, 32, 3, n), dtype=np.uint8)
    for k in range(n):
        for c in range(3):
            for y in range(32):
                for x in range(32):
                    X[y, x, c, k] = (11*k + 5*c + 3*y + x) % 256
    y = np.array([[10], [2], [7]][:n], dtype=np.float64)
    sio.savemat(d + "/" + name, {"X": X, "y": y}, do_compression=comp)
`
	if out, err := exec.Command(py, "-c", script, dir).CombinedOutput(); err != nil {
		t.Skipf("python3 with numpy and scipy unavailable: %v: %s", err, out)
	}
	d, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Train.Len() != 3 || d.Test.Len() != 2 || d.Train.Label(0) != 0 || d.Train.Label(2) != 7 || d.Test.Label(1) != 2 {
		t.Fatalf("len %d/%d labels %d %d %d", d.Train.Len(), d.Test.Len(), d.Train.Label(0), d.Train.Label(2), d.Test.Label(1))
	}
	for _, s := range []*Split{d.Train, d.Test} {
		for n := range s.Len() {
			got := batchOf(t, s, n)
			for c := range 3 {
				for y := range 32 {
					for x := range 32 {
						if want := float32((11*n+5*c+3*y+x)%256) / 255; got[c*1024+y*32+x] != want {
							t.Fatalf("image %d (c=%d,y=%d,x=%d) = %v, want %v", n, c, y, x, got[c*1024+y*32+x], want)
						}
					}
				}
			}
		}
	}
}

func FuzzMAT(f *testing.F) {
	m := newMatW(false)
	m.add(f, false, "X", mxUINT8, []int{2, 2, 1, 1}, miUINT8, []byte{1, 2, 3, 4})
	m.add(f, false, "y", mxDOUBLE, []int{1, 1}, miDOUBLE, m.f64s([]float64{3}))
	f.Add(m.Bytes())
	m = newMatW(true)
	m.add(f, false, "y", mxDOUBLE, []int{2, 1}, miINT16, []byte{0, 1, 0, 2})
	f.Add(m.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		vars, err := readMAT(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, v := range vars {
			if v.err != nil {
				continue
			}
			n := 1
			for _, d := range v.dims {
				n *= d
			}
			if n != len(v.u8)+len(v.f64) {
				t.Fatalf("%s: dims %v, %d values", v.name, v.dims, len(v.u8)+len(v.f64))
			}
		}
	})
}
