package onnxrt

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"unsafe"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/onnxio"
)

// Session runs one ONNX model. It is not safe for concurrent Run calls.
type Session struct {
	s       *ort.DynamicAdvancedSession
	inputs  []string
	outputs []string
}

// IOInfo describes one model input or output as ONNX Runtime sees it.
type IOInfo struct {
	Name  string
	DType graph.DType
	Shape []int64 // -1 for dynamic dimensions
}

// NewSessionForModel creates a session for m with the given inputs and
// outputs (nil: all of the model's). A model within protobuf's 2 GB limit
// is handed to ONNX Runtime as one buffer. A larger one cannot be: ONNX
// Runtime loads it from a temporary copy with external data
// (onnxio.WithTempCopy), removed once the session exists (ONNX Runtime has
// read or mapped the data by then; on Linux a mapping outlives the file's
// name).
func NewSessionForModel(m *graph.Model, inputs, outputs []string, opts Options) (*Session, error) {
	buf, err := onnxio.Encode(m)
	if err == nil {
		return NewSession(buf, inputs, outputs, opts)
	}
	if !errors.Is(err, onnxio.ErrTooLarge) {
		return nil, err
	}
	var s *Session
	err = onnxio.WithTempCopy(m, func(path string) error {
		small, err := os.ReadFile(path) // the graph, without the weights
		if err != nil {
			return err
		}
		create := func(so *ort.SessionOptions, in, out []string) (*ort.DynamicAdvancedSession, error) {
			return ort.NewDynamicAdvancedSession(path, in, out, so)
		}
		s, err = newSession(small, inputs, outputs, opts, create)
		return err
	})
	return s, err
}

// NewSession creates a session for a serialized model. inputs and outputs
// name, in order, the values Run takes and returns; nil means all of the
// model's, in the model's order.
func NewSession(model []byte, inputs, outputs []string, opts Options) (*Session, error) {
	create := func(so *ort.SessionOptions, in, out []string) (*ort.DynamicAdvancedSession, error) {
		return ort.NewDynamicAdvancedSessionWithONNXData(model, in, out, so)
	}
	return newSession(model, inputs, outputs, opts, create)
}

// newSession fills nil inputs or outputs from model (a serialized graph)
// and creates the session with create.
func newSession(model []byte, inputs, outputs []string, opts Options,
	create func(*ort.SessionOptions, []string, []string) (*ort.DynamicAdvancedSession, error)) (*Session, error) {
	so, err := sessionOptions(opts)
	if err != nil {
		return nil, err
	}
	defer so.Destroy()
	if inputs == nil || outputs == nil {
		if inputs, outputs, err = ioNames(model, inputs, outputs); err != nil {
			return nil, err
		}
	}
	s, err := create(so, inputs, outputs)
	if err != nil {
		return nil, fmt.Errorf("onnxruntime: creating session: %w", err)
	}
	return &Session{s: s, inputs: inputs, outputs: outputs}, nil
}

// ioNames fills nil inputs or outputs with all of the model's, in order.
func ioNames(model []byte, inputs, outputs []string) ([]string, []string, error) {
	ins, outs, err := ort.GetInputOutputInfoWithONNXData(model)
	if err != nil {
		return nil, nil, fmt.Errorf("onnxruntime: reading model inputs and outputs: %w", err)
	}
	if inputs == nil {
		for _, i := range ins {
			inputs = append(inputs, i.Name)
		}
	}
	if outputs == nil {
		for _, o := range outs {
			outputs = append(outputs, o.Name)
		}
	}
	return inputs, outputs, nil
}

