package data

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/unlearn-tool/unlearn/internal/fsread"
)

// Array is an n-dimensional array read from or written to a .npy file,
// row-major (C order). Exactly one of the data slices is set, by DType:
//
//	"|u1" U8, "|b1" U8 (0 or 1), "<i4" I32, "<i8" I64, "<f4" F32, "<f8" F64
type Array struct {
	Shape []int
	DType string
	U8    []uint8
	I32   []int32
	I64   []int64
	F32   []float32
	F64   []float64
}

// NewF32 returns a float32 Array of the given shape over v (not copied).
func NewF32(shape []int, v []float32) *Array {
	return &Array{Shape: append([]int(nil), shape...), DType: "<f4", F32: v}
}

// NewI64 returns an int64 Array of the given shape over v (not copied).
func NewI64(shape []int, v []int64) *Array {
	return &Array{Shape: append([]int(nil), shape...), DType: "<i8", I64: v}
}

// Len returns the number of elements the shape describes.
func (a *Array) Len() int {
	n := 1
	for _, d := range a.Shape {
		n *= d
	}
	return n
}

// dataLen returns the length of the data slice that DType selects.
func (a *Array) dataLen() (int, error) {
	switch a.DType {
	case "|u1", "|b1":
		return len(a.U8), nil
	case "<i4":
		return len(a.I32), nil
	case "<i8":
		return len(a.I64), nil
	case "<f4":
		return len(a.F32), nil
	case "<f8":
		return len(a.F64), nil
	}
	return 0, fmt.Errorf("unsupported dtype %q", a.DType)
}

// Float32s returns the elements converted to float32 (F32 itself when the
// dtype is <f4).
func (a *Array) Float32s() []float32 {
	if a.F32 != nil || a.DType == "<f4" {
		return a.F32
	}
	n, _ := a.dataLen()
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(a.at(i))
	}
	return out
}

// Float64s returns the elements converted to float64.
func (a *Array) Float64s() []float64 {
	if a.DType == "<f8" {
		return a.F64
	}
	n, _ := a.dataLen()
	out := make([]float64, n)
	for i := range out {
		out[i] = a.at(i)
	}
	return out
}

// Int64s returns the elements converted to int64; a float element that is
// not an integer is an error.
func (a *Array) Int64s() ([]int64, error) {
	if a.DType == "<i8" {
		return a.I64, nil
	}
	n, err := a.dataLen()
	if err != nil {
		return nil, err
	}
	out := make([]int64, n)
	for i := range out {
		switch a.DType {
		case "|u1", "|b1":
			out[i] = int64(a.U8[i])
		case "<i4":
			out[i] = int64(a.I32[i])
		default:
			v := a.at(i)
			if v != math.Trunc(v) || math.Abs(v) > 1<<62 {
				return nil, fmt.Errorf("element %d = %v is not an integer", i, v)
			}
			out[i] = int64(v)
		}
	}
	return out, nil
}

// Ints is Int64s converted to int (labels and indices).
func (a *Array) Ints() ([]int, error) {
	v, err := a.Int64s()
	if err != nil {
		return nil, err
	}
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out, nil
}

func (a *Array) at(i int) float64 {
	switch a.DType {
	case "|u1", "|b1":
		return float64(a.U8[i])
	case "<i4":
		return float64(a.I32[i])
	case "<i8":
		return float64(a.I64[i])
	case "<f4":
		return float64(a.F32[i])
	case "<f8":
		return a.F64[i]
	}
	return math.NaN()
}

var npyMagic = []byte("\x93NUMPY")

// dtypeSize maps a normalized dtype to its element size.
var dtypeSize = map[string]int{"|u1": 1, "|b1": 1, "<i4": 4, "<i8": 8, "<f4": 4, "<f8": 8}

// normDType maps the spellings numpy writes to our canonical ones.
func normDType(d string) (string, error) {
	switch d {
	case "|u1", "<u1", ">u1", "=u1", "u1":
		return "|u1", nil
	case "|b1", "<b1", ">b1", "=b1", "b1":
		return "|b1", nil
	case "<i4", "<i8", "<f4", "<f8":
		return d, nil
	}
	return "", fmt.Errorf("unsupported dtype %q (supported: |u1, |b1, <i4, <i8, <f4, <f8)", d)
}

