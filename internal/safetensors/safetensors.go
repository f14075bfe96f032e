package safetensors

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
)

// Tensor is one named tensor: DType is a safetensors dtype ("F32", "F64",
// "F16", "BF16", "I64", "I32", "I16", "I8", "U8", "BOOL"), Data its
// little-endian bytes in row-major order.
type Tensor struct {
	Name  string
	DType string
	Shape []int64
	Data  []byte
}

// ErrFormat reports a malformed file.
var ErrFormat = errors.New("safetensors")

var dtypeSize = map[string]int64{"F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4,
	"F16": 2, "BF16": 2, "I16": 2, "U16": 2, "I8": 1, "U8": 1, "BOOL": 1}

// maxHeader bounds the JSON header (the reference implementation's limit).
const maxHeader = 100 << 20

type entry struct {
	DType   string   `json:"dtype"`
	Shape   []int64  `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
}

// Write writes the tensors sorted by name, with metadata (may be nil). The
// header is padded with spaces so that the data starts 8-byte aligned.
func Write(w io.Writer, tensors []Tensor, metadata map[string]string) error {
	ts := append([]Tensor(nil), tensors...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	header := map[string]any{}
	if len(metadata) > 0 {
		header["__metadata__"] = metadata
	}
	var off int64
	for i, t := range ts {
		if i > 0 && ts[i-1].Name == t.Name {
			return fmt.Errorf("%w: tensor %q given twice", ErrFormat, t.Name)
		}
		if err := check(t.Name, t.DType, t.Shape, int64(len(t.Data))); err != nil {
			return err
		}
		shape := t.Shape
		if shape == nil {
			shape = []int64{}
		}
		header[t.Name] = entry{DType: t.DType, Shape: shape, Offsets: [2]int64{off, off + int64(len(t.Data))}}
		off += int64(len(t.Data))
	}
	h, err := json.Marshal(header)
	if err != nil {
		return err
	}
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := binary.Write(bw, binary.LittleEndian, uint64(len(h))); err != nil {
		return err
	}
	bw.Write(h)
	for _, t := range ts {
		bw.Write(t.Data)
	}
	return bw.Flush()
}

func check(name, dtype string, shape []int64, n int64) error {
	size, ok := dtypeSize[dtype]
	if !ok {
		return fmt.Errorf("%w: tensor %q: unknown dtype %q", ErrFormat, name, dtype)
	}
	elems := int64(1)
	for _, d := range shape {
		if d < 0 {
			return fmt.Errorf("%w: tensor %q: negative dimension in shape %v", ErrFormat, name, shape)
		}
		elems *= d
	}
	if elems*size != n {
		return fmt.Errorf("%w: tensor %q: %d bytes for shape %v of %s (want %d)",
			ErrFormat, name, n, shape, dtype, elems*size)
	}
	return nil
}

// Read reads a whole file: the tensors sorted by name and the metadata.
func Read(r io.Reader) ([]Tensor, map[string]string, error) {
	var n uint64
	if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
		return nil, nil, fmt.Errorf("%w: reading the header length: %v", ErrFormat, err)
	}
	if n > maxHeader {
		return nil, nil, fmt.Errorf("%w: header of %d bytes (limit %d)", ErrFormat, n, maxHeader)
	}
	h := make([]byte, n)
	if _, err := io.ReadFull(r, h); err != nil {
		return nil, nil, fmt.Errorf("%w: reading the header: %v", ErrFormat, err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(h, &raw); err != nil {
		return nil, nil, fmt.Errorf("%w: header: %v", ErrFormat, err)
	}
	var meta map[string]string
	if m, ok := raw["__metadata__"]; ok {
		if err := json.Unmarshal(m, &meta); err != nil {
			return nil, nil, fmt.Errorf("%w: __metadata__: %v", ErrFormat, err)
		}
		delete(raw, "__metadata__")
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, err
	}
	out := make([]Tensor, 0, len(raw))
	for name, m := range raw {
		var e entry
		if err := json.Unmarshal(m, &e); err != nil {
			return nil, nil, fmt.Errorf("%w: tensor %q: %v", ErrFormat, name, err)
		}
		b, en := e.Offsets[0], e.Offsets[1]
		if b < 0 || en < b || en > int64(len(data)) {
			return nil, nil, fmt.Errorf("%w: tensor %q: offsets [%d, %d] outside the %d data bytes",
				ErrFormat, name, b, en, len(data))
		}
		if err := check(name, e.DType, e.Shape, en-b); err != nil {
			return nil, nil, err
		}
		out = append(out, Tensor{Name: name, DType: e.DType, Shape: e.Shape, Data: data[b:en:en]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, meta, nil
}