// sessionOptions are the options of every session (the caller destroys
// them).
func sessionOptions(opts Options) (_ *ort.SessionOptions, err error) {
	if err := Setup(opts); err != nil {
		return nil, err
	}
	if err := deviceReady(opts.Device); err != nil {
		return nil, err
	}
	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("onnxruntime: session options: %w", err)
	}
	defer func() {
		if err != nil {
			so.Destroy()
		}
	}()
	if err := so.SetIntraOpNumThreads(opts.ThreadCount()); err != nil {
		return nil, fmt.Errorf("onnxruntime: threads: %w", err)
	}
	if err := so.SetInterOpNumThreads(1); err != nil {
		return nil, fmt.Errorf("onnxruntime: threads: %w", err)
	}
	// No memory pattern: with it ONNX Runtime lays every intermediate out
	// in one block planned from the first run, which for a training graph
	// holds far more than the arena's reuse of freed chunks does (ResNet-18
	// training step, batch 128: peak 1.88 against 1.11 GB), at the same
	// speed (bench/RESULTS.md).
	if err := so.SetMemPattern(false); err != nil {
		return nil, fmt.Errorf("onnxruntime: session options: %w", err)
	}
	// The intra-op threads stop spinning when Run returns (they spin
	// between the nodes of a run as before). Otherwise a worker keeps a core
	// busy for a while after each run, which is when the Go side updates
	// the weights: ResNet-18's SGD update on 2 threads took 33 ms next to
	// the spinning worker and 18 ms without it, the run itself no slower
	// (bench/RESULTS.md). Key: onnxruntime_session_options_config_keys.h,
	// kOrtSessionOptionsConfigForceSpinningStop.
	if err := so.AddSessionConfigEntry("session.force_spinning_stop", "1"); err != nil {
		return nil, fmt.Errorf("onnxruntime: session options: %w", err)
	}
	if opts.Device == "cuda" {
		if err := appendCUDA(so); err != nil {
			return nil, err
		}
	}
	return so, nil
}

// cudaOptions are the CUDA provider's options for every session: fp32 as
// on the CPU, no TF32 (the provider allows it by default, which rounds the
// inputs of convolutions and GEMMs to 10 mantissa bits on Ampere and
// later). Results then match the CPU's within float rounding, and the step
// compares with PyTorch's fp32.
var cudaOptions = map[string]string{"use_tf32": "0"}

// appendCUDA adds the CUDA execution provider to so: through the main
// library's own entry point when it was built with CUDA, else as the
// plugin provider it is in the build `make ort-gpu` installs
// (appendCUDAPlugin).
func appendCUDA(so *ort.SessionOptions) error {
	err := appendCUDABuiltIn(so)
	if err != nil && strings.Contains(err.Error(), "not enabled in this build") {
		err = appendCUDAPlugin(so, cudaOptions)
	}
	if err != nil {
		return setting.FlagErrorf("device", " cuda: the CUDA execution provider failed to load (%v); it needs an NVIDIA GPU "+
			"and driver, CUDA 13 and cuDNN 9; use %s to run on the CPU", err, setting.Use("device", "cpu"))
	}
	return nil
}

// appendCUDABuiltIn adds the CUDA provider through the main library's
// CUDA entry points (CreateCUDAProviderOptions and
// SessionOptionsAppendExecutionProvider_CUDA_V2), which a build without
// CUDA answers with "… not enabled in this build".
func appendCUDABuiltIn(so *ort.SessionOptions) error {
	co, err := ort.NewCUDAProviderOptions()
	if err != nil {
		return err
	}
	defer co.Destroy()
	if err := co.Update(cudaOptions); err != nil {
		return fmt.Errorf("CUDA provider options: %w", err)
	}
	return so.AppendExecutionProviderCUDA(co)
}

// Inputs and Outputs return the names the session binds, in Run's order.
func (s *Session) Inputs() []string  { return s.inputs }
func (s *Session) Outputs() []string { return s.outputs }

// Close releases the session.
func (s *Session) Close() error {
	if s == nil || s.s == nil {
		return nil
	}
	err := s.s.Destroy()
	s.s = nil
	return err
}

// ModelIO returns the inputs and outputs of a serialized model.
func ModelIO(model []byte, opts Options) (inputs, outputs []IOInfo, err error) {
	if err := Setup(opts); err != nil {
		return nil, nil, err
	}
	ins, outs, err := ort.GetInputOutputInfoWithONNXData(model)
	if err != nil {
		return nil, nil, fmt.Errorf("onnxruntime: %w", err)
	}
	conv := func(l []ort.InputOutputInfo) []IOInfo {
		out := make([]IOInfo, len(l))
		for i, x := range l {
			out[i] = IOInfo{Name: x.Name, DType: graph.DType(x.DataType), Shape: append([]int64(nil), x.Dimensions...)}
		}
		return out
	}
	return conv(ins), conv(outs), nil
}

