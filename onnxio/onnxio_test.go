package onnxio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/onnxio/onnxpb"
)

// withoutInitializer returns a copy of mp with initializer k removed.
func withoutInitializer(mp *onnxpb.ModelProto, k int) *onnxpb.ModelProto {
	c := proto.Clone(mp).(*onnxpb.ModelProto)
	c.Graph.Initializer = append(c.Graph.Initializer[:k:k], c.Graph.Initializer[k+1:]...)
	return c
}

// TestModifyOneInitializer changes one element of one float initializer of
// a real model and checks that the written model differs from the original
// in that tensor only, and there only in that element.
func TestModifyOneInitializer(t *testing.T) {
	var path string
	for _, p := range conformanceModels(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		mp := unmarshalModel(t, b)
		floats := 0
		for _, tp := range mp.GetGraph().GetInitializer() {
			if tp.GetDataType() == int32(graph.Float) && len(tp.GetDims()) > 0 {
				floats++
			}
		}
		if floats >= 2 {
			path = p
			break
		}
	}
	if path == "" {
		t.Skip("no conformance model with two float initializers")
	}
	t.Logf("using %s", path)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := unmarshalModel(t, data)
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	k := -1
	for i, v := range m.Graph.Initializers {
		if v.Init.DType == graph.Float && len(v.Init.Shape) > 0 {
			k = i
			break
		}
	}
	v := m.Graph.Initializers[k]
	vals, err := v.Init.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	old := append([]float32(nil), vals...)
	vals[0] += 1
	if err := v.Init.SetFloat32s(vals); err != nil { // copy-on-write form too
		t.Fatal(err)
	}
	got := unmarshalModel(t, mustEncode(t, m))
	if !proto.Equal(withoutInitializer(got, k), withoutInitializer(want, k)) {
		t.Fatalf("something besides initializer %q changed", v.Name)
	}
	tp := got.Graph.Initializer[k]
	if tp.GetName() != v.Name || !sliceEqual(tp.GetDims(), want.Graph.Initializer[k].GetDims()) {
		t.Fatalf("initializer %q: name or dims changed: %q %v", v.Name, tp.GetName(), tp.GetDims())
	}
	if len(tp.GetFloatData()) != 0 || len(tp.GetRawData()) != 4*len(old) {
		t.Fatalf("changed tensor should be written as raw_data: %d raw bytes, %d float_data", len(tp.GetRawData()), len(tp.GetFloatData()))
	}
	for i := range old {
		g := math.Float32frombits(binary.LittleEndian.Uint32(tp.GetRawData()[4*i:]))
		w := old[i]
		if i == 0 {
			w += 1
		}
		if math.Float32bits(g) != math.Float32bits(w) {
			t.Fatalf("element %d = %v, want %v", i, g, w)
		}
	}
}

// TestModifyTypedInitializer: with two float_data initializers, changing
// one rewrites it as raw_data and leaves the other in float_data.
func TestModifyTypedInitializer(t *testing.T) {
	g := &onnxpb.GraphProto{
		Name: proto.String("g"),
		Node: []*onnxpb.NodeProto{node("Add", "add", []string{"a", "b"}, []string{"y"})},
		Initializer: []*onnxpb.TensorProto{
			{Name: proto.String("a"), DataType: proto.Int32(int32(graph.Float)), Dims: []int64{3}, FloatData: []float32{1, 2, 3}},
			{Name: proto.String("b"), DataType: proto.Int32(int32(graph.Float)), Dims: []int64{3}, FloatData: []float32{4, 5, 6}},
		},
		Output: []*onnxpb.ValueInfoProto{vinfo("y", graph.Float, 3)},
	}
	orig := modelProto(g)
	m := mustDecode(t, mustMarshal(t, orig))
	b := m.Graph.Value("b").Init
	if err := b.SetFloat32s([]float32{4, 5, 7}); err != nil {
		t.Fatal(err)
	}
	got := unmarshalModel(t, mustEncode(t, m))
	if !proto.Equal(got.Graph.Initializer[0], orig.Graph.Initializer[0]) {
		t.Errorf("unchanged initializer a changed encoding: %v", got.Graph.Initializer[0])
	}
	gb := got.Graph.Initializer[1]
	if len(gb.GetFloatData()) != 0 || !bytes.Equal(gb.GetRawData(), b.Raw) {
		t.Errorf("changed initializer b: float_data %v raw %v, want raw %v", gb.GetFloatData(), gb.GetRawData(), b.Raw)
	}
}

