package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"

	onnxgo "github.com/owulveryck/onnx-go"
	"github.com/owulveryck/onnx-go/backend/simple"
	gonumgraph "gonum.org/v1/gonum/graph"
	"gorgonia.org/tensor"
)

// Report is what onnx-go decoded.
type Report struct {
	Ops     []string          `json:"ops"`
	Inputs  int               `json:"inputs"`
	Outputs int               `json:"outputs"`
	Tensors map[string]Tensor `json:"tensors"`
	Error   string            `json:"error,omitempty"`
}

// Tensor is one initializer as onnx-go decoded it. Float32 values are given
// as their IEEE bits so that comparisons are exact.
type Tensor struct {
	Shape   []int    `json:"shape"`
	Dtype   string   `json:"dtype"`
	F32Bits []uint32 `json:"f32bits,omitempty"`
	I64     []int64  `json:"i64,omitempty"`
}

// recorder is an onnx-go backend: onnx-go's simple gonum graph whose nodes
// carry names and tensors, plus the operations applied in order.
type recorder struct {
	*simple.Graph
	ops []string
}

type dataNode struct {
	id   int64
	name string
	t    tensor.Tensor
}

func (n *dataNode) ID() int64                         { return n.id }
func (n *dataNode) SetName(s string)                  { n.name = s }
func (n *dataNode) GetName() string                   { return n.name }
func (n *dataNode) SetTensor(t tensor.Tensor) error   { n.t = t; return nil }
func (n *dataNode) GetTensor() tensor.Tensor          { return n.t }
func (n *dataNode) ApplyTensor(t tensor.Tensor) error { n.t = t; return nil }

func (r *recorder) NewNode() gonumgraph.Node { return &dataNode{id: r.Graph.NewNode().ID()} }

func (r *recorder) ApplyOperation(op onnxgo.Operation, _ ...gonumgraph.Node) error {
	r.ops = append(r.ops, op.Name)
	return nil
}

func read(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := &recorder{Graph: simple.NewSimpleGraph()}
	m := onnxgo.NewModel(r)
	if err := m.UnmarshalBinary(data); err != nil {
		return nil, err
	}
	rep := &Report{Ops: r.ops, Inputs: len(m.Input), Outputs: len(m.Output), Tensors: map[string]Tensor{}}
	nodes := r.Nodes()
	for nodes.Next() {
		n, ok := nodes.Node().(*dataNode)
		if !ok || n.t == nil || n.name == "" {
			continue
		}
		t := Tensor{Shape: []int(n.t.Shape()), Dtype: n.t.Dtype().String()}
		switch d := n.t.Data().(type) {
		case []float32:
			for _, x := range d {
				t.F32Bits = append(t.F32Bits, math.Float32bits(x))
			}
		case float32:
			t.F32Bits = []uint32{math.Float32bits(d)}
		case []int64:
			t.I64 = d
		case int64:
			t.I64 = []int64{d}
		}
		rep.Tensors[n.name] = t
	}
	return rep, nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: onnxgoread model.onnx")
		os.Exit(2)
	}
	rep, err := read(os.Args[1])
	if err != nil {
		rep = &Report{Error: err.Error()}
	}
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
