package data

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

func pngBytes(t *testing.T, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// rgbImage has pixel (x, y) = (seed+x, seed+10*y, seed+x+y).
func rgbImage(seed, h, w int) image.Image {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetNRGBA(x, y, color.NRGBA{uint8(seed + x), uint8(seed + 10*y), uint8(seed + x + y), 255})
		}
	}
	return img
}

func grayImage(seed, h, w int) image.Image {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetGray(x, y, color.Gray{uint8(seed + 4*y + x)})
		}
	}
	return img
}

func TestImageFolderRGB(t *testing.T) {
	root := filepath.Join(t.TempDir(), "pets")
	// classes sorted: cat (0), dog (1); ImageFolder order: class, folder, file name
	files := []struct {
		path string
		seed int
	}{
		{"train/dog/b.png", 40}, {"train/dog/a.png", 30}, {"train/cat/z.jpg.txt", 0},
		{"train/cat/2.PNG", 20}, {"train/cat/10.png", 10}, {"train/cat/sub/0.png", 50},
		{"test/dog/x.png", 60},
	}
	for _, f := range files {
		if f.seed == 0 {
			writeFile(t, root, f.path, []byte("not an image, ignored (extension)"))
			continue
		}
		writeFile(t, root, f.path, pngBytes(t, rgbImage(f.seed, 3, 4)))
	}
	d, err := Open(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Format != FormatImageFolder || d.Classes != 2 || d.ClassNames[0] != "cat" || d.ClassNames[1] != "dog" {
		t.Fatalf("format %q classes %d %q", d.Format, d.Classes, d.ClassNames)
	}
	if d.Train.Len() != 5 || d.Test.Len() != 1 || d.Train.Shape() != [3]int{3, 3, 4} {
		t.Fatalf("%d/%d examples of %v", d.Train.Len(), d.Test.Len(), d.Train.Shape())
	}
	// cat/10.png < cat/2.PNG (folder cat) < cat/sub/0.png, then dog/a.png, dog/b.png
	wantSeeds := []int{10, 20, 50, 30, 40}
	wantLabels := []int{0, 0, 0, 1, 1}
	for i := range 5 {
		if d.Train.Label(i) != wantLabels[i] {
			t.Errorf("label %d = %d", i, d.Train.Label(i))
		}
		s := wantSeeds[i]
		// (c, y, x) = (1, 2, 3): green at row 2 = seed + 20
		if got, want := pixel(t, d.Train, i, 1, 2, 3), float32(s+20)/255; !near(got, want) {
			t.Errorf("example %d green(2,3) = %v, want %v (seed %d)", i, got, want, s)
		}
		if got, want := pixel(t, d.Train, i, 2, 1, 3), float32(s+4)/255; !near(got, want) {
			t.Errorf("example %d blue(1,3) = %v, want %v", i, got, want)
		}
		if got, want := pixel(t, d.Train, i, 0, 0, 3), float32(s+3)/255; !near(got, want) {
			t.Errorf("example %d red(0,3) = %v, want %v", i, got, want)
		}
	}
	if d.Test.Label(0) != 1 {
		t.Errorf("test label %d", d.Test.Label(0))
	}
}

func TestImageFolderGray(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "train/0/a.png", pngBytes(t, grayImage(1, 2, 3)))
	writeFile(t, root, "train/1/a.png", pngBytes(t, grayImage(2, 2, 3)))
	writeFile(t, root, "test/1/a.png", pngBytes(t, grayImage(3, 2, 3)))
	d, err := Open(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Train.Shape() != [3]int{1, 2, 3} {
		t.Fatalf("shape %v", d.Train.Shape())
	}
	if got, want := pixel(t, d.Train, 1, 0, 1, 2), float32(2+4+2)/255; !near(got, want) {
		t.Errorf("pixel = %v, want %v", got, want)
	}
	// one RGB image makes the whole dataset RGB, gray replicated
	writeFile(t, root, "test/0/b.png", pngBytes(t, rgbImage(5, 2, 3)))
	d, err = Open(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Train.Shape() != [3]int{3, 2, 3} {
		t.Fatalf("shape %v", d.Train.Shape())
	}
	for c := range 3 {
		if got, want := pixel(t, d.Train, 0, c, 1, 1), float32(1+4+1)/255; !near(got, want) {
			t.Errorf("channel %d = %v, want %v", c, got, want)
		}
	}
	// test examples: class 0 (b.png) before class 1
	if d.Test.Label(0) != 0 || d.Test.Label(1) != 1 {
		t.Errorf("test labels %d %d", d.Test.Label(0), d.Test.Label(1))
	}
}

func TestImageFolder16Bit(t *testing.T) {
	root := t.TempDir()
	img := image.NewGray16(image.Rect(0, 0, 2, 2))
	img.SetGray16(1, 0, color.Gray16{Y: 0x8000})
	writeFile(t, root, "train/a/0.png", pngBytes(t, img))
	writeFile(t, root, "test/a/0.png", pngBytes(t, grayImage(0, 2, 2)))
	d, err := Open(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Train.Is8Bit() {
		t.Fatal("16-bit source stored as 8-bit")
	}
	if got, want := pixel(t, d.Train, 0, 0, 0, 1), float32(0x8000)/65535; !near(got, want) {
		t.Errorf("pixel = %v, want %v", got, want)
	}
}

func TestImageFolderErrors(t *testing.T) {
	t.Run("size", func(t *testing.T) {
		root := t.TempDir()
		writeFile(t, root, "train/a/0.png", pngBytes(t, grayImage(0, 2, 3)))
		writeFile(t, root, "train/a/1.png", pngBytes(t, grayImage(0, 3, 3)))
		writeFile(t, root, "test/a/0.png", pngBytes(t, grayImage(0, 2, 3)))
		_, err := Open(root, Options{})
		wantErr(t, err, filepath.Join("train", "a", "1.png"), "image size mismatch: 3×3", "0.png is 2×3")
	})
	// A header that claims 30000×30000 pixels is refused from the header,
	// before anything is decoded (three such files used to take 4.4 GB).
	t.Run("huge-header", func(t *testing.T) {
		root := t.TempDir()
		huge := pngHeaderSize(t, pngBytes(t, grayImage(0, 2, 3)), 30000, 30000)
		if cfg, err := png.DecodeConfig(bytes.NewReader(huge)); err != nil || cfg.Width != 30000 {
			t.Fatalf("patched header: %v %v", cfg, err)
		}
		for _, f := range []string{"train/a/0.png", "train/a/1.png", "test/a/0.png"} {
			writeFile(t, root, f, huge)
		}
		_, err := Open(root, Options{})
		wantErr(t, err, filepath.Join("train", "a", "0.png"), "30000×30000", "more than the")
	})
	// A class folder that is a link is followed in both splits (test/ used
	// to skip it silently, train/ to fail); a link to a folder inside a
	// class folder is refused, naming it.
	t.Run("symlinked class folder", func(t *testing.T) {
		root, elsewhere := t.TempDir(), t.TempDir()
		writeFile(t, root, "train/a/0.png", pngBytes(t, grayImage(0, 2, 3)))
		writeFile(t, elsewhere, "b-train/0.png", pngBytes(t, grayImage(1, 2, 3)))
		writeFile(t, elsewhere, "b-test/0.png", pngBytes(t, grayImage(2, 2, 3)))
		writeFile(t, elsewhere, "b-test/1.png", pngBytes(t, grayImage(3, 2, 3)))
		writeFile(t, root, "test/a/0.png", pngBytes(t, grayImage(4, 2, 3)))
		for split, target := range map[string]string{"train": "b-train", "test": "b-test"} {
			if err := os.Symlink(filepath.Join(elsewhere, target), filepath.Join(root, split, "b")); err != nil {
				t.Fatal(err)
			}
		}
		ds, err := Open(root, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if ds.Train.Len() != 2 || ds.Test.Len() != 3 {
			t.Errorf("train %d, test %d images; want 2 and 3", ds.Train.Len(), ds.Test.Len())
		}
		if err := os.Symlink(filepath.Join(elsewhere, "b-test"), filepath.Join(root, "test", "a", "more")); err != nil {
			t.Fatal(err)
		}
		_, err = Open(root, Options{})
		wantErr(t, err, filepath.Join("test", "a", "more"), "not followed")
	})
	t.Run("unreadable", func(t *testing.T) {
		root := t.TempDir()
		writeFile(t, root, "train/a/0.png", pngBytes(t, grayImage(0, 2, 3)))
		writeFile(t, root, "test/a/bad.jpg", []byte("this is no jpeg"))
		_, err := Open(root, Options{})
		wantErr(t, err, filepath.Join("test", "a", "bad.jpg"), "unreadable image")
	})
	t.Run("truncated-png", func(t *testing.T) {
		root := t.TempDir()
		b := pngBytes(t, rgbImage(0, 8, 8))
		writeFile(t, root, "train/a/0.png", b[:len(b)-20])
		writeFile(t, root, "test/a/0.png", b)
		_, err := Open(root, Options{})
		wantErr(t, err, filepath.Join("train", "a", "0.png"), "unreadable image")
	})
	t.Run("unknown-class", func(t *testing.T) {
		root := t.TempDir()
		writeFile(t, root, "train/a/0.png", pngBytes(t, grayImage(0, 2, 3)))
		writeFile(t, root, "test/b/0.png", pngBytes(t, grayImage(0, 2, 3)))
		_, err := Open(root, Options{})
		wantErr(t, err, `class folder "b" does not exist`)
	})
	t.Run("unsupported", func(t *testing.T) {
		root := t.TempDir()
		writeFile(t, root, "train/a/0.png", pngBytes(t, grayImage(0, 2, 3)))
		writeFile(t, root, "train/a/1.bmp", []byte("BM"))
		writeFile(t, root, "test/a/0.png", pngBytes(t, grayImage(0, 2, 3)))
		_, err := Open(root, Options{})
		wantErr(t, err, "1.bmp", "not supported")
	})
}

func TestImageFolderJPEG(t *testing.T) {
	root := t.TempDir()
	img := image.NewGray(image.Rect(0, 0, 16, 8))
	for i := range img.Pix {
		img.Pix[i] = 128
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "train/a/0.jpeg", b.Bytes())
	writeFile(t, root, "test/a/0.JPG", b.Bytes())
	d, err := Open(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Train.Shape() != [3]int{1, 8, 16} || d.Test.Len() != 1 {
		t.Fatalf("shape %v, %d test", d.Train.Shape(), d.Test.Len())
	}
	if got := pixel(t, d.Test, 0, 0, 7, 15); got < 126.0/255 || got > 130.0/255 {
		t.Errorf("pixel %v, want about 128/255", got)
	}
}

// pngHeaderSize returns b (a PNG) with its IHDR width and height set to w
// and h and the chunk's CRC recomputed: a small file whose header lies.
func pngHeaderSize(t *testing.T, b []byte, w, h uint32) []byte {
	t.Helper()
	b = append([]byte(nil), b...)
	// 8-byte signature, then IHDR: length (4), type (4), data (13), CRC (4).
	if string(b[12:16]) != "IHDR" {
		t.Fatal("no IHDR chunk first")
	}
	binary.BigEndian.PutUint32(b[16:20], w)
	binary.BigEndian.PutUint32(b[20:24], h)
	binary.BigEndian.PutUint32(b[29:33], crc32.ChecksumIEEE(b[12:29]))
	return b
}