func leBytes(vals ...any) []byte {
	var buf bytes.Buffer
	for _, v := range vals {
		if err := binary.Write(&buf, binary.LittleEndian, v); err != nil {
			panic(err)
		}
	}
	return buf.Bytes()
}

func TestTypedFieldDecode(t *testing.T) {
	cases := []struct {
		name string
		tp   *onnxpb.TensorProto
		want []byte
	}{
		{"float32", &onnxpb.TensorProto{DataType: proto.Int32(int32(graph.Float)), Dims: []int64{3}, FloatData: []float32{1.5, -2, float32(math.Inf(1))}},
			leBytes(float32(1.5), float32(-2), float32(math.Inf(1)))},
		{"float16", &onnxpb.TensorProto{DataType: proto.Int32(int32(graph.Float16)), Dims: []int64{2}, Int32Data: []int32{0x3C00, 0xC000}},
			[]byte{0x00, 0x3C, 0x00, 0xC0}},
		{"bfloat16", &onnxpb.TensorProto{DataType: proto.Int32(int32(graph.BFloat16)), Dims: []int64{1}, Int32Data: []int32{0x3F80}},
			[]byte{0x80, 0x3F}},
		{"float64", &onnxpb.TensorProto{DataType: proto.Int32(int32(graph.Double)), Dims: []int64{2}, DoubleData: []float64{1.25, -1e300}},
			leBytes(1.25, -1e300)},
		{"int8", &onnxpb.TensorProto{DataType: proto.Int32(int32(graph.Int8)), Dims: []int64{3}, Int32Data: []int32{-1, 127, -128}},
			[]byte{0xFF, 0x7F, 0x80}},
		{"int16", &onnxpb.TensorProto{DataType: proto.Int32(int32(graph.Int16)), Dims: []int64{2}, Int32Data: []int32{-2, 300}},
			leBytes(int16(-2), int16(300))},
		{"int32", &onnxpb.TensorProto{DataType: proto.Int32(int32(graph.Int32)), Dims: []int64{2, 1}, Int32Data: []int32{-1, 1 << 30}},
			leBytes(int32(-1), int32(1<<30))},
		{"int64", &onnxpb.TensorProto{DataType: proto.Int32(int32(graph.Int64)), Dims: []int64{2}, Int64Data: []int64{-3, 1 << 40}},
			leBytes(int64(-3), int64(1<<40))},
		{"uint8", &onnxpb.TensorProto{DataType: proto.Int32(int32(graph.Uint8)), Dims: []int64{2}, Int32Data: []int32{255, 0}},
			[]byte{0xFF, 0x00}},
		{"uint16", &onnxpb.TensorProto{DataType: proto.Int32(int32(graph.Uint16)), Dims: []int64{1}, Int32Data: []int32{65535}},
			[]byte{0xFF, 0xFF}},
		{"uint32", &onnxpb.TensorProto{DataType: proto.Int32(int32(graph.Uint32)), Dims: []int64{1}, Uint64Data: []uint64{1<<32 - 1}},
			[]byte{0xFF, 0xFF, 0xFF, 0xFF}},
		{"uint64", &onnxpb.TensorProto{DataType: proto.Int32(int32(graph.Uint64)), Dims: []int64{1}, Uint64Data: []uint64{1 << 63}},
			leBytes(uint64(1 << 63))},
		{"bool", &onnxpb.TensorProto{DataType: proto.Int32(int32(graph.Bool)), Dims: []int64{3}, Int32Data: []int32{1, 0, 1}},
			[]byte{1, 0, 1}},
		{"scalar", &onnxpb.TensorProto{DataType: proto.Int32(int32(graph.Float)), FloatData: []float32{7}},
			leBytes(float32(7))},
		{"raw", &onnxpb.TensorProto{DataType: proto.Int32(int32(graph.Int16)), Dims: []int64{2}, RawData: []byte{1, 2, 3, 4}},
			[]byte{1, 2, 3, 4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.tp.Name = proto.String("t")
			orig := modelProto(&onnxpb.GraphProto{
				Node:        []*onnxpb.NodeProto{node("Identity", "id", []string{"t"}, []string{"y"})},
				Initializer: []*onnxpb.TensorProto{c.tp},
				Output:      []*onnxpb.ValueInfoProto{vinfo("y", graph.DType(c.tp.GetDataType()))},
			})
			m := mustDecode(t, mustMarshal(t, orig))
			tt := m.Graph.Value("t").Init
			if !bytes.Equal(tt.Raw, c.want) {
				t.Fatalf("Raw = % x, want % x", tt.Raw, c.want)
			}
			if err := tt.Check(); err != nil {
				t.Fatal(err)
			}
			if got := unmarshalModel(t, mustEncode(t, m)); !proto.Equal(got, orig) {
				t.Fatalf("unchanged tensor was re-encoded: %v", got.Graph.Initializer[0])
			}
		})
	}
}

