package graph_test

import (
	"fmt"
	"math/rand"
	"strconv"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
)

// builder makes small graphs for tests; every mistake fails the test.
type builder struct {
	t   *testing.T
	g   *graph.Graph
	rng *rand.Rand
	n   int
}

func newBuilder(t *testing.T) *builder {
	t.Helper()
	return &builder{t: t, g: graph.NewGraph("test"), rng: rand.New(rand.NewSource(1))}
}

func (b *builder) input(name string, dims ...int64) *graph.Value {
	b.t.Helper()
	v, err := b.g.AddInput(name, &graph.Type{DType: graph.Float, Shape: graph.DimsOf(dims)})
	if err != nil {
		b.t.Fatal(err)
	}
	return v
}

// w adds a float initializer with seeded random data.
func (b *builder) w(name string, dims ...int64) *graph.Value {
	b.t.Helper()
	data := make([]float32, graph.NumElements(dims))
	for i := range data {
		data[i] = float32(b.rng.NormFloat64())
	}
	v, err := b.g.AddInitializer(graph.NewFloat32(name, dims, data))
	if err != nil {
		b.t.Fatal(err)
	}
	return v
}

// scalar adds a rank-0 float initializer.
func (b *builder) scalar(name string, x float32) *graph.Value {
	b.t.Helper()
	v, err := b.g.AddInitializer(graph.NewFloat32(name, nil, []float32{x}))
	if err != nil {
		b.t.Fatal(err)
	}
	return v
}

// i64 adds a 1-D int64 initializer.
func (b *builder) i64(name string, vals ...int64) *graph.Value {
	b.t.Helper()
	v, err := b.g.AddInitializer(graph.NewInt64(name, []int64{int64(len(vals))}, vals))
	if err != nil {
		b.t.Fatal(err)
	}
	return v
}

// op adds a node with one output and returns the output.
func (b *builder) op(opType string, ins []*graph.Value, attrs ...*graph.Attribute) *graph.Value {
	b.t.Helper()
	return b.opN(opType, ins, 1, attrs...)[0]
}

// opN adds a node with k outputs.
func (b *builder) opN(opType string, ins []*graph.Value, k int, attrs ...*graph.Attribute) []*graph.Value {
	b.t.Helper()
	b.n++
	name := opType + "_" + strconv.Itoa(b.n)
	outs := make([]string, k)
	for i := range outs {
		outs[i] = name + "_out" + strconv.Itoa(i)
	}
	n, err := b.g.AddNode(opType, "", name, ins, outs, attrs...)
	if err != nil {
		b.t.Fatal(err)
	}
	return n.Outputs()
}

func (b *builder) output(v *graph.Value) { b.g.Outputs = append(b.g.Outputs, v) }

func vals(v ...*graph.Value) []*graph.Value { return v }

func attrI(name string, v int64) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrInt, I: v}
}

func attrF(name string, v float32) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrFloat, F: v}
}

func attrInts(name string, v ...int64) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrInts, Ints: v}
}

// analyse runs Validate, Neurons and the partition check.
func analyse(t *testing.T, g *graph.Graph) *graph.NeuronMap {
	t.Helper()
	if err := g.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	nm, err := graph.Neurons(g)
	if err != nil {
		t.Fatalf("Neurons: %v", err)
	}
	if err := nm.CheckPartition(); err != nil {
		t.Fatalf("partition: %v", err)
	}
	if err := checkPartitionIndependently(nm); err != nil {
		t.Fatalf("partition (independent check): %v", err)
	}
	return nm
}

// checkPartitionIndependently recounts through ElementsOf and NeuronOf
// (CheckPartition uses Member.Elements directly).
func checkPartitionIndependently(nm *graph.NeuronMap) error {
	cnt := map[*graph.Value][]int{}
	for _, p := range nm.Params {
		cnt[p.Value] = make([]int, p.Value.Init.Len())
	}
	for _, n := range nm.Neurons {
		got := 0
		for _, s := range nm.ElementsOf(n.Layer, n.Index) {
			c := cnt[s.Param]
			if c == nil {
				return fmt.Errorf("neuron %s/%d owns %q, which is not a parameter", n.Layer.Name, n.Index, s.Param.Name)
			}
			for _, i := range s.Flat {
				c[i]++
				owner, err := nm.NeuronOf(s.Param, i)
				if err != nil {
					return err
				}
				if owner.Layer != n.Layer || owner.Index != n.Index {
					return fmt.Errorf("NeuronOf(%q, %d) = %s/%d, want %s/%d", s.Param.Name, i, owner.Layer.Name, owner.Index, n.Layer.Name, n.Index)
				}
			}
			got += len(s.Flat)
		}
		if got != n.NumParams {
			return fmt.Errorf("neuron %s/%d: NumParams %d, elements %d", n.Layer.Name, n.Index, n.NumParams, got)
		}
	}
	for v, c := range cnt {
		for i, k := range c {
			if k != 1 {
				return fmt.Errorf("element %d of %q is in %d neurons", i, v.Name, k)
			}
		}
	}
	return nil
}