// DecodeNPY reads one .npy stream (versions 1.0, 2.0, 3.0; little-endian or
// byte-sized dtypes; C order). Allocations never much exceed what the stream
// actually holds, whatever the header claims.
func DecodeNPY(r io.Reader) (*Array, error) {
	var pre [8]byte
	if n, err := io.ReadFull(r, pre[:]); err != nil {
		return nil, fmt.Errorf("truncated header: expected 8 bytes, got %d", n)
	}
	if !bytes.Equal(pre[:6], npyMagic) {
		return nil, fmt.Errorf("wrong magic number %q (want \"\\x93NUMPY\")", pre[:6])
	}
	var hlen int
	switch pre[6] {
	case 1:
		var b [2]byte
		if n, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf("truncated header: expected 2 bytes of header length, got %d", n)
		}
		hlen = int(binary.LittleEndian.Uint16(b[:]))
	case 2, 3:
		var b [4]byte
		if n, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf("truncated header: expected 4 bytes of header length, got %d", n)
		}
		hlen = int(binary.LittleEndian.Uint32(b[:]))
		if hlen > 1<<20 {
			return nil, fmt.Errorf("header length %d is absurd", hlen)
		}
	default:
		return nil, fmt.Errorf("unsupported .npy version %d.%d", pre[6], pre[7])
	}
	hdr, err := readExact(r, int64(hlen), "header")
	if err != nil {
		return nil, err
	}
	descr, fortran, shape, err := parseNPYHeader(string(hdr))
	if err != nil {
		return nil, err
	}
	if fortran {
		return nil, errors.New("fortran_order True is not supported (save a C-contiguous array)")
	}
	dt, err := normDType(descr)
	if err != nil {
		return nil, err
	}
	d64 := make([]int64, len(shape))
	for i, d := range shape {
		d64[i] = int64(d)
	}
	count, ok := mulSize(maxElems, d64...)
	if !ok {
		return nil, fmt.Errorf("shape %v is too large", shape)
	}
	esz := dtypeSize[dt]
	raw, err := readExact(r, count*int64(esz), "array data")
	if err != nil {
		return nil, err
	}
	a := &Array{Shape: shape, DType: dt}
	switch dt {
	case "|u1":
		a.U8 = raw
	case "|b1":
		a.U8 = raw
		for i, v := range raw {
			if v > 1 {
				return nil, fmt.Errorf("bool element %d has byte value %d", i, v)
			}
		}
	case "<i4":
		a.I32 = make([]int32, count)
		for i := range a.I32 {
			a.I32[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	case "<i8":
		a.I64 = make([]int64, count)
		for i := range a.I64 {
			a.I64[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
		}
	case "<f4":
		a.F32 = make([]float32, count)
		for i := range a.F32 {
			a.F32[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	case "<f8":
		a.F64 = make([]float64, count)
		for i := range a.F64 {
			a.F64[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
		}
	}
	return a, nil
}

// parseNPYHeader parses the Python dict literal of a .npy header:
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
func parseNPYHeader(h string) (descr string, fortran bool, shape []int, err error) {
	p := &pyLit{s: strings.TrimRight(h, " \n\x00")}
	if !p.eat('{') {
		return "", false, nil, fmt.Errorf("header %q is not a dict", h)
	}
	seen := map[string]bool{}
	for {
		if p.eat('}') {
			break
		}
		key, ok := p.str()
		if !ok {
			return "", false, nil, fmt.Errorf("header %q: expected a quoted key at offset %d", h, p.i)
		}
		if !p.eat(':') {
			return "", false, nil, fmt.Errorf("header %q: expected ':' after %q", h, key)
		}
		switch key {
		case "descr":
			if descr, ok = p.str(); !ok {
				return "", false, nil, fmt.Errorf("header %q: descr is not a string (structured dtypes are not supported)", h)
			}
		case "fortran_order":
			switch {
			case p.word("True"):
				fortran = true
			case p.word("False"):
				fortran = false
			default:
				return "", false, nil, fmt.Errorf("header %q: fortran_order is not True or False", h)
			}
		case "shape":
			if shape, ok = p.tuple(); !ok {
				return "", false, nil, fmt.Errorf("header %q: shape is not a tuple of non-negative integers", h)
			}
		default:
			return "", false, nil, fmt.Errorf("header %q: unexpected key %q", h, key)
		}
		seen[key] = true
		if !p.eat(',') {
			if !p.eat('}') {
				return "", false, nil, fmt.Errorf("header %q: expected ',' or '}' at offset %d", h, p.i)
			}
			break
		}
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return "", false, nil, fmt.Errorf("header %q: missing key %q", h, k)
		}
	}
	return descr, fortran, shape, nil
}

// pyLit scans the tiny subset of Python literals .npy headers use.
type pyLit struct {
	s string
	i int
}

func (p *pyLit) skip() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n') {
		p.i++
	}
}

func (p *pyLit) eat(c byte) bool {
	p.skip()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *pyLit) word(w string) bool {
	p.skip()
	if strings.HasPrefix(p.s[p.i:], w) {
		p.i += len(w)
		return true
	}
	return false
}

func (p *pyLit) str() (string, bool) {
	p.skip()
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", false
	}
	q := p.s[p.i]
	j := strings.IndexByte(p.s[p.i+1:], q)
	if j < 0 {
		return "", false
	}
	v := p.s[p.i+1 : p.i+1+j]
	p.i += j + 2
	return v, true
}

func (p *pyLit) tuple() ([]int, bool) {
	if !p.eat('(') {
		return nil, false
	}
	shape := []int{}
	for {
		if p.eat(')') {
			return shape, true
		}
		p.skip()
		j := p.i
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		if j == p.i || j-p.i > 12 {
			return nil, false
		}
		v, err := strconv.Atoi(p.s[p.i:j])
		if err != nil {
			return nil, false
		}
		p.i = j
		p.eat('L') // Python 2 longs
		shape = append(shape, v)
		if !p.eat(',') {
			if p.eat(')') {
				return shape, true
			}
			return nil, false
		}
	}
}

// ReadNPY reads one .npy file.
func ReadNPY(path string) (*Array, error) {
	f, err := fsread.Open(path, "data file")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	a, err := DecodeNPY(bufio.NewReader(f))
	if err != nil {
		return nil, wrapFile(path, err)
	}
	return a, nil
}

// ReadNPZ reads every array of an .npz file (a zip of .npy files, stored or
// deflated as numpy's savez and savez_compressed write them), keyed by entry
// name without the ".npy" suffix.
func ReadNPZ(path string) (map[string]*Array, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return nil, fileErr(path, "not a readable .npz (zip) file: %v", err)
	}
	defer zr.Close()
	out := map[string]*Array{}
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fileErr(path, "entry %s: %v", f.Name, err)
		}
		a, err := DecodeNPY(bufio.NewReader(rc))
		rc.Close()
		if err != nil {
			return nil, fileErr(path, "entry %s: %v", f.Name, err)
		}
		out[strings.TrimSuffix(f.Name, ".npy")] = a
	}
	return out, nil
}