func TestStringTensor(t *testing.T) {
	orig := modelProto(&onnxpb.GraphProto{
		Node: []*onnxpb.NodeProto{node("Identity", "id", []string{"s"}, []string{"y"})},
		Initializer: []*onnxpb.TensorProto{{Name: proto.String("s"), DataType: proto.Int32(int32(graph.String)),
			Dims: []int64{2}, StringData: [][]byte{[]byte("a"), []byte("bc")}}},
		Output: []*onnxpb.ValueInfoProto{vinfo("y", graph.String, 2)},
	})
	m := mustDecode(t, mustMarshal(t, orig))
	s := m.Graph.Value("s").Init
	if len(s.Strings) != 2 || string(s.Strings[1]) != "bc" {
		t.Fatalf("Strings = %q", s.Strings)
	}
	s.Strings[1] = []byte("xyz")
	got := unmarshalModel(t, mustEncode(t, m))
	if sd := got.Graph.Initializer[0].GetStringData(); len(sd) != 2 || string(sd[1]) != "xyz" {
		t.Fatalf("string_data = %q", sd)
	}
}

func TestFromScratchRoundTrip(t *testing.T) {
	m := mlp(t, 4, 3, 1)
	b := mustEncode(t, m)
	mp := unmarshalModel(t, b)
	if mp.GetIrVersion() != 8 || len(mp.GetOpsetImport()) != 1 || mp.GetOpsetImport()[0].GetVersion() != 17 {
		t.Fatalf("model header: ir %d opsets %v", mp.GetIrVersion(), mp.GetOpsetImport())
	}
	if n := len(mp.GetGraph().GetNode()); n != 4 {
		t.Fatalf("%d nodes, want 4", n)
	}
	d := mustDecode(t, b)
	if err := d.Graph.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"W", "B"} {
		a, _ := m.Graph.Value(name).Init.Float32s()
		c, err := d.Graph.Value(name).Init.Float32s()
		if err != nil {
			t.Fatal(err)
		}
		if !bitsEqual(a, c) {
			t.Errorf("%s differs after round trip", name)
		}
	}
	x := d.Graph.Inputs[0]
	if x.Name != "x" || x.Type == nil || x.Type.Shape[0].Param != "N" || x.Type.Shape[1].Size != 4 {
		t.Errorf("input x decoded as %+v", x.Type)
	}
	sm := d.Graph.Nodes()[3]
	if sm.OpType != "Softmax" || sm.AttrInt("axis", 0) != -1 || sm.Input(0) != d.Graph.Nodes()[2].Output(0) {
		t.Errorf("softmax decoded wrong: %v axis %d", sm, sm.AttrInt("axis", 0))
	}
	if d.Metadata["purpose"] != "test" || d.ProducerName != "onnxio-test" {
		t.Errorf("metadata %v producer %q", d.Metadata, d.ProducerName)
	}
	// Decoded and re-encoded with no change: identical message.
	if !proto.Equal(unmarshalModel(t, mustEncode(t, d)), mp) {
		t.Error("decode+encode changed a model written by Encode")
	}
}

