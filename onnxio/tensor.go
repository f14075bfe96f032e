package onnxio

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/fsread"
	"github.com/unlearn-tool/unlearn/onnxio/onnxpb"
)

// elemSize is the size in bytes of one element of the types whose data this
// package can convert from typed fields: graph's types plus the 8-bit float
// types of ONNX 1.14+ (17..20, stored one per int32_data entry). It is 0 for
// strings, 4-bit types and unknown types.
func elemSize(d graph.DType) int {
	if s := d.Size(); s > 0 {
		return s
	}
	if d >= 17 && d <= 20 {
		return 1
	}
	return 0
}

// decodeTensor converts a TensorProto to a graph.Tensor. raw_data is used in
// place (no copy); typed fields are converted to little-endian bytes; external
// data is read through d.
func (d *decoder) decodeTensor(tp *onnxpb.TensorProto) (*graph.Tensor, error) {
	t := &graph.Tensor{
		Name:  tp.GetName(),
		DType: graph.DType(tp.GetDataType()),
		Shape: append([]int64(nil), tp.GetDims()...),
	}
	x := &tensorExt{pb: tp, dtype: t.DType}
	t.Ext = x
	var err error
	switch {
	case tp.GetDataLocation() == onnxpb.TensorProto_EXTERNAL:
		x.external = true
		t.Raw, err = d.readExternal(tp)
		if err != nil {
			return nil, err
		}
	case tp.RawData != nil:
		t.Raw = tp.RawData
	case t.DType == graph.String:
		t.Strings = tp.GetStringData()
	default:
		t.Raw, err = typedToRaw(tp, t.DType)
		if err != nil {
			return nil, fmt.Errorf("%w: tensor %q: %v", ErrInvalid, t.Name, err)
		}
	}
	if err := checkTensorSize(t, tp); err != nil {
		return nil, err
	}
	x.fp = fingerprintOf(t)
	return t, nil
}

// checkTensorSize rejects data that does not fit the shape, for the types
// whose size is known. Segmented tensors hold part of the data and are not
// checked.
func checkTensorSize(t *graph.Tensor, tp *onnxpb.TensorProto) error {
	if tp.GetSegment() != nil {
		return nil
	}
	for _, d := range t.Shape {
		if d < 0 {
			return fmt.Errorf("%w: tensor %q: negative dimension in shape %v", ErrInvalid, t.Name, t.Shape)
		}
	}
	n, ok := graph.CheckedNumElements(t.Shape)
	if !ok {
		return fmt.Errorf("%w: tensor %q: shape %v has more elements than an int64 can count", ErrInvalid, t.Name, t.Shape)
	}
	if t.DType == graph.String {
		if int64(len(t.Strings)) != n {
			return fmt.Errorf("%w: tensor %q: %d strings for shape %v", ErrInvalid, t.Name, len(t.Strings), t.Shape)
		}
		return nil
	}
	sz := int64(elemSize(t.DType))
	if sz == 0 {
		return nil
	}
	if n > math.MaxInt64/sz {
		return fmt.Errorf("%w: tensor %q: shape %v of %v needs more bytes than an int64 can count",
			ErrInvalid, t.Name, t.Shape, t.DType)
	}
	if int64(len(t.Raw)) != n*sz {
		return fmt.Errorf("%w: tensor %q: %d bytes of data, shape %v of %v needs %d",
			ErrInvalid, t.Name, len(t.Raw), t.Shape, t.DType, n*sz)
	}
	return nil
}

// typedToRaw converts the typed data fields to little-endian bytes, following
// the field each type is stored in by the ONNX spec (TensorProto comments).
func typedToRaw(tp *onnxpb.TensorProto, dt graph.DType) ([]byte, error) {
	switch dt {
	case graph.Float, graph.Complex64:
		v := tp.GetFloatData()
		if len(v) == 0 {
			return nil, nil
		}
		out := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
		}
		return out, nil
	case graph.Double, graph.Complex128:
		v := tp.GetDoubleData()
		if len(v) == 0 {
			return nil, nil
		}
		out := make([]byte, 8*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(x))
		}
		return out, nil
	case graph.Int64:
		v := tp.GetInt64Data()
		if len(v) == 0 {
			return nil, nil
		}
		out := make([]byte, 8*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint64(out[8*i:], uint64(x))
		}
		return out, nil
	case graph.Uint32, graph.Uint64:
		v := tp.GetUint64Data()
		if len(v) == 0 {
			return nil, nil
		}
		sz := dt.Size()
		out := make([]byte, sz*len(v))
		for i, x := range v {
			if sz == 4 {
				binary.LittleEndian.PutUint32(out[4*i:], uint32(x))
			} else {
				binary.LittleEndian.PutUint64(out[8*i:], x)
			}
		}
		return out, nil
	}
	sz := elemSize(dt)
	if sz == 0 {
		// A type the IR cannot hold (4-bit, unknown): no Raw; Encode keeps
		// the original fields.
		return nil, nil
	}
	// int32_data: int8, int16, int32, uint8, uint16, bool, float16, bfloat16
	// and the float8 types, one element per entry in its low bits.
	v := tp.GetInt32Data()
	if len(v) == 0 {
		return nil, nil
	}
	out := make([]byte, sz*len(v))
	for i, x := range v {
		switch sz {
		case 1:
			out[i] = byte(x)
		case 2:
			binary.LittleEndian.PutUint16(out[2*i:], uint16(x))
		case 4:
			binary.LittleEndian.PutUint32(out[4*i:], uint32(x))
		default:
			return nil, fmt.Errorf("type %v cannot be stored in int32_data", dt)
		}
	}
	return out, nil
}

