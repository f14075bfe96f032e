package data

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/unlearn-tool/unlearn/internal/fsread"
)

// idxFile is a decoded IDX file with unsigned-byte data.
type idxFile struct {
	dims []int
	data []uint8
}

// maybeGunzip returns a reader over the decompressed contents when r starts
// with the gzip magic number, else over r itself.
func maybeGunzip(r io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	head, _ := br.Peek(2)
	if len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("bad gzip stream: %w", err)
		}
		return zr, nil
	}
	return br, nil
}

// decodeIDX reads an IDX file (gzip-compressed or not) holding unsigned bytes
// with wantDims dimensions (0: any).
func decodeIDX(r io.Reader, wantDims int) (*idxFile, error) {
	r, err := maybeGunzip(r)
	if err != nil {
		return nil, err
	}
	var hdr [4]byte
	if n, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, fmt.Errorf("truncated header: expected 4 bytes, got %d", n)
	}
	magic := binary.BigEndian.Uint32(hdr[:])
	if hdr[0] != 0 || hdr[1] != 0 || hdr[3] == 0 || (wantDims > 0 && int(hdr[3]) != wantDims) {
		if wantDims > 0 {
			return nil, fmt.Errorf("wrong magic number 0x%08X (want 0x%08X: unsigned bytes, %d dimensions)",
				magic, 0x0800|wantDims, wantDims)
		}
		return nil, fmt.Errorf("wrong magic number 0x%08X (not an IDX file)", magic)
	}
	if hdr[2] != 0x08 {
		return nil, fmt.Errorf("unsupported IDX data type 0x%02X (magic 0x%08X); only unsigned bytes (0x08) are supported",
			hdr[2], magic)
	}
	nd := int(hdr[3])
	raw := make([]byte, 4*nd)
	if n, err := io.ReadFull(r, raw); err != nil {
		return nil, fmt.Errorf("truncated header: expected %d bytes of dimensions, got %d", len(raw), n)
	}
	dims := make([]int, nd)
	d64 := make([]int64, nd)
	for i := range dims {
		v := binary.BigEndian.Uint32(raw[4*i:])
		dims[i], d64[i] = int(v), int64(v)
	}
	size, ok := mulSize(maxElems, d64...)
	if !ok {
		return nil, fmt.Errorf("dimensions %v are too large", dims)
	}
	data, err := readExact(r, size, "data")
	if err != nil {
		return nil, err
	}
	// The header fixes the size exactly: bytes after the data mean a file
	// that is not what its header says (a concatenation, a wrong header),
	// so it is refused rather than read in part.
	var extra [1]byte
	if n, _ := io.ReadFull(r, extra[:]); n > 0 {
		return nil, fmt.Errorf("trailing bytes after the %d bytes of data that dimensions %v hold", size, dims)
	}
	return &idxFile{dims: dims, data: data}, nil
}

// readIDXFile opens path and decodes it; errors name the file.
func readIDXFile(path string, wantDims int) (*idxFile, error) {
	f, err := fsread.Open(path, "data file")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	x, err := decodeIDX(f, wantDims)
	if err != nil {
		return nil, wrapFile(path, err)
	}
	return x, nil
}

// idxNames lists the file name stems of the MNIST-family layout.
var idxNames = map[string][2]string{
	"train": {"train-images-idx3-ubyte", "train-labels-idx1-ubyte"},
	"test":  {"t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"},
}

// findIDX returns the path of stem or stem.gz in dir (uncompressed first),
// or "" when neither exists. Some mirrors name the files "train-images.idx3-ubyte";
// that spelling is accepted too.
func findIDX(dir, stem string) string {
	alt := strings.Replace(stem, "-idx", ".idx", 1)
	for _, name := range []string{stem, stem + ".gz", alt, alt + ".gz"} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

func isIDXDir(dir string) bool { return findIDX(dir, idxNames["train"][0]) != "" }

// readIDXSplit reads one split's images and labels files.
func readIDXSplit(dir, split string) (*Split, error) {
	names := idxNames[split]
	ip, lp := findIDX(dir, names[0]), findIDX(dir, names[1])
	if ip == "" {
		return nil, fileErr(filepath.Join(dir, names[0]+".gz"), "missing (neither %s nor %s.gz exists)", names[0], names[0])
	}
	if lp == "" {
		return nil, fileErr(filepath.Join(dir, names[1]+".gz"), "missing (neither %s nor %s.gz exists)", names[1], names[1])
	}
	img, err := readIDXFile(ip, 3)
	if err != nil {
		return nil, err
	}
	lab, err := readIDXFile(lp, 1)
	if err != nil {
		return nil, err
	}
	if img.dims[0] != lab.dims[0] {
		return nil, fmt.Errorf("%s: inconsistent counts: %d images but %s has %d labels",
			ip, img.dims[0], filepath.Base(lp), lab.dims[0])
	}
	if img.dims[1] == 0 || img.dims[2] == 0 {
		return nil, fileErr(ip, "empty image size %d×%d", img.dims[1], img.dims[2])
	}
	labels := make([]int32, len(lab.data))
	for i, v := range lab.data {
		labels[i] = int32(v)
	}
	s, err := NewSplitU8(1, img.dims[1], img.dims[2], img.data, labels)
	if err != nil {
		return nil, wrapFile(ip, err)
	}
	s.src = lp
	return s, nil
}

func openIDX(dir string) (*Dataset, int, error) {
	train, err := readIDXSplit(dir, "train")
	if err != nil {
		return nil, 0, err
	}
	test, err := readIDXSplit(dir, "test")
	if err != nil {
		return nil, 0, err
	}
	return &Dataset{Format: FormatIDX, Train: train, Test: test}, 0, nil
}
