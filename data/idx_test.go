package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// writeIDXDir writes a 2-class MNIST-family folder with nTrain/nTest images
// of h×w whose pixel (y,x) of image i is (i*31 + y*w + x) % 256, labels i%2.
func writeIDXDir(t *testing.T, dir string, nTrain, nTest, h, w int, compress bool) {
	t.Helper()
	for _, sp := range []struct {
		img, lab string
		n        int
	}{{"train-images-idx3-ubyte", "train-labels-idx1-ubyte", nTrain}, {"t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", nTest}} {
		pix := make([]byte, sp.n*h*w)
		labels := make([]byte, sp.n)
		for i := range sp.n {
			labels[i] = byte(i % 2)
			for p := range h * w {
				pix[i*h*w+p] = byte((i*31 + p) % 256)
			}
		}
		ib, lb := idxBytes([]int{sp.n, h, w}, pix), idxBytes([]int{sp.n}, labels)
		in, ln := sp.img, sp.lab
		if compress {
			ib, lb, in, ln = gz(t, ib), gz(t, lb), in+".gz", ln+".gz"
		}
		writeFile(t, dir, in, ib)
		writeFile(t, dir, ln, lb)
	}
}

func TestIDX(t *testing.T) {
	for _, compress := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "tiny-mnist")
		writeIDXDir(t, dir, 5, 3, 4, 3, compress)
		d, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if d.Format != FormatIDX || d.Name != "tiny-mnist" || d.Classes != 2 {
			t.Fatalf("got format %q name %q classes %d", d.Format, d.Name, d.Classes)
		}
		if d.Train.Len() != 5 || d.Test.Len() != 3 || d.Train.Shape() != [3]int{1, 4, 3} {
			t.Fatalf("got %d/%d examples of %v", d.Train.Len(), d.Test.Len(), d.Train.Shape())
		}
		for i := range 5 {
			if d.Train.Label(i) != i%2 {
				t.Errorf("train label %d = %d", i, d.Train.Label(i))
			}
		}
		// pixel (y=2, x=1) of image 3: (3*31 + 2*3 + 1) % 256 = 100
		if got := pixel(t, d.Train, 3, 0, 2, 1); !near(got, 100.0/255) {
			t.Errorf("compress=%v: pixel = %v, want %v", compress, got, 100.0/255)
		}
		if got := pixel(t, d.Test, 2, 0, 0, 0); !near(got, 62.0/255) {
			t.Errorf("test pixel = %v, want %v", got, 62.0/255)
		}
	}
}

func TestIDXErrors(t *testing.T) {
	// Bytes after the data the header promises are refused (they used to
	// be ignored), compressed or not.
	for _, compress := range []bool{false, true} {
		t.Run("trailing bytes", func(t *testing.T) {
			dir := t.TempDir()
			writeIDXDir(t, dir, 2, 2, 2, 2, false)
			b, name := append(idxBytes([]int{2}, []byte{0, 1}), 7), "train-labels-idx1-ubyte"
			if compress {
				os.Remove(filepath.Join(dir, name))
				b, name = gz(t, b), name+".gz"
			}
			writeFile(t, dir, name, b)
			_, err := Open(dir, Options{})
			wantErr(t, err, name, "trailing bytes after the 2 bytes")
		})
	}
	t.Run("magic", func(t *testing.T) {
		dir := t.TempDir()
		writeIDXDir(t, dir, 2, 2, 2, 2, false)
		// a labels file (1 dim) where images (3 dims) belong
		writeFile(t, dir, "train-images-idx3-ubyte", idxBytes([]int{2}, []byte{0, 1}))
		_, err := Open(dir, Options{})
		wantErr(t, err, "train-images-idx3-ubyte", "wrong magic number 0x00000801", "0x00000803")
	})
	t.Run("datatype", func(t *testing.T) {
		dir := t.TempDir()
		writeIDXDir(t, dir, 2, 2, 2, 2, false)
		b := idxBytes([]int{2}, []byte{0, 1})
		b[2] = 0x0D
		writeFile(t, dir, "t10k-labels-idx1-ubyte", b)
		_, err := Open(dir, Options{})
		wantErr(t, err, "t10k-labels-idx1-ubyte", "unsupported IDX data type 0x0D")
	})
	t.Run("truncated", func(t *testing.T) {
		dir := t.TempDir()
		writeIDXDir(t, dir, 2, 2, 2, 2, false)
		b := idxBytes([]int{3, 2, 2}, make([]byte, 10))
		writeFile(t, dir, "train-images-idx3-ubyte", b)
		_, err := Open(dir, Options{})
		wantErr(t, err, "train-images-idx3-ubyte", "truncated data: expected 12 bytes, got 10")
	})
	t.Run("truncated-gz", func(t *testing.T) {
		dir := t.TempDir()
		writeIDXDir(t, dir, 2, 2, 2, 2, true)
		writeFile(t, dir, "train-images-idx3-ubyte.gz", gz(t, idxBytes([]int{1 << 20, 100, 100}, make([]byte, 7))))
		_, err := Open(dir, Options{})
		wantErr(t, err, "train-images-idx3-ubyte.gz", "expected 10485760000 bytes, got 7")
	})
	t.Run("counts", func(t *testing.T) {
		dir := t.TempDir()
		writeIDXDir(t, dir, 2, 2, 2, 2, false)
		writeFile(t, dir, "train-labels-idx1-ubyte", idxBytes([]int{3}, []byte{0, 1, 0}))
		_, err := Open(dir, Options{})
		wantErr(t, err, "train-images-idx3-ubyte", "inconsistent counts: 2 images", "train-labels-idx1-ubyte has 3 labels")
	})
	t.Run("label-range", func(t *testing.T) {
		dir := t.TempDir()
		writeIDXDir(t, dir, 2, 2, 2, 2, false)
		writeFile(t, dir, "t10k-labels-idx1-ubyte", idxBytes([]int{2}, []byte{0, 7}))
		_, err := Open(dir, Options{Classes: 2})
		wantErr(t, err, "t10k-labels-idx1-ubyte", "test example 1 has label 7", "[0, 2)")
	})
	t.Run("missing-test", func(t *testing.T) {
		dir := t.TempDir()
		writeIDXDir(t, dir, 2, 2, 2, 2, false)
		os.Remove(filepath.Join(dir, "t10k-images-idx3-ubyte"))
		_, err := Open(dir, Options{})
		wantErr(t, err, "t10k-images-idx3-ubyte", "missing")
	})
}

