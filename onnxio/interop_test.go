package onnxio

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
)

// Interoperability: models written by this package must be readable by an
// independent decoder, github.com/owulveryck/onnx-go v0.5.0, which has its
// own protobuf bindings (gogo, generated from the proto3 ONNX schema) and
// decodes through its public API, onnx.NewModel(backend).UnmarshalBinary.
//
// onnx-go registers its messages under the same protobuf names as ours
// (onnx.ModelProto, ...), and the protobuf runtime panics when one binary
// holds both, so onnx-go runs in a separate process: the helper command
// ./internal/onnxgoread, built once per test run, reports as JSON the
// operations onnx-go applied (in order), its graph input and output counts,
// and every tensor it attached to a named node (shape, dtype, exact values).
//
// What is compared with our IR, per model: the op type of every node in
// order; the number of outputs and of inputs that are not initializers;
// every float32 and int64 initializer's shape and values, bit for bit.
// onnx-go's graph builder accepts any op type (the backend decides), so no
// model is reduced to its protobuf layer; its tensor conversion supports only
// float32, float64, int32, int64 and bool, and it ignores subgraphs, so the
// conformance models used are those within these limits (onnxGoCanRead).

var helper struct {
	once sync.Once
	path string
	err  error
}

// onnxGoRead decodes the file at path with onnx-go.
func onnxGoRead(t *testing.T, path string) *onnxGoReport {
	t.Helper()
	helper.once.Do(func() {
		gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(gobin); err != nil {
			gobin = "go"
		}
		dir, err := os.MkdirTemp("", "onnxgoread")
		if err != nil {
			helper.err = err
			return
		}
		helper.path = filepath.Join(dir, "onnxgoread")
		cmd := exec.Command(gobin, "build", "-o", helper.path, "./internal/onnxgoread")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			helper.err = err
			helper.path = out.String()
		}
	})
	if helper.err != nil {
		t.Fatalf("building the onnx-go helper: %v\n%s", helper.err, helper.path)
	}
	out, err := exec.Command(helper.path, path).Output()
	if err != nil {
		t.Fatalf("onnxgoread %s: %v", path, err)
	}
	rep := &onnxGoReport{}
	if err := json.Unmarshal(out, rep); err != nil {
		t.Fatalf("onnxgoread %s: %v", path, err)
	}
	if rep.Error != "" {
		t.Fatalf("onnx-go cannot decode %s: %s", path, rep.Error)
	}
	return rep
}

// onnxGoReport mirrors internal/onnxgoread's Report.
type onnxGoReport struct {
	Ops     []string `json:"ops"`
	Inputs  int      `json:"inputs"`
	Outputs int      `json:"outputs"`
	Tensors map[string]struct {
		Shape   []int    `json:"shape"`
		Dtype   string   `json:"dtype"`
		F32Bits []uint32 `json:"f32bits"`
		I64     []int64  `json:"i64"`
	} `json:"tensors"`
	Error string `json:"error"`
}

// checkOnnxGo writes data to a file, decodes it with onnx-go and compares
// what onnx-go saw with m.
func checkOnnxGo(t *testing.T, data []byte, m *graph.Model) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "model.onnx")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	checkOnnxGoFile(t, path, m)
}