// Tensor is an input or output buffer owned by the runtime package. Its data
// lives in Go memory and is shared with ONNX Runtime without copying.
type Tensor struct {
	v     ort.Value
	dtype graph.DType
	shape []int64
	f32   []float32
	i64   []int64
	raw   []byte
}

// NewFloat32 wraps data (which must hold at least the shape's element count)
// as a tensor; ONNX Runtime reads and writes data directly.
func NewFloat32(shape []int64, data []float32) (*Tensor, error) {
	v, err := ort.NewTensor(ort.NewShape(shape...), data)
	if err != nil {
		return nil, fmt.Errorf("onnxruntime: float32 tensor %v: %w", shape, err)
	}
	return &Tensor{v: v, dtype: graph.Float, shape: append([]int64(nil), shape...), f32: v.GetData()}, nil
}

// NewInt64 wraps data as an int64 tensor.
func NewInt64(shape []int64, data []int64) (*Tensor, error) {
	v, err := ort.NewTensor(ort.NewShape(shape...), data)
	if err != nil {
		return nil, fmt.Errorf("onnxruntime: int64 tensor %v: %w", shape, err)
	}
	return &Tensor{v: v, dtype: graph.Int64, shape: append([]int64(nil), shape...), i64: v.GetData()}, nil
}

// FromGraph wraps a graph.Tensor's bytes (shared, not copied).
func FromGraph(t *graph.Tensor) (*Tensor, error) {
	if t.DType == graph.String {
		st, err := ort.NewStringTensor(ort.NewShape(t.Shape...))
		if err != nil {
			return nil, fmt.Errorf("onnxruntime: string tensor %q: %w", t.Name, err)
		}
		s := make([]string, len(t.Strings))
		for i, b := range t.Strings {
			s[i] = string(b)
		}
		if err := st.SetContents(s); err != nil {
			st.Destroy()
			return nil, fmt.Errorf("onnxruntime: string tensor %q: %w", t.Name, err)
		}
		return &Tensor{v: st, dtype: graph.String, shape: append([]int64(nil), t.Shape...)}, nil
	}
	if err := t.Check(); err != nil {
		return nil, err
	}
	raw := t.Raw
	if len(raw) == 0 {
		raw = make([]byte, 1) // ORT wants a non-nil buffer even for empty tensors
	}
	v, err := ort.NewCustomDataTensor(ort.NewShape(t.Shape...), raw, ort.TensorElementDataType(t.DType))
	if err != nil {
		return nil, fmt.Errorf("onnxruntime: tensor %q (%v %v): %w", t.Name, t.DType, t.Shape, err)
	}
	return &Tensor{v: v, dtype: t.DType, shape: append([]int64(nil), t.Shape...), raw: t.Raw}, nil
}

// Shape returns the tensor's shape.
func (t *Tensor) Shape() []int64 { return t.shape }

// DType returns the element type.
func (t *Tensor) DType() graph.DType { return t.dtype }

// Float32s returns the float32 data (aliasing the tensor).
func (t *Tensor) Float32s() []float32 { return t.f32 }

// Int64s returns the int64 data of a tensor made by NewInt64 (aliasing it).
func (t *Tensor) Int64s() []int64 { return t.i64 }

// Close releases the tensor.
func (t *Tensor) Close() error {
	if t == nil || t.v == nil {
		return nil
	}
	err := t.v.Destroy()
	t.v = nil
	return err
}