// TestEditsAreWritten checks that changes to modelled fields reach the file.
func TestEditsAreWritten(t *testing.T) {
	d := mustDecode(t, mustEncode(t, mlp(t, 4, 3, 1)))
	d.Graph.Nodes()[3].SetAttr(&graph.Attribute{Name: "axis", Type: graph.AttrInt, I: 1})
	d.Graph.Nodes()[2].Name = "relu2"
	d.Graph.Outputs[0].Type.Shape[0] = graph.Dim{Size: 8}
	d.Metadata["extra"] = "1"
	d.Opsets[0].Version = 18
	mp := unmarshalModel(t, mustEncode(t, d))
	gp := mp.GetGraph()
	if a := gp.Node[3].Attribute[0]; a.GetI() != 1 || a.GetType() != onnxpb.AttributeProto_INT {
		t.Errorf("axis attribute = %v", a)
	}
	if gp.Node[2].GetName() != "relu2" {
		t.Errorf("node name %q", gp.Node[2].GetName())
	}
	if d0 := gp.Output[0].GetType().GetTensorType().GetShape().GetDim()[0]; d0.GetDimValue() != 8 {
		t.Errorf("output dim 0 = %v", d0)
	}
	if len(mp.MetadataProps) != 2 || mp.MetadataProps[0].GetKey() != "purpose" || mp.MetadataProps[1].GetKey() != "extra" {
		t.Errorf("metadata %v", mp.MetadataProps)
	}
	if mp.OpsetImport[0].GetVersion() != 18 {
		t.Errorf("opset %v", mp.OpsetImport)
	}
}

// TestSubgraphForwardAndOuterRefs: an If node whose branches use outer
// values, one of them computed by a node stored after the If.
func TestSubgraphForwardAndOuterRefs(t *testing.T) {
	then := &onnxpb.GraphProto{
		Name:   proto.String("then"),
		Node:   []*onnxpb.NodeProto{node("Identity", "t_id", []string{"x2"}, []string{"t_out"})},
		Output: []*onnxpb.ValueInfoProto{vinfo("t_out", graph.Float, 2)},
	}
	els := &onnxpb.GraphProto{
		Name:   proto.String("else"),
		Node:   []*onnxpb.NodeProto{node("Identity", "e_id", []string{"x"}, []string{"e_out"})},
		Output: []*onnxpb.ValueInfoProto{vinfo("e_out", graph.Float, 2)},
	}
	graphAttr := func(name string, g *onnxpb.GraphProto) *onnxpb.AttributeProto {
		return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_GRAPH.Enum(), G: g}
	}
	orig := modelProto(&onnxpb.GraphProto{
		Name: proto.String("main"),
		Node: []*onnxpb.NodeProto{
			node("If", "if", []string{"cond"}, []string{"y"}, graphAttr("then_branch", then), graphAttr("else_branch", els)),
			node("Neg", "neg", []string{"x"}, []string{"x2"}),
		},
		Input:  []*onnxpb.ValueInfoProto{vinfo("cond", graph.Bool), vinfo("x", graph.Float, 2)},
		Output: []*onnxpb.ValueInfoProto{vinfo("y", graph.Float, 2)},
	})
	m := mustDecode(t, mustMarshal(t, orig))
	g := m.Graph
	ifNode, neg := g.Nodes()[0], g.Nodes()[1]
	tb := ifNode.Attr("then_branch").G
	if tb == nil || tb.Parent != g {
		t.Fatalf("then branch parent not set")
	}
	if in := tb.Nodes()[0].Input(0); in != neg.Output(0) {
		t.Fatalf("then branch uses %v, want the Neg output of the main graph", in)
	}
	if in := ifNode.Attr("else_branch").G.Nodes()[0].Input(0); in != g.Inputs[1] {
		t.Fatalf("else branch uses %v, want main input x", in)
	}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	order, err := g.Topo()
	if err != nil {
		t.Fatal(err)
	}
	if order[0] != neg {
		t.Errorf("topological order starts with %v, want the Neg the If's branch depends on", order[0])
	}
	if got := unmarshalModel(t, mustEncode(t, m)); !proto.Equal(got, orig) {
		t.Error("round trip changed the model")
	}
}

