package graph

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// DType is an ONNX element type; the values are TensorProto.DataType's.
type DType int32

// ONNX element types (onnx.proto, TensorProto.DataType).
const (
	Undefined  DType = 0
	Float      DType = 1
	Uint8      DType = 2
	Int8       DType = 3
	Uint16     DType = 4
	Int16      DType = 5
	Int32      DType = 6
	Int64      DType = 7
	String     DType = 8
	Bool       DType = 9
	Float16    DType = 10
	Double     DType = 11
	Uint32     DType = 12
	Uint64     DType = 13
	Complex64  DType = 14
	Complex128 DType = 15
	BFloat16   DType = 16
)

var dtypeNames = map[DType]string{
	Undefined: "undefined", Float: "float32", Uint8: "uint8", Int8: "int8", Uint16: "uint16",
	Int16: "int16", Int32: "int32", Int64: "int64", String: "string", Bool: "bool",
	Float16: "float16", Double: "float64", Uint32: "uint32", Uint64: "uint64",
	Complex64: "complex64", Complex128: "complex128", BFloat16: "bfloat16",
}

func (d DType) String() string {
	if s, ok := dtypeNames[d]; ok {
		return s
	}
	return fmt.Sprintf("dtype(%d)", int32(d))
}

// Size is the number of bytes of one element, or 0 for types without a fixed size
// (strings) or unknown types.
func (d DType) Size() int {
	switch d {
	case Uint8, Int8, Bool:
		return 1
	case Uint16, Int16, Float16, BFloat16:
		return 2
	case Float, Int32, Uint32:
		return 4
	case Int64, Uint64, Double, Complex64:
		return 8
	case Complex128:
		return 16
	}
	return 0
}

// IsFloat reports whether d is a floating-point type (the types gradients flow through).
func (d DType) IsFloat() bool {
	return d == Float || d == Double || d == Float16 || d == BFloat16
}

// Tensor is a dense constant: an initializer or a tensor-valued attribute.
// Data is kept as little-endian raw bytes (ONNX's raw_data layout) whatever the
// encoding in the file was; Strings holds the elements of String tensors.
type Tensor struct {
	Name    string
	DType   DType
	Shape   []int64
	Raw     []byte
	Strings [][]byte
	// Ext is owned by onnxio (the original protobuf message, so that fields the IR
	// does not model survive a round trip). Other packages must not touch it.
	Ext any
}

// NumElements is the product of the dimensions (1 for a scalar).
func NumElements(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

// CheckedNumElements is NumElements for shapes read from untrusted files:
// ok is false when a dimension is negative or the product does not fit in
// an int64 (a shape like [10, 2^62+1] would otherwise wrap around to a
// small number and pass a size check).
func CheckedNumElements(shape []int64) (n int64, ok bool) {
	n = 1
	for _, d := range shape {
		if d < 0 {
			return 0, false
		}
		if d != 0 && n > math.MaxInt64/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// Len is the number of elements.
func (t *Tensor) Len() int64 { return NumElements(t.Shape) }

// Clone returns a deep copy (Ext is shared: it is only read).
func (t *Tensor) Clone() *Tensor {
	c := *t
	c.Shape = append([]int64(nil), t.Shape...)
	c.Raw = append([]byte(nil), t.Raw...)
	if t.Strings != nil {
		c.Strings = make([][]byte, len(t.Strings))
		for i, s := range t.Strings {
			c.Strings[i] = append([]byte(nil), s...)
		}
	}
	return &c
}

// Check verifies that the data size matches the shape and type.
func (t *Tensor) Check() error {
	if t.DType == String {
		if int64(len(t.Strings)) != t.Len() {
			return fmt.Errorf("tensor %q: %d strings for shape %v", t.Name, len(t.Strings), t.Shape)
		}
		return nil
	}
	sz := t.DType.Size()
	if sz == 0 {
		return fmt.Errorf("tensor %q: unsupported element type %v", t.Name, t.DType)
	}
	for _, d := range t.Shape {
		if d < 0 {
			return fmt.Errorf("tensor %q: negative dimension in shape %v", t.Name, t.Shape)
		}
	}
	if want := t.Len() * int64(sz); int64(len(t.Raw)) != want {
		return fmt.Errorf("tensor %q: %d bytes of data, shape %v of %v needs %d", t.Name, len(t.Raw), t.Shape, t.DType, want)
	}
	return nil
}

var littleEndian = func() bool { x := uint16(1); return *(*byte)(unsafe.Pointer(&x)) == 1 }()

// Float32s returns the data of a float32 tensor as a slice that aliases Raw on
// little-endian machines (writes go to the tensor) and a copy elsewhere.
func (t *Tensor) Float32s() ([]float32, error) {
	if t.DType != Float {
		return nil, fmt.Errorf("tensor %q is %v, not float32", t.Name, t.DType)
	}
	if err := t.Check(); err != nil {
		return nil, err
	}
	n := len(t.Raw) / 4
	if n == 0 {
		return []float32{}, nil
	}
	if littleEndian && uintptr(unsafe.Pointer(&t.Raw[0]))%4 == 0 {
		return unsafe.Slice((*float32)(unsafe.Pointer(&t.Raw[0])), n), nil
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Raw[4*i:]))
	}
	return out, nil
}

// SetFloat32s replaces the data of a float32 tensor (same number of elements).
func (t *Tensor) SetFloat32s(v []float32) error {
	if t.DType != Float {
		return fmt.Errorf("tensor %q is %v, not float32", t.Name, t.DType)
	}
	if int64(len(v)) != t.Len() {
		return fmt.Errorf("tensor %q: %d values for %d elements", t.Name, len(v), t.Len())
	}
	raw := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
	}
	t.Raw = raw
	return nil
}

// NewFloat32 makes a float32 tensor that owns a copy of v.
func NewFloat32(name string, shape []int64, v []float32) *Tensor {
	t := &Tensor{Name: name, DType: Float, Shape: append([]int64(nil), shape...)}
	if err := t.SetFloat32s(v); err != nil {
		panic(err) // programming error: caller passed mismatched shape
	}
	return t
}

// NewInt64 makes an int64 tensor.
func NewInt64(name string, shape []int64, v []int64) *Tensor {
	raw := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(x))
	}
	return &Tensor{Name: name, DType: Int64, Shape: append([]int64(nil), shape...), Raw: raw}
}

// Int64s decodes an integer tensor (int8..int64, uint8..uint64, bool) as int64 values.
func (t *Tensor) Int64s() ([]int64, error) {
	if err := t.Check(); err != nil {
		return nil, err
	}
	n := int(t.Len())
	out := make([]int64, n)
	r := t.Raw
	for i := 0; i < n; i++ {
		switch t.DType {
		case Int64:
			out[i] = int64(binary.LittleEndian.Uint64(r[8*i:]))
		case Uint64:
			out[i] = int64(binary.LittleEndian.Uint64(r[8*i:]))
		case Int32:
			out[i] = int64(int32(binary.LittleEndian.Uint32(r[4*i:])))
		case Uint32:
			out[i] = int64(binary.LittleEndian.Uint32(r[4*i:]))
		case Int16:
			out[i] = int64(int16(binary.LittleEndian.Uint16(r[2*i:])))
		case Uint16:
			out[i] = int64(binary.LittleEndian.Uint16(r[2*i:]))
		case Int8:
			out[i] = int64(int8(r[i]))
		case Uint8, Bool:
			out[i] = int64(r[i])
		default:
			return nil, fmt.Errorf("tensor %q is %v, not an integer type", t.Name, t.DType)
		}
	}
	return out, nil
}