const fashionDir = "/usr/share/datasets/fashion-mnist"

func TestFashionMNIST(t *testing.T) {
	if _, err := os.Stat(filepath.Join(fashionDir, "train-images-idx3-ubyte.gz")); err != nil {
		t.Skipf("Debian's dataset-fashion-mnist is not installed (%v)", err)
	}
	d, err := Open(fashionDir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Train.Len() != 60000 || d.Test.Len() != 10000 || d.Classes != 10 || d.Train.Shape() != [3]int{1, 28, 28} {
		t.Fatalf("got %d/%d examples, %d classes, shape %v", d.Train.Len(), d.Test.Len(), d.Classes, d.Train.Shape())
	}
	if d.Name != "fashion-mnist" || d.Format != FormatIDX {
		t.Errorf("name %q format %q", d.Name, d.Format)
	}
	// Independent decode: gunzip and parse the headers with encoding/binary.
	raw := func(name string) []byte {
		f, err := os.Open(filepath.Join(fashionDir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, sp := range []struct {
		img, lab string
		s        *Split
	}{{"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", d.Train}, {"t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz", d.Test}} {
		ib, lb := raw(sp.img), raw(sp.lab)
		var ih struct{ Magic, N, H, W uint32 }
		var lh struct{ Magic, N uint32 }
		binary.Read(bytes.NewReader(ib), binary.BigEndian, &ih)
		binary.Read(bytes.NewReader(lb), binary.BigEndian, &lh)
		if ih.Magic != 0x803 || lh.Magic != 0x801 || int(ih.N) != sp.s.Len() || int(lh.N) != sp.s.Len() || ih.H != 28 || ih.W != 28 {
			t.Fatalf("%s headers %+v %+v", sp.img, ih, lh)
		}
		for _, i := range []int{0, 1, sp.s.Len() - 1} {
			if want := int(lb[8+i]); sp.s.Label(i) != want {
				t.Errorf("%s: label %d = %d, want %d", sp.lab, i, sp.s.Label(i), want)
			}
			got := batchOf(t, sp.s, i)
			for p, v := range ib[16+i*784 : 16+(i+1)*784] {
				if got[p] != float32(v)/255 {
					t.Fatalf("%s: image %d pixel %d = %v, want %v", sp.img, i, p, got[p], float32(v)/255)
				}
			}
		}
	}
	t.Logf("first training label %d", d.Train.Label(0))
}

func FuzzIDX(f *testing.F) {
	f.Add(idxBytes([]int{2, 2, 2}, []byte{1, 2, 3, 4, 5, 6, 7, 8}))
	f.Add(idxBytes([]int{3}, []byte{1, 2, 3}))
	f.Add(idxBytes([]int{0xffffffff, 0xffffffff, 0xffffffff}, nil))
	f.Add([]byte{0x1f, 0x8b, 0, 0})
	f.Add([]byte{0, 0, 8, 255, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := decodeIDX(bytes.NewReader(b), 0)
		if err != nil {
			return
		}
		n := 1
		for _, d := range x.dims {
			n *= d
		}
		if n != len(x.data) {
			t.Fatalf("dims %v but %d bytes", x.dims, len(x.data))
		}
	})
}
