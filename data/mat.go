package data

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"

	"github.com/unlearn-tool/unlearn/internal/fsread"
)

// A reader for MATLAB level-5 MAT files, enough for SVHN's format 2 files:
// top-level miMATRIX and miCOMPRESSED (zlib) elements holding real, non-sparse
// uint8 or double arrays. Anything else is recorded per variable and reported
// only when that variable is asked for.

// MAT v5 data types.
const (
	miINT8       = 1
	miUINT8      = 2
	miINT16      = 3
	miUINT16     = 4
	miINT32      = 5
	miUINT32     = 6
	miSINGLE     = 7
	miDOUBLE     = 9
	miINT64      = 12
	miUINT64     = 13
	miMATRIX     = 14
	miCOMPRESSED = 15
)

// MAT v5 array classes.
const (
	mxDOUBLE = 6
	mxUINT8  = 9
)

var mxClassNames = map[uint32]string{
	1: "cell", 2: "struct", 3: "object", 4: "char", 5: "sparse", 6: "double", 7: "single",
	8: "int8", 9: "uint8", 10: "int16", 11: "uint16", 12: "int32", 13: "uint32", 14: "int64", 15: "uint64",
}

var miSizes = map[uint32]int{
	miINT8: 1, miUINT8: 1, miINT16: 2, miUINT16: 2, miINT32: 4, miUINT32: 4,
	miSINGLE: 4, miDOUBLE: 8, miINT64: 8, miUINT64: 8,
}

// matVar is one variable of a MAT file.
type matVar struct {
	name  string
	dims  []int   // MATLAB order (column-major)
	u8    []uint8 // class uint8
	f64   []float64
	class uint32
	err   error // why the variable could not be decoded
}

type matReader struct {
	bo   binary.ByteOrder
	vars map[string]*matVar
}

// readMAT reads every top-level variable of a MAT v5 stream. size bounds the
// stream length (for allocation checks).
func readMAT(r io.Reader) (map[string]*matVar, error) {
	var hdr [128]byte
	if n, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, fmt.Errorf("truncated header: expected 128 bytes, got %d", n)
	}
	if bytes.HasPrefix(hdr[:], []byte("\x89HDF")) || bytes.Contains(hdr[:116], []byte("MATLAB 7.3")) {
		return nil, errors.New("MAT v7.3 (HDF5) files are not supported; save with -v7 or scipy.io.savemat")
	}
	m := &matReader{vars: map[string]*matVar{}}
	switch string(hdr[126:128]) {
	case "IM":
		m.bo = binary.LittleEndian
	case "MI":
		m.bo = binary.BigEndian
	default:
		return nil, fmt.Errorf("wrong magic number: endian indicator %q, want \"IM\" or \"MI\" (not a MAT v5 file)",
			hdr[126:128])
	}
	if v := m.bo.Uint16(hdr[124:126]); v != 0x0100 {
		return nil, fmt.Errorf("unsupported MAT version 0x%04X (want 0x0100)", v)
	}
	if err := m.elements(r, true); err != nil {
		return nil, err
	}
	return m.vars, nil
}

// elements reads top-level data elements until a clean end of stream.
func (m *matReader) elements(r io.Reader, top bool) error {
	for k := 0; ; k++ {
		var tag [8]byte
		n, err := io.ReadFull(r, tag[:])
		if n == 0 && err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("element %d: truncated tag: expected 8 bytes, got %d", k, n)
		}
		typ, size := m.bo.Uint32(tag[:4]), m.bo.Uint32(tag[4:])
		if typ>>16 != 0 {
			return fmt.Errorf("element %d: small data element at top level (type %d)", k, typ&0xffff)
		}
		switch typ {
		case miCOMPRESSED:
			if !top {
				return fmt.Errorf("element %d: nested compressed element", k)
			}
			comp, err := readExact(r, int64(size), fmt.Sprintf("compressed element %d", k))
			if err != nil {
				return err
			}
			zr, err := zlib.NewReader(bytes.NewReader(comp))
			if err != nil {
				return fmt.Errorf("compressed element %d: %w", k, err)
			}
			if err := m.elements(zr, false); err != nil {
				return fmt.Errorf("compressed element %d: %w", k, err)
			}
			zr.Close()
		case miMATRIX:
			body, err := readExact(r, int64(size), fmt.Sprintf("matrix element %d", k))
			if err != nil {
				return err
			}
			v := m.matrix(body)
			if v.name == "" {
				v.name = fmt.Sprintf("#%d", len(m.vars))
			}
			m.vars[v.name] = v
			if pad := (8 - size%8) % 8; pad != 0 {
				if _, err := io.ReadFull(r, make([]byte, pad)); err != nil && err != io.EOF {
					return fmt.Errorf("element %d: truncated padding", k)
				}
			}
		default:
			// Skip other element types.
			if _, err := readExact(r, int64(size)+int64((8-size%8)%8), fmt.Sprintf("element %d", k)); err != nil {
				return err
			}
		}
	}
}

