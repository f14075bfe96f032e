package data

import (
	"image"
	"image/color"
	_ "image/jpeg" // register the JPEG decoder
	_ "image/png"  // register the PNG decoder
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/unlearn-tool/unlearn/internal/fsread"
)

// Image folders follow torchvision's ImageFolder: <root>/<split>/<class>/...
// with classes the sorted names of the training split's class folders.
// Within a class, files are ordered like torchvision's make_dataset: folders
// (the class folder and any nested ones) by path, files by name within each.

// decodable are the extensions we decode; torchvisionExts are the others
// torchvision would load, which we refuse rather than skip so that ids stay
// aligned with a torchvision pipeline.
var (
	decodable       = map[string]bool{".png": true, ".jpg": true, ".jpeg": true}
	torchvisionExts = map[string]bool{".ppm": true, ".bmp": true, ".pgm": true, ".tif": true, ".tiff": true, ".webp": true}
)

func isImageFolder(dir string) bool {
	for _, s := range []string{"train", "test"} {
		st, err := os.Stat(filepath.Join(dir, s))
		if err != nil || !st.IsDir() {
			return false
		}
	}
	return true
}

// classDirs returns the sorted names of the sub-folders of dir.
func classDirs(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() {
			names = append(names, e.Name())
		} else if e.Type()&fs.ModeSymlink != 0 {
			if st, err := os.Stat(filepath.Join(dir, e.Name())); err == nil && st.IsDir() {
				names = append(names, e.Name())
			}
		}
	}
	sort.Strings(names)
	return names, nil
}

// classFiles lists the image files under a class folder in torchvision order.
// A class folder that is a symbolic link is followed, in train/ and test/
// alike (torchvision's ImageFolder follows links too); a link to a folder
// inside a class folder is refused rather than skipped, so that no image is
// left out silently. Paths are reported under dir's own name.
func classFiles(dir string) ([]string, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	type entry struct{ dir, name string }
	var files []entry
	err = filepath.WalkDir(real, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel, rerr := filepath.Rel(real, p); rerr == nil {
			p = filepath.Join(dir, rel)
		}
		if d.IsDir() {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				return fileErr(p, "a link to a folder inside a class folder is not followed; "+
					"link the class folder itself, or the images")
			}
		}
		ext := strings.ToLower(filepath.Ext(d.Name()))
		if torchvisionExts[ext] {
			return fileErr(p, "%s images are not supported (only PNG and JPEG)", ext)
		}
		if decodable[ext] {
			files = append(files, entry{filepath.Dir(p), d.Name()})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(files, func(i, j int) bool {
		if files[i].dir != files[j].dir {
			return files[i].dir < files[j].dir
		}
		return files[i].name < files[j].name
	})
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = filepath.Join(f.dir, f.name)
	}
	return out, nil
}

// imageKind classifies a color model: gray or not, 16-bit or not.
func imageKind(m color.Model) (gray, deep bool) {
	switch m {
	case color.GrayModel:
		return true, false
	case color.Gray16Model:
		return true, true
	case color.RGBA64Model, color.NRGBA64Model:
		return false, true
	}
	if p, ok := m.(color.Palette); ok {
		for _, c := range p {
			r, g, b, _ := c.RGBA()
			if r != g || g != b {
				return false, false
			}
		}
		return true, false
	}
	return false, false
}

type folderExample struct {
	path  string
	label int32
}