// TestInitializersListedAsInputs: IR < 4 models list initializers in
// graph.input too.
func TestInitializersListedAsInputs(t *testing.T) {
	orig := modelProto(&onnxpb.GraphProto{
		Node:  []*onnxpb.NodeProto{node("Add", "add", []string{"x", "w"}, []string{"y"})},
		Input: []*onnxpb.ValueInfoProto{vinfo("x", graph.Float, 2), vinfo("w", graph.Float, 2)},
		Initializer: []*onnxpb.TensorProto{{Name: proto.String("w"), DataType: proto.Int32(int32(graph.Float)),
			Dims: []int64{2}, RawData: leBytes(float32(1), float32(2))}},
		Output: []*onnxpb.ValueInfoProto{vinfo("y", graph.Float, 2)},
	})
	orig.IrVersion = proto.Int64(3)
	m := mustDecode(t, mustMarshal(t, orig))
	w := m.Graph.Value("w")
	if !w.IsInitializer() || !m.Graph.IsInput(w) || len(m.Graph.Initializers) != 1 {
		t.Fatalf("w: initializer %v, input %v", w.IsInitializer(), m.Graph.IsInput(w))
	}
	if m.Graph.Nodes()[0].Input(1) != w {
		t.Fatal("Add does not use the initializer value")
	}
	if got := unmarshalModel(t, mustEncode(t, m)); !proto.Equal(got, orig) {
		t.Error("round trip changed the model")
	}
}

func TestUnknownFieldsSurvive(t *testing.T) {
	mp := unmarshalModel(t, mustEncode(t, mlp(t, 4, 3, 1)))
	extra := protowire.AppendTag(nil, 4242, protowire.BytesType)
	extra = protowire.AppendString(extra, "from the future")
	extraVarint := protowire.AppendVarint(protowire.AppendTag(nil, 26, protowire.VarintType), 7)

	nodeBytes := append(mustMarshal(t, mp.Graph.Node[1]), extra...)
	n := &onnxpb.NodeProto{}
	if err := proto.Unmarshal(nodeBytes, n); err != nil {
		t.Fatal(err)
	}
	mp.Graph.Node[1] = n
	tensorBytes := append(mustMarshal(t, mp.Graph.Initializer[0]), extra...)
	tp := &onnxpb.TensorProto{}
	if err := proto.Unmarshal(tensorBytes, tp); err != nil {
		t.Fatal(err)
	}
	mp.Graph.Initializer[0] = tp
	file := append(mustMarshal(t, mp), extraVarint...)

	m := mustDecode(t, file)
	m.Graph.Nodes()[1].Name = "renamed" // a modelled change must not drop them
	vals, _ := m.Graph.Initializers[0].Init.Float32s()
	vals[0] = 42
	got := unmarshalModel(t, mustEncode(t, m))
	if u := got.Graph.Node[1].ProtoReflect().GetUnknown(); !bytes.Equal(u, extra) {
		t.Errorf("node unknown fields = % x, want % x", u, extra)
	}
	if got.Graph.Node[1].GetName() != "renamed" {
		t.Errorf("node name %q", got.Graph.Node[1].GetName())
	}
	if u := got.Graph.Initializer[0].ProtoReflect().GetUnknown(); !bytes.Equal(u, extra) {
		t.Errorf("tensor unknown fields = % x, want % x", u, extra)
	}
	if u := got.ProtoReflect().GetUnknown(); !bytes.Equal(u, extraVarint) {
		t.Errorf("model unknown fields = % x, want % x", u, extraVarint)
	}
}