// readExternal reads the data of a tensor stored in an external file, whose
// location is relative to the model's folder and may not leave it.
func (d *decoder) readExternal(tp *onnxpb.TensorProto) ([]byte, error) {
	name := tp.GetName()
	var loc string
	var offset, length int64 = 0, -1
	for _, e := range tp.GetExternalData() {
		switch e.GetKey() {
		case "location":
			loc = e.GetValue()
		case "offset", "length":
			n, err := strconv.ParseInt(e.GetValue(), 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%w: tensor %q: bad %s %q", ErrExternalData, name, e.GetKey(), e.GetValue())
			}
			if e.GetKey() == "offset" {
				offset = n
			} else {
				length = n
			}
		}
	}
	if loc == "" {
		return nil, fmt.Errorf("%w: tensor %q: external data without a location", ErrExternalData, name)
	}
	if d.baseDir == "" {
		return nil, fmt.Errorf("%w: tensor %q: data is in external file %q but no model folder was given",
			ErrExternalData, name, loc)
	}
	rel := filepath.FromSlash(loc)
	if !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("%w: tensor %q: location %q is outside the model folder %s",
			ErrExternalData, name, loc, d.baseDir)
	}
	path := filepath.Join(d.baseDir, rel)
	f, size, err := d.openExternal(path)
	if err != nil {
		return nil, fmt.Errorf("%w: tensor %q: %v", ErrExternalData, name, err)
	}
	if length < 0 {
		length = size - offset
	}
	if offset > size || length > size-offset || length < 0 {
		return nil, fmt.Errorf("%w: tensor %q: file %s is too short: %d bytes, tensor needs bytes %d to %d",
			ErrExternalData, name, path, size, offset, offset+length)
	}
	// The bytes are read into memory: check what the shape needs before
	// allocating, so that a small model cannot make us allocate what a
	// large (or sparse) data file claims.
	if _, ok := graph.CheckedNumElements(tp.GetDims()); !ok {
		return nil, fmt.Errorf("%w: tensor %q: shape %v is negative or has more elements than an int64 can count",
			ErrInvalid, name, tp.GetDims())
	}
	if want, ok := externalWant(tp); ok && want != length {
		return nil, fmt.Errorf("%w: tensor %q: %d bytes of external data, shape %v needs %d",
			ErrExternalData, name, length, tp.GetDims(), want)
	}
	if avail := d.availableMemory(); avail > 0 && length > avail {
		return nil, fmt.Errorf("%w: tensor %q: %d bytes of external data in %s, more than the %d bytes of memory available",
			ErrExternalData, name, length, path, avail)
	}
	buf := make([]byte, length)
	if _, err := f.ReadAt(buf, offset); err != nil {
		return nil, fmt.Errorf("%w: tensor %q: reading %s: %v", ErrExternalData, name, path, err)
	}
	return buf, nil
}

// openExternal opens an external data file once per decode, after checking
// that symbolic links do not lead it out of the model folder.
func (d *decoder) openExternal(path string) (*os.File, int64, error) {
	if f, ok := d.files[path]; ok {
		return f.f, f.size, nil
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, 0, err
	}
	base, err := filepath.EvalSymlinks(d.baseDir)
	if err != nil {
		return nil, 0, err
	}
	if rel, err := filepath.Rel(base, real); err != nil || !filepath.IsLocal(rel) {
		return nil, 0, fmt.Errorf("%s leads outside the model folder %s", path, d.baseDir)
	}
	f, err := fsread.Open(path, "external data file")
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s is not a regular file", path)
	}
	if d.files == nil {
		d.files = map[string]openFile{}
	}
	d.files[path] = openFile{f, st.Size()}
	d.dataFiles = append(d.dataFiles, path)
	return f, st.Size(), nil
}

type openFile struct {
	f    *os.File
	size int64
}

// externalWant is the byte size an external tensor's shape and type need,
// or ok false when it cannot be known (an unknown element size) or does
// not fit in an int64 (checkTensorSize then reports the shape).
func externalWant(tp *onnxpb.TensorProto) (int64, bool) {
	sz := int64(elemSize(graph.DType(tp.GetDataType())))
	if sz == 0 || tp.GetSegment() != nil {
		return 0, false
	}
	n, ok := graph.CheckedNumElements(tp.GetDims())
	if !ok || n > math.MaxInt64/sz {
		return 0, false
	}
	return n * sz, true
}

// availableMemory is fsread.AvailableMemory, read once per decode: a model
// with many external tensors checks each against it.
func (d *decoder) availableMemory() int64 {
	if !d.memRead {
		d.mem, d.memRead = fsread.AvailableMemory(), true
	}
	return d.mem
}