// sub reads one sub-element of a matrix from b, honouring the small data
// element format and 8-byte padding; it returns the type, the data and the
// rest of b.
func (m *matReader) sub(b []byte) (uint32, []byte, []byte, error) {
	if len(b) < 8 {
		return 0, nil, nil, fmt.Errorf("truncated sub-element tag: expected 8 bytes, got %d", len(b))
	}
	w := m.bo.Uint32(b[:4])
	if w>>16 != 0 { // small data element: type and size share the first word
		n := int(w >> 16)
		if n > 4 {
			return 0, nil, nil, fmt.Errorf("small data element of %d bytes (max 4)", n)
		}
		return w & 0xffff, b[4 : 4+n], b[8:], nil
	}
	n := int64(m.bo.Uint32(b[4:8]))
	if n > int64(len(b)-8) {
		return 0, nil, nil, fmt.Errorf("truncated sub-element: expected %d bytes, got %d", n, len(b)-8)
	}
	end := 8 + n
	padded := end + (8-n%8)%8
	if padded > int64(len(b)) {
		padded = int64(len(b))
	}
	return w, b[8:end], b[padded:], nil
}

// matrix decodes the body of a miMATRIX element; failures are recorded in
// the returned variable's err (with its name when that much was readable).
func (m *matReader) matrix(b []byte) *matVar {
	v := &matVar{}
	fail := func(format string, args ...any) *matVar {
		v.err = fmt.Errorf(format, args...)
		return v
	}
	typ, flags, b, err := m.sub(b)
	if err != nil {
		return fail("array flags: %v", err)
	}
	if typ != miUINT32 || len(flags) < 8 {
		return fail("array flags: bad element (type %d, %d bytes)", typ, len(flags))
	}
	f := m.bo.Uint32(flags[:4])
	v.class = f & 0xff
	typ, dims, b, err := m.sub(b)
	if err != nil {
		return fail("dimensions: %v", err)
	}
	if typ != miINT32 || len(dims)%4 != 0 || len(dims) < 8 {
		return fail("dimensions: bad element (type %d, %d bytes)", typ, len(dims))
	}
	d64 := make([]int64, len(dims)/4)
	v.dims = make([]int, len(d64))
	for i := range d64 {
		d := int32(m.bo.Uint32(dims[4*i:]))
		if d < 0 {
			return fail("negative dimension %d", d)
		}
		d64[i], v.dims[i] = int64(d), int(d)
	}
	typ, name, b, err := m.sub(b)
	if err != nil {
		return fail("array name: %v", err)
	}
	if typ != miINT8 && typ != miUINT8 {
		return fail("array name: bad element type %d", typ)
	}
	v.name = string(name)
	cname := mxClassNames[v.class]
	if cname == "" {
		cname = fmt.Sprintf("class %d", v.class)
	}
	if v.class != mxDOUBLE && v.class != mxUINT8 {
		return fail("%s arrays are not supported (only uint8 and double)", cname)
	}
	if f&0x800 != 0 {
		return fail("complex arrays are not supported")
	}
	count, ok := mulSize(maxElems, d64...)
	if !ok {
		return fail("dimensions %v are too large", v.dims)
	}
	typ, re, _, err := m.sub(b)
	if err != nil {
		return fail("real part: %v", err)
	}
	esz, ok := miSizes[typ]
	if !ok {
		return fail("real part: unsupported data type %d", typ)
	}
	if int64(len(re)) != count*int64(esz) {
		return fail("real part holds %d values, dimensions %v need %d", len(re)/esz, v.dims, count)
	}
	if v.class == mxUINT8 {
		if typ != miUINT8 {
			return fail("uint8 array stored as data type %d (want miUINT8)", typ)
		}
		v.u8 = re
		return v
	}
	v.f64 = make([]float64, count)
	for i := range v.f64 {
		p := re[i*esz:]
		switch typ {
		case miINT8:
			v.f64[i] = float64(int8(p[0]))
		case miUINT8:
			v.f64[i] = float64(p[0])
		case miINT16:
			v.f64[i] = float64(int16(m.bo.Uint16(p)))
		case miUINT16:
			v.f64[i] = float64(m.bo.Uint16(p))
		case miINT32:
			v.f64[i] = float64(int32(m.bo.Uint32(p)))
		case miUINT32:
			v.f64[i] = float64(m.bo.Uint32(p))
		case miSINGLE:
			v.f64[i] = float64(math.Float32frombits(m.bo.Uint32(p)))
		case miDOUBLE:
			v.f64[i] = math.Float64frombits(m.bo.Uint64(p))
		case miINT64:
			v.f64[i] = float64(int64(m.bo.Uint64(p)))
		case miUINT64:
			v.f64[i] = float64(m.bo.Uint64(p))
		}
	}
	return v
}