func checkOnnxGoFile(t *testing.T, path string, m *graph.Model) {
	t.Helper()
	rep := onnxGoRead(t, path)
	g := m.Graph
	if len(rep.Ops) != len(g.Nodes()) {
		t.Fatalf("onnx-go saw %d operations %v, we wrote %d", len(rep.Ops), rep.Ops, len(g.Nodes()))
	}
	for i, n := range g.Nodes() {
		if rep.Ops[i] != n.OpType {
			t.Errorf("operation %d: onnx-go %q, ours %q", i, rep.Ops[i], n.OpType)
		}
	}
	if rep.Outputs != len(g.Outputs) {
		t.Errorf("onnx-go: %d outputs, ours %d", rep.Outputs, len(g.Outputs))
	}
	inputs := 0 // onnx-go drops initializers from its input list
	for _, v := range g.Inputs {
		if !v.IsInitializer() {
			inputs++
		}
	}
	if rep.Inputs != inputs {
		t.Errorf("onnx-go: %d inputs, ours %d", rep.Inputs, inputs)
	}
	checked := 0
	for _, v := range g.Initializers {
		ot, ok := rep.Tensors[v.Name]
		if !ok {
			t.Errorf("onnx-go has no tensor for initializer %q", v.Name)
			continue
		}
		shape := make([]int64, len(ot.Shape))
		for i, d := range ot.Shape {
			shape[i] = int64(d)
		}
		// gorgonia reports a scalar as shape () and a 1-element vector
		// as (1); ONNX scalars have no dims.
		if !sliceEqual(shape, v.Init.Shape) && !(v.Init.Len() == 1 && len(shape) <= 1) {
			t.Errorf("%s: onnx-go shape %v, ours %v", v.Name, ot.Shape, v.Init.Shape)
		}
		switch v.Init.DType {
		case graph.Float:
			want, _ := v.Init.Float32s()
			if len(ot.F32Bits) != len(want) {
				t.Errorf("%s: onnx-go has %d floats, ours %d", v.Name, len(ot.F32Bits), len(want))
				continue
			}
			for i, b := range ot.F32Bits {
				if b != math.Float32bits(want[i]) {
					t.Errorf("%s[%d]: onnx-go %v, ours %v", v.Name, i, math.Float32frombits(b), want[i])
					break
				}
			}
		case graph.Int64:
			want, _ := v.Init.Int64s()
			if !sliceEqual(ot.I64, want) {
				t.Errorf("%s: onnx-go %v, ours %v", v.Name, ot.I64, want)
			}
		default:
			continue
		}
		checked++
	}
	if checked == 0 && len(g.Initializers) > 0 {
		t.Errorf("no initializer value was compared")
	}
}

func TestInteropOnnxGo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a helper command")
	}
	t.Run("built by code", func(t *testing.T) {
		m := mlp(t, 8, 5, 11)
		checkOnnxGo(t, mustEncode(t, m), m)
	})
	t.Run("decoded, edited, encoded", func(t *testing.T) {
		m := mustDecode(t, mustEncode(t, mlp(t, 8, 5, 12)))
		w, _ := m.Graph.Value("W").Init.Float32s()
		w[3] = -7
		b := m.Graph.Value("B").Init
		if err := b.SetFloat32s(make([]float32, b.Len())); err != nil {
			t.Fatal(err)
		}
		checkOnnxGo(t, mustEncode(t, m), m)
	})
	t.Run("saved with external data, loaded, encoded", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "m.onnx")
		if err := Save(mlp(t, 64, 32, 13), path, &SaveOptions{ExternalData: true}); err != nil {
			t.Fatal(err)
		}
		m, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		checkOnnxGo(t, mustEncode(t, m), m)
	})
	t.Run("file written by Save", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "m.onnx")
		m := mlp(t, 3, 2, 14)
		if err := Save(m, path, nil); err != nil {
			t.Fatal(err)
		}
		checkOnnxGoFile(t, path, m)
	})
	t.Run("conformance models, edited", func(t *testing.T) {
		n := 0
		for _, p := range conformanceModels(t) {
			m, err := Load(p)
			if err != nil {
				t.Fatal(err)
			}
			if !onnxGoCanRead(m) {
				continue
			}
			for _, v := range m.Graph.Initializers {
				if vals, _ := v.Init.Float32s(); len(vals) > 0 {
					vals[0] = vals[0]*2 + 1
				}
			}
			checkOnnxGo(t, mustEncode(t, m), m)
			n++
		}
		t.Logf("%d conformance models with initializers, edited and re-encoded, decoded by onnx-go", n)
		if n == 0 {
			t.Error("no conformance model was checked")
		}
	})
}

// onnxGoCanRead selects models within onnx-go's limits: initializers of
// types its tensor conversion supports (float32 and int64 are compared), no
// subgraphs, and inputs, outputs and value infos of types it maps to
// gorgonia dtypes.
func onnxGoCanRead(m *graph.Model) bool {
	g := m.Graph
	if len(g.Initializers) == 0 || len(g.Outputs) == 0 || hasSubgraph(g) {
		return false
	}
	for _, v := range g.Initializers {
		if v.Init.DType != graph.Float && v.Init.DType != graph.Int64 {
			return false
		}
	}
	for _, list := range [][]*graph.Value{g.Inputs, g.Outputs, g.ValueInfo} {
		for _, v := range list {
			if v.Type == nil || v.Type.DType == graph.Float16 || v.Type.DType >= graph.BFloat16 {
				return false
			}
		}
	}
	return true
}

func TestMain(m *testing.M) {
	code := m.Run()
	if helper.path != "" && helper.err == nil {
		os.RemoveAll(filepath.Dir(helper.path))
	}
	os.Exit(code)
}