func TestDecodeErrors(t *testing.T) {
	good := mustEncode(t, mlp(t, 4, 3, 1))
	dupe := modelProto(&onnxpb.GraphProto{
		Node:   []*onnxpb.NodeProto{node("Relu", "r1", []string{"x"}, []string{"y"}), node("Relu", "r2", []string{"x"}, []string{"y"})},
		Input:  []*onnxpb.ValueInfoProto{vinfo("x", graph.Float, 1)},
		Output: []*onnxpb.ValueInfoProto{vinfo("y", graph.Float, 1)},
	})
	undef := modelProto(&onnxpb.GraphProto{
		Node:   []*onnxpb.NodeProto{node("Relu", "r1", []string{"nope"}, []string{"y"})},
		Output: []*onnxpb.ValueInfoProto{vinfo("y", graph.Float, 1)},
	})
	undefOut := modelProto(&onnxpb.GraphProto{
		Node:   []*onnxpb.NodeProto{node("Relu", "r1", []string{"x"}, []string{"y"})},
		Input:  []*onnxpb.ValueInfoProto{vinfo("x", graph.Float, 1)},
		Output: []*onnxpb.ValueInfoProto{vinfo("z", graph.Float, 1)},
	})
	badData := modelProto(&onnxpb.GraphProto{
		Node: []*onnxpb.NodeProto{node("Identity", "id", []string{"w"}, []string{"y"})},
		Initializer: []*onnxpb.TensorProto{{Name: proto.String("w"), DataType: proto.Int32(int32(graph.Float)),
			Dims: []int64{3}, RawData: []byte{1, 2, 3, 4}}},
		Output: []*onnxpb.ValueInfoProto{vinfo("y", graph.Float, 3)},
	})
	// [10, 2^62+1] float32: the element count wraps around int64 and, times
	// 4 bytes, to exactly 40, so an unchecked product accepts 40 bytes of
	// data and the tensor's Len is later taken as a huge allocation.
	overflow := modelProto(&onnxpb.GraphProto{
		Node: []*onnxpb.NodeProto{node("Identity", "id", []string{"w"}, []string{"y"})},
		Initializer: []*onnxpb.TensorProto{{Name: proto.String("w"), DataType: proto.Int32(int32(graph.Float)),
			Dims: []int64{10, 1<<62 + 1}, RawData: make([]byte, 40)}},
		Output: []*onnxpb.ValueInfoProto{vinfo("y", graph.Float, 3)},
	})
	noGraph := &onnxpb.ModelProto{IrVersion: proto.Int64(8), ProducerName: proto.String("x")}
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x06\x00\x00\x00\x1f\xf3\xffa")
	cases := []struct {
		name string
		data []byte
		want error
		msg  []string
	}{
		{"empty", nil, ErrNotModel, []string{"empty"}},
		{"truncated", good[:len(good)/2], ErrTruncated, nil},
		{"truncated tag", good[:1], ErrTruncated, nil},
		{"text", []byte("this is not a model\n"), ErrNotModel, nil},
		{"png", png, ErrNotModel, nil},
		{"no graph", mustMarshal(t, noGraph), ErrNotModel, []string{"no graph"}},
		{"parses but no ir_version", mustMarshal(t, &onnxpb.ModelProto{Graph: dupe.Graph}), ErrNotModel, []string{"ir_version"}},
		{"duplicate", mustMarshal(t, dupe), ErrInvalid, []string{`"y"`, "Relu"}},
		{"undefined input", mustMarshal(t, undef), ErrInvalid, []string{`Relu node "r1"`, `"nope"`}},
		{"undefined output", mustMarshal(t, undefOut), ErrInvalid, []string{`"z"`}},
		{"bad tensor data", mustMarshal(t, badData), ErrInvalid, []string{`"w"`, "4 bytes"}},
		{"dims overflow int64", mustMarshal(t, overflow), ErrInvalid, []string{`"w"`, "more elements than an int64"}},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".onnx")
			if err := os.WriteFile(path, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, c.want) {
				t.Errorf("error %q is not %v", err, c.want)
			}
			for _, s := range append(c.msg, path) {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %s", err, s)
				}
			}
		})
	}
	if _, err := Load(filepath.Join(dir, "missing.onnx")); err == nil || !strings.Contains(err.Error(), "missing.onnx") {
		t.Errorf("missing file: %v", err)
	}
}

// TestDuplicateMetadataKey (issue 45 item 11): a key the tool reads
// (unlearn.*) given twice is refused naming the key, instead of the last
// value winning silently; another key given twice is kept as the file has
// it (the tool does not read it).
func TestDuplicateMetadataKey(t *testing.T) {
	mp := unmarshalModel(t, mustEncode(t, mlp(t, 4, 3, 1)))
	entry := func(k, v string) *onnxpb.StringStringEntryProto {
		return &onnxpb.StringStringEntryProto{Key: proto.String(k), Value: proto.String(v)}
	}
	mp.MetadataProps = append(mp.MetadataProps, entry("unlearn.mean", "0.5"), entry("unlearn.mean", "0.1"))
	_, err := Decode(mustMarshal(t, mp), "")
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `metadata key "unlearn.mean" appears more than once`) {
		t.Errorf("duplicated unlearn.mean: %v", err)
	}
	mp.MetadataProps = append(mp.MetadataProps[:len(mp.MetadataProps)-2], entry("author", "a"), entry("author", "b"))
	if _, err := Decode(mustMarshal(t, mp), ""); err != nil {
		t.Errorf("duplicated key the tool does not read: %v", err)
	}
}