// matGet returns variable name of vars or an error naming it.
func matGet(vars map[string]*matVar, name string) (*matVar, error) {
	v, ok := vars[name]
	if !ok {
		return nil, fmt.Errorf("no variable %q", name)
	}
	if v.err != nil {
		return nil, fmt.Errorf("variable %q: %w", name, v.err)
	}
	return v, nil
}

func isSVHNDir(dir string) bool { return exists(filepath.Join(dir, "train_32x32.mat")) }

// readSVHN reads one SVHN format-2 file: X uint8 [H,W,C,N] column-major,
// y [N,1] with labels 1..10 where 10 stands for digit 0.
func readSVHN(path string) (*Split, error) {
	f, err := fsread.Open(path, "data file")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	vars, err := readMAT(f)
	if err != nil {
		return nil, wrapFile(path, err)
	}
	x, err := matGet(vars, "X")
	if err != nil {
		return nil, wrapFile(path, err)
	}
	y, err := matGet(vars, "y")
	if err != nil {
		return nil, wrapFile(path, err)
	}
	if x.u8 == nil {
		return nil, fileErr(path, "variable \"X\" is %s, want uint8", mxClassNames[x.class])
	}
	if len(x.dims) != 4 || x.dims[0] == 0 || x.dims[1] == 0 || x.dims[2] == 0 {
		return nil, fileErr(path, "variable \"X\" has dimensions %v, want [H W C N]", x.dims)
	}
	h, w, c, n := x.dims[0], x.dims[1], x.dims[2], x.dims[3]
	if len(y.dims) != 2 || (y.dims[0] != 1 && y.dims[1] != 1) {
		return nil, fileErr(path, "variable \"y\" has dimensions %v, want [N 1]", y.dims)
	}
	ny := y.dims[0] * y.dims[1]
	if ny != n {
		return nil, fileErr(path, "inconsistent counts: X holds %d images, y holds %d labels", n, ny)
	}
	labels := make([]int32, n)
	for i := range n {
		var l float64
		if y.u8 != nil {
			l = float64(y.u8[i])
		} else {
			l = y.f64[i]
		}
		if l != math.Trunc(l) || l < 1 || l > 10 {
			return nil, fileErr(path, "y[%d] = %v: label out of range (SVHN labels are 1..10)", i, l)
		}
		labels[i] = int32(l) % 10
	}
	chw, hw := c*h*w, h*w
	pix := make([]uint8, n*chw)
	for k := range n {
		src := x.u8[k*chw : (k+1)*chw]
		dst := pix[k*chw : (k+1)*chw]
		for ci := range c {
			for hi := range h {
				for wi := range w {
					dst[ci*hw+hi*w+wi] = src[hi+h*wi+hw*ci]
				}
			}
		}
	}
	s, err := NewSplitU8(c, h, w, pix, labels)
	if err != nil {
		return nil, wrapFile(path, err)
	}
	s.src = path
	return s, nil
}

var svhnClassNames = []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}

func openSVHN(dir string) (*Dataset, int, error) {
	train, err := readSVHN(filepath.Join(dir, "train_32x32.mat"))
	if err != nil {
		return nil, 0, err
	}
	test, err := readSVHN(filepath.Join(dir, "test_32x32.mat"))
	if err != nil {
		return nil, 0, err
	}
	return &Dataset{Format: FormatSVHN, Train: train, Test: test,
		ClassNames: append([]string(nil), svhnClassNames...)}, 10, nil
}