func openImageFolder(root string) (*Dataset, int, error) {
	trainDir := filepath.Join(root, "train")
	classes, err := classDirs(trainDir)
	if err != nil {
		return nil, 0, err
	}
	if len(classes) == 0 {
		return nil, 0, fileErr(trainDir, "no class folders")
	}
	index := map[string]int32{}
	for i, c := range classes {
		index[c] = int32(i)
	}
	var splits [2][]folderExample
	splitDirs := [2]string{trainDir, filepath.Join(root, "test")}
	for si, dir := range splitDirs {
		cs, err := classDirs(dir)
		if err != nil {
			return nil, 0, err
		}
		for _, c := range cs {
			l, ok := index[c]
			if !ok {
				return nil, 0, fileErr(filepath.Join(dir, c), "class folder %q does not exist in %s", c, trainDir)
			}
			files, err := classFiles(filepath.Join(dir, c))
			if err != nil {
				return nil, 0, err
			}
			if len(files) == 0 && si == 0 {
				return nil, 0, fileErr(filepath.Join(dir, c), "class folder holds no PNG or JPEG images")
			}
			for _, f := range files {
				splits[si] = append(splits[si], folderExample{f, l})
			}
		}
		if len(splits[si]) == 0 {
			return nil, 0, fileErr(dir, "no images")
		}
	}
	// First pass: headers only, to fix the size, channel count and depth.
	var h, w int
	var first string
	allGray, deep := true, false
	for _, sp := range splits {
		for _, ex := range sp {
			cfg, err := decodeConfig(ex.path)
			if err != nil {
				return nil, 0, err
			}
			if first == "" {
				h, w, first = cfg.Height, cfg.Width, ex.path
				if h == 0 || w == 0 {
					return nil, 0, fileErr(ex.path, "empty image %d×%d", w, h)
				}
				if int64(h)*int64(w) > maxImagePixels {
					return nil, 0, fileErr(ex.path, "image of %d×%d (H×W) pixels: more than the %d a classifier input can have here",
						h, w, maxImagePixels)
				}
			} else if cfg.Height != h || cfg.Width != w {
				return nil, 0, fileErr(ex.path, "image size mismatch: %d×%d (H×W), but %s is %d×%d",
					cfg.Height, cfg.Width, first, h, w)
			}
			g, d := imageKind(cfg.ColorModel)
			allGray = allGray && g
			deep = deep || d
		}
	}
	c := 3
	if allGray {
		c = 1
	}
	// Every image is decoded into memory: check the total the headers
	// promise before the first pixel is decoded.
	need := int64(0)
	for _, sp := range splits {
		need += int64(len(sp)) * int64(c*h*w)
	}
	if deep {
		need *= 4
	}
	if avail := fsread.AvailableMemory(); avail > 0 && need > avail {
		return nil, 0, fileErr(root, "%d images of %d×%d×%d need %d bytes of memory, more than the %d available",
			len(splits[0])+len(splits[1]), c, h, w, need, avail)
	}
	var out [2]*Split
	for si, sp := range splits {
		chw := c * h * w
		labels := make([]int32, len(sp))
		var u8 []uint8
		var f32 []float32
		if deep {
			f32 = make([]float32, len(sp)*chw)
		} else {
			u8 = make([]uint8, len(sp)*chw)
		}
		for i, ex := range sp {
			labels[i] = ex.label
			img, err := decodeImage(ex.path)
			if err != nil {
				return nil, 0, err
			}
			if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
				return nil, 0, fileErr(ex.path, "image size mismatch: %d×%d (H×W) decoded, want %d×%d", b.Dy(), b.Dx(), h, w)
			}
			if deep {
				fillF32(f32[i*chw:(i+1)*chw], img, c)
			} else {
				fillU8(u8[i*chw:(i+1)*chw], img, c)
			}
		}
		var s *Split
		if deep {
			s, err = NewSplitF32(c, h, w, f32, labels)
		} else {
			s, err = NewSplitU8(c, h, w, u8, labels)
		}
		if err != nil {
			return nil, 0, err
		}
		// Forget sets may name training images by these paths (ParseForget).
		s.files = make([]string, len(sp))
		for i, ex := range sp {
			if s.files[i], err = filepath.Rel(splitDirs[si], ex.path); err != nil {
				return nil, 0, fileErr(ex.path, "not inside %s: %v", splitDirs[si], err)
			}
			s.files[i] = filepath.ToSlash(s.files[i])
		}
		out[si] = s
	}
	return &Dataset{Format: FormatImageFolder, Train: out[0], Test: out[1], ClassNames: classes}, len(classes), nil
}

// maxImagePixels bounds one image (8192×8192): a header that claims more
// is refused before anything is decoded.
const maxImagePixels = 1 << 26

func decodeConfig(path string) (image.Config, error) {
	f, err := fsread.Open(path, "data file")
	if err != nil {
		return image.Config{}, err
	}
	defer f.Close()
	cfg, _, err := image.DecodeConfig(f)
	if err != nil {
		return image.Config{}, fileErr(path, "unreadable image: %v", err)
	}
	return cfg, nil
}

func decodeImage(path string) (image.Image, error) {
	f, err := fsread.Open(path, "data file")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		return nil, fileErr(path, "unreadable image: %v", err)
	}
	return img, nil
}

// fillU8 writes img channel-first into dst (C×H×W). Alpha is dropped, not
// composited (as PIL's convert("RGB") does).
func fillU8(dst []uint8, img image.Image, c int) {
	b := img.Bounds()
	h, w := b.Dy(), b.Dx()
	hw := h * w
	switch m := img.(type) {
	case *image.Gray:
		if c == 1 {
			for y := range h {
				copy(dst[y*w:(y+1)*w], m.Pix[y*m.Stride:y*m.Stride+w])
			}
			return
		}
	case *image.NRGBA:
		if c == 3 {
			for y := range h {
				row := m.Pix[y*m.Stride:]
				for x := range w {
					dst[y*w+x] = row[4*x]
					dst[hw+y*w+x] = row[4*x+1]
					dst[2*hw+y*w+x] = row[4*x+2]
				}
			}
			return
		}
	}
	for y := range h {
		for x := range w {
			p := color.NRGBA64Model.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.NRGBA64)
			if c == 1 {
				dst[y*w+x] = uint8(p.R >> 8)
				continue
			}
			dst[y*w+x] = uint8(p.R >> 8)
			dst[hw+y*w+x] = uint8(p.G >> 8)
			dst[2*hw+y*w+x] = uint8(p.B >> 8)
		}
	}
}

// fillF32 is fillU8 for 16-bit sources: values scaled to [0,1] by 1/65535.
func fillF32(dst []float32, img image.Image, c int) {
	b := img.Bounds()
	h, w := b.Dy(), b.Dx()
	hw := h * w
	for y := range h {
		for x := range w {
			p := color.NRGBA64Model.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.NRGBA64)
			if c == 1 {
				dst[y*w+x] = float32(p.R) / 65535
				continue
			}
			dst[y*w+x] = float32(p.R) / 65535
			dst[hw+y*w+x] = float32(p.G) / 65535
			dst[2*hw+y*w+x] = float32(p.B) / 65535
		}
	}
}