// EncodeNPY writes a as a version 1.0 .npy stream.
func EncodeNPY(w io.Writer, a *Array) error {
	n, err := a.dataLen()
	if err != nil {
		return err
	}
	if n != a.Len() {
		return fmt.Errorf("data: array of shape %v holds %d elements", a.Shape, n)
	}
	var sh strings.Builder
	sh.WriteByte('(')
	for i, d := range a.Shape {
		if i > 0 {
			sh.WriteString(", ")
		}
		sh.WriteString(strconv.Itoa(d))
	}
	if len(a.Shape) == 1 {
		sh.WriteByte(',')
	}
	sh.WriteByte(')')
	hdr := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", a.DType, sh.String())
	// Pad so that the data starts on a 64-byte boundary, header ending in \n.
	total := len(npyMagic) + 2 + 2 + len(hdr) + 1
	hdr += strings.Repeat(" ", (64-total%64)%64) + "\n"
	if len(hdr) > math.MaxUint16 {
		return fmt.Errorf("data: .npy header too long (%d bytes)", len(hdr))
	}
	bw := bufio.NewWriter(w)
	bw.Write(npyMagic)
	bw.Write([]byte{1, 0})
	binary.Write(bw, binary.LittleEndian, uint16(len(hdr)))
	bw.WriteString(hdr)
	var buf [8]byte
	for i := range n {
		switch a.DType {
		case "|u1", "|b1":
			bw.WriteByte(a.U8[i])
		case "<i4":
			binary.LittleEndian.PutUint32(buf[:], uint32(a.I32[i]))
			bw.Write(buf[:4])
		case "<i8":
			binary.LittleEndian.PutUint64(buf[:], uint64(a.I64[i]))
			bw.Write(buf[:8])
		case "<f4":
			binary.LittleEndian.PutUint32(buf[:], math.Float32bits(a.F32[i]))
			bw.Write(buf[:4])
		case "<f8":
			binary.LittleEndian.PutUint64(buf[:], math.Float64bits(a.F64[i]))
			bw.Write(buf[:8])
		}
	}
	return bw.Flush()
}

// WriteNPY writes a to path as a .npy file.
func WriteNPY(path string, a *Array) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := EncodeNPY(f, a); err != nil {
		f.Close()
		return wrapFile(path, err)
	}
	return f.Close()
}

// WriteNPZ writes arrays to path as an uncompressed .npz (like numpy.savez),
// entries in sorted name order, each named "<key>.npy".
func WriteNPZ(path string, arrays map[string]*Array) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
	keys := make([]string, 0, len(arrays))
	for k := range arrays {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: k + ".npy", Method: zip.Store})
		if err == nil {
			err = EncodeNPY(w, arrays[k])
		}
		if err != nil {
			f.Close()
			return fileErr(path, "entry %s: %v", k, err)
		}
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return wrapFile(path, err)
	}
	return f.Close()
}