// Run executes the session. outputs must have one entry per output name; a nil
// entry is allocated by ONNX Runtime and returned in its place (the caller
// closes it).
func (s *Session) Run(inputs, outputs []*Tensor) error {
	if len(inputs) != len(s.inputs) {
		return fmt.Errorf("onnxruntime: %d inputs given, session binds %d (%v)", len(inputs), len(s.inputs), s.inputs)
	}
	if len(outputs) != len(s.outputs) {
		return fmt.Errorf("onnxruntime: %d outputs given, session binds %d (%v)", len(outputs), len(s.outputs), s.outputs)
	}
	if len(inputs) == 0 {
		// onnxruntime_go indexes the first input unconditionally.
		return fmt.Errorf("onnxruntime: a session with no inputs cannot be run (onnxruntime_go needs at least one)")
	}
	in := make([]ort.Value, len(inputs))
	for i, t := range inputs {
		if t == nil || t.v == nil {
			return fmt.Errorf("onnxruntime: input %q is nil or closed", s.inputs[i])
		}
		in[i] = t.v
	}
	out := make([]ort.Value, len(outputs))
	for i, t := range outputs {
		if t != nil {
			out[i] = t.v
		}
	}
	if err := s.s.Run(in, out); err != nil {
		return fmt.Errorf("onnxruntime: %w", err)
	}
	for i, t := range outputs {
		if t != nil {
			continue
		}
		w, err := wrapValue(out[i])
		if err != nil {
			for _, o := range out[i:] {
				if o != nil {
					o.Destroy()
				}
			}
			return fmt.Errorf("onnxruntime: output %q: %w", s.outputs[i], err)
		}
		outputs[i] = w
	}
	return nil
}

func wrapValue(v ort.Value) (*Tensor, error) {
	shape := append([]int64(nil), v.GetShape()...)
	switch x := v.(type) {
	case *ort.Tensor[float32]:
		return &Tensor{v: v, dtype: graph.Float, shape: shape, f32: x.GetData()}, nil
	case *ort.StringTensor:
		return &Tensor{v: v, dtype: graph.String, shape: shape}, nil
	}
	if v.GetONNXType() != ort.ONNXTypeTensor {
		v.Destroy()
		return nil, fmt.Errorf("output is a %v, only tensors are supported", v.GetONNXType())
	}
	return &Tensor{v: v, dtype: graph.DType(v.DataType()), shape: shape}, nil
}

// ToGraph copies the tensor into a graph.Tensor named name.
func (t *Tensor) ToGraph(name string) (*graph.Tensor, error) {
	out := &graph.Tensor{Name: name, DType: t.dtype, Shape: append([]int64(nil), t.shape...)}
	n := graph.NumElements(t.shape)
	if t.dtype == graph.String {
		st, ok := t.v.(*ort.StringTensor)
		if !ok {
			return nil, errors.New("string tensor of unexpected kind")
		}
		s, err := st.GetContents()
		if err != nil {
			return nil, err
		}
		for _, x := range s {
			out.Strings = append(out.Strings, []byte(x))
		}
		return out, nil
	}
	size := t.dtype.Size()
	if size == 0 {
		return nil, fmt.Errorf("unsupported element type %v", t.dtype)
	}
	out.Raw = make([]byte, int(n)*size)
	if n == 0 {
		return out, nil
	}
	src := bytesOf(t.v)
	if src == nil {
		return nil, fmt.Errorf("cannot read data of %v tensor", t.dtype)
	}
	copy(out.Raw, src)
	return out, nil
}

func bytesOf(v ort.Value) []byte {
	switch x := v.(type) {
	case *ort.Tensor[float32]:
		return sliceBytes(x.GetData())
	case *ort.Tensor[float64]:
		return sliceBytes(x.GetData())
	case *ort.Tensor[int8]:
		return sliceBytes(x.GetData())
	case *ort.Tensor[uint8]:
		return sliceBytes(x.GetData())
	case *ort.Tensor[int16]:
		return sliceBytes(x.GetData())
	case *ort.Tensor[uint16]:
		return sliceBytes(x.GetData())
	case *ort.Tensor[int32]:
		return sliceBytes(x.GetData())
	case *ort.Tensor[uint32]:
		return sliceBytes(x.GetData())
	case *ort.Tensor[int64]:
		return sliceBytes(x.GetData())
	case *ort.Tensor[uint64]:
		return sliceBytes(x.GetData())
	case *ort.Tensor[bool]:
		return sliceBytes(x.GetData())
	case *ort.CustomDataTensor:
		return x.GetData()
	}
	return nil
}

func sliceBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(z)))
}
