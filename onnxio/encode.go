package onnxio

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"google.golang.org/protobuf/proto"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/onnxio/onnxpb"
)

// protoLimit is the largest message protobuf's C++ and Python implementations
// (and so ONNX Runtime and the onnx package) accept: 2 GB - 1. A variable so
// that tests can lower it.
var protoLimit = math.MaxInt32

// Encode serializes m with all tensor data inline. Objects decoded by this
// package are written from their original protobuf message with the fields
// the IR models overwritten, so that everything else survives (functions,
// training info, metadata of newer ONNX versions, unknown fields); unchanged
// tensors keep their original encoding, changed ones are written as raw_data;
// tensors that were read from external data are written inline.
// Encode fails with ErrTooLarge when the result would exceed 2 GB; Save
// writes such models with external data.
func Encode(m *graph.Model) ([]byte, error) {
	e := &encoder{}
	mp, err := e.model(m)
	if err != nil {
		return nil, fmt.Errorf("onnxio: encode: %w", err)
	}
	size := proto.Size(mp)
	if size > protoLimit {
		return nil, fmt.Errorf("onnxio: encode: %w: %d bytes; save it with external data", ErrTooLarge, size)
	}
	return proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(make([]byte, 0, size), mp)
}

// encoder builds a ModelProto; ext, when set, moves large initializers to an
// external data file.
type encoder struct {
	ext *extWriter
}

func setStr(dst **string, cur, v string) {
	if cur != v {
		*dst = proto.String(v)
	}
}

func setInt(dst **int64, cur, v int64) {
	if cur != v {
		*dst = proto.Int64(v)
	}
}

func (e *encoder) model(m *graph.Model) (*onnxpb.ModelProto, error) {
	if m == nil || m.Graph == nil {
		return nil, fmt.Errorf("model has no graph")
	}
	if m.IRVersion <= 0 {
		return nil, fmt.Errorf("model has no IR version")
	}
	x, _ := m.Ext.(*modelExt)
	var mp *onnxpb.ModelProto
	if x != nil {
		mp = shallow(x.pb)
	} else {
		mp = &onnxpb.ModelProto{}
	}
	setInt(&mp.IrVersion, mp.GetIrVersion(), m.IRVersion)
	setStr(&mp.ProducerName, mp.GetProducerName(), m.ProducerName)
	setStr(&mp.ProducerVersion, mp.GetProducerVersion(), m.ProducerVersion)
	setStr(&mp.Domain, mp.GetDomain(), m.Domain)
	setInt(&mp.ModelVersion, mp.GetModelVersion(), m.ModelVersion)
	setStr(&mp.DocString, mp.GetDocString(), m.Doc)
	if x == nil || !sliceEqual(m.Opsets, x.opsets) {
		mp.OpsetImport = make([]*onnxpb.OperatorSetIdProto, len(m.Opsets))
		for i, o := range m.Opsets {
			mp.OpsetImport[i] = &onnxpb.OperatorSetIdProto{Domain: proto.String(o.Domain), Version: proto.Int64(o.Version)}
		}
	}
	if x == nil || !mapEqual(m.Metadata, x.meta) {
		mp.MetadataProps = metadataProps(m.Metadata, mp.GetMetadataProps())
	}
	g, err := e.graph(m.Graph)
	if err != nil {
		return nil, err
	}
	mp.Graph = g
	return mp, nil
}

func mapEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// metadataProps writes meta keeping the original order of the keys that
// remain, then the new keys sorted.
func metadataProps(meta map[string]string, orig []*onnxpb.StringStringEntryProto) []*onnxpb.StringStringEntryProto {
	out := make([]*onnxpb.StringStringEntryProto, 0, len(meta))
	done := map[string]bool{}
	for _, p := range orig {
		k := p.GetKey()
		if v, ok := meta[k]; ok && !done[k] {
			done[k] = true
			out = append(out, &onnxpb.StringStringEntryProto{Key: proto.String(k), Value: proto.String(v)})
		}
	}
	keys := make([]string, 0, len(meta))
	for k := range meta {
		if !done[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, &onnxpb.StringStringEntryProto{Key: proto.String(k), Value: proto.String(meta[k])})
	}
	return out
}

func (e *encoder) graph(g *graph.Graph) (*onnxpb.GraphProto, error) {
	x, _ := g.Ext.(*graphExt)
	var gp *onnxpb.GraphProto
	var in, out, info func(*graph.Value) *onnxpb.ValueInfoProto
	if x != nil {
		gp = shallow(x.pb)
		in, out, info = x.inputs.picker(), x.outputs.picker(), x.info.picker()
	} else {
		gp = &onnxpb.GraphProto{}
		none := func(*graph.Value) *onnxpb.ValueInfoProto { return nil }
		in, out, info = none, none, none
	}
	setStr(&gp.Name, gp.GetName(), g.Name)
	setStr(&gp.DocString, gp.GetDocString(), g.Doc)
	gp.Node = make([]*onnxpb.NodeProto, len(g.Nodes()))
	for i, n := range g.Nodes() {
		np, err := e.node(n)
		if err != nil {
			return nil, fmt.Errorf("graph %q: %w", g.Name, err)
		}
		gp.Node[i] = np
	}
	gp.Initializer = make([]*onnxpb.TensorProto, len(g.Initializers))
	for i, v := range g.Initializers {
		if v.Init == nil {
			return nil, fmt.Errorf("graph %q: initializer %q has no data", g.Name, v.Name)
		}
		tp, err := e.tensor(v.Init, v.Name, true)
		if err != nil {
			return nil, fmt.Errorf("graph %q: initializer: %w", g.Name, err)
		}
		gp.Initializer[i] = tp
	}
	gp.Input = valueInfos(g.Inputs, in)
	gp.Output = valueInfos(g.Outputs, out)
	gp.ValueInfo = valueInfos(g.ValueInfo, info)
	return gp, nil
}

func valueInfos(vs []*graph.Value, orig func(*graph.Value) *onnxpb.ValueInfoProto) []*onnxpb.ValueInfoProto {
	out := make([]*onnxpb.ValueInfoProto, len(vs))
	for i, v := range vs {
		out[i] = valueInfo(v, orig(v))
	}
	return out
}

// valueInfo writes v's entry of a value list, starting from the entry's
// original proto when there is one.
func valueInfo(v *graph.Value, orig *onnxpb.ValueInfoProto) *onnxpb.ValueInfoProto {
	x, _ := v.Ext.(*valueExt)
	if orig == nil || x == nil {
		vi := &onnxpb.ValueInfoProto{Name: proto.String(v.Name)}
		if v.Type != nil {
			vi.Type = typeProto(v.Type)
		}
		if v.Doc != "" {
			vi.DocString = proto.String(v.Doc)
		}
		return vi
	}
	vi := shallow(orig)
	setStr(&vi.Name, vi.GetName(), v.Name)
	if !typeEqual(v.Type, x.typ) {
		if v.Type != nil {
			vi.Type = typeProto(v.Type)
		} else {
			vi.Type = nil
		}
	}
	if v.Doc != x.doc {
		setStr(&vi.DocString, vi.GetDocString(), v.Doc)
	}
	return vi
}

func typeProto(t *graph.Type) *onnxpb.TypeProto {
	tt := &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(t.DType))}
	if t.Shape != nil {
		sh := &onnxpb.TensorShapeProto{Dim: make([]*onnxpb.TensorShapeProto_Dimension, len(t.Shape))}
		for i, d := range t.Shape {
			dim := &onnxpb.TensorShapeProto_Dimension{}
			switch {
			case d.Param != "":
				dim.Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: d.Param}
			case d.Size >= 0:
				dim.Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d.Size}
			}
			sh.Dim[i] = dim
		}
		tt.Shape = sh
	}
	return &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: tt}}
}

func (e *encoder) node(n *graph.Node) (*onnxpb.NodeProto, error) {
	var np *onnxpb.NodeProto
	if orig, ok := n.Ext.(*onnxpb.NodeProto); ok {
		np = shallow(orig)
	} else {
		np = &onnxpb.NodeProto{}
	}
	setStr(&np.Name, np.GetName(), n.Name)
	setStr(&np.OpType, np.GetOpType(), n.OpType)
	setStr(&np.Domain, np.GetDomain(), n.Domain)
	setStr(&np.DocString, np.GetDocString(), n.Doc)
	if names := valueNames(n.Inputs()); !sliceEqual(names, np.GetInput()) {
		np.Input = names
	}
	if names := valueNames(n.Outputs()); !sliceEqual(names, np.GetOutput()) {
		np.Output = names
	}
	np.Attribute = make([]*onnxpb.AttributeProto, len(n.Attrs))
	for i, a := range n.Attrs {
		ap, err := e.attribute(a)
		if err != nil {
			return nil, fmt.Errorf("%v: attribute %q: %w", n, a.Name, err)
		}
		np.Attribute[i] = ap
	}
	return np, nil
}

func valueNames(vs []*graph.Value) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		if v != nil {
			out[i] = v.Name
		}
	}
	return out
}

// attribute writes a. An attribute decoded from a proto whose type is still
// the same is written from that proto with changed fields replaced; otherwise
// only the field selected by a.Type is written.
func (e *encoder) attribute(a *graph.Attribute) (*onnxpb.AttributeProto, error) {
	orig, _ := a.Ext.(*onnxpb.AttributeProto)
	if orig != nil && attrTypeOf(orig) != a.Type {
		orig = nil
	}
	if orig == nil {
		return e.newAttribute(a)
	}
	ap := shallow(orig)
	setStr(&ap.Name, ap.GetName(), a.Name)
	setStr(&ap.RefAttrName, ap.GetRefAttrName(), a.RefAttrName)
	setStr(&ap.DocString, ap.GetDocString(), a.Doc)
	if math.Float32bits(ap.GetF()) != math.Float32bits(a.F) {
		ap.F = proto.Float32(a.F)
	}
	setInt(&ap.I, ap.GetI(), a.I)
	if string(ap.GetS()) != string(a.S) {
		ap.S = a.S
	}
	if !float32sEqual(ap.GetFloats(), a.Floats) {
		ap.Floats = a.Floats
	}
	if !sliceEqual(ap.GetInts(), a.Ints) {
		ap.Ints = a.Ints
	}
	if !bytesListEqual(ap.GetStrings(), a.Strings) {
		ap.Strings = a.Strings
	}
	var err error
	ap.T = nil
	if a.T != nil {
		if ap.T, err = e.tensor(a.T, a.T.Name, false); err != nil {
			return nil, err
		}
	}
	ap.G = nil
	if a.G != nil {
		if ap.G, err = e.graph(a.G); err != nil {
			return nil, err
		}
	}
	if ap.Tensors, err = e.tensors(a.Tensors); err != nil {
		return nil, err
	}
	if ap.Graphs, err = e.graphs(a.Graphs); err != nil {
		return nil, err
	}
	return ap, nil
}

func (e *encoder) newAttribute(a *graph.Attribute) (*onnxpb.AttributeProto, error) {
	ap := &onnxpb.AttributeProto{Name: proto.String(a.Name)}
	if a.RefAttrName != "" {
		ap.RefAttrName = proto.String(a.RefAttrName)
	}
	if a.Doc != "" {
		ap.DocString = proto.String(a.Doc)
	}
	if a.Type != graph.AttrUndefined {
		ap.Type = onnxpb.AttributeProto_AttributeType(a.Type).Enum()
	}
	if a.RefAttrName != "" {
		return ap, nil
	}
	var err error
	switch a.Type {
	case graph.AttrFloat:
		ap.F = proto.Float32(a.F)
	case graph.AttrInt:
		ap.I = proto.Int64(a.I)
	case graph.AttrString:
		ap.S = a.S
		if ap.S == nil {
			ap.S = []byte{}
		}
	case graph.AttrTensor:
		if a.T == nil {
			return nil, fmt.Errorf("tensor attribute without a tensor")
		}
		ap.T, err = e.tensor(a.T, a.T.Name, false)
	case graph.AttrGraph:
		if a.G == nil {
			return nil, fmt.Errorf("graph attribute without a graph")
		}
		ap.G, err = e.graph(a.G)
	case graph.AttrFloats:
		ap.Floats = a.Floats
	case graph.AttrInts:
		ap.Ints = a.Ints
	case graph.AttrStrings:
		ap.Strings = a.Strings
	case graph.AttrTensors:
		ap.Tensors, err = e.tensors(a.Tensors)
	case graph.AttrGraphs:
		ap.Graphs, err = e.graphs(a.Graphs)
	default:
		return nil, fmt.Errorf("cannot write attribute of type %d without its original proto", a.Type)
	}
	return ap, err
}

func (e *encoder) tensors(ts []*graph.Tensor) ([]*onnxpb.TensorProto, error) {
	if len(ts) == 0 {
		return nil, nil
	}
	out := make([]*onnxpb.TensorProto, len(ts))
	for i, t := range ts {
		tp, err := e.tensor(t, t.Name, false)
		if err != nil {
			return nil, err
		}
		out[i] = tp
	}
	return out, nil
}

func (e *encoder) graphs(gs []*graph.Graph) ([]*onnxpb.GraphProto, error) {
	if len(gs) == 0 {
		return nil, nil
	}
	out := make([]*onnxpb.GraphProto, len(gs))
	for i, g := range gs {
		gp, err := e.graph(g)
		if err != nil {
			return nil, err
		}
		out[i] = gp
	}
	return out, nil
}

// tensor writes t under the given name. Unchanged data keeps its original
// encoding; changed data goes to raw_data (string_data for strings); with an
// external writer, large initializers go to the external file.
func (e *encoder) tensor(t *graph.Tensor, name string, initializer bool) (*onnxpb.TensorProto, error) {
	x, _ := t.Ext.(*tensorExt)
	var tp *onnxpb.TensorProto
	if x != nil {
		tp = shallow(x.pb)
	} else {
		tp = &onnxpb.TensorProto{}
	}
	if x == nil || tp.GetName() != name {
		if name != "" || tp.Name != nil {
			tp.Name = proto.String(name)
		}
	}
	if x == nil || tp.GetDataType() != int32(t.DType) {
		tp.DataType = proto.Int32(int32(t.DType))
	}
	if !sliceEqual(tp.GetDims(), t.Shape) {
		tp.Dims = append([]int64(nil), t.Shape...)
	}
	keep := x.unchanged(t) && !x.external
	if external := e.ext != nil && initializer && t.DType != graph.String && len(t.Raw) >= e.ext.threshold; external {
		if err := checkData(t); err != nil {
			return nil, err
		}
		clearData(tp)
		off := e.ext.add(t.Raw)
		tp.DataLocation = onnxpb.TensorProto_EXTERNAL.Enum()
		tp.ExternalData = []*onnxpb.StringStringEntryProto{
			{Key: proto.String("location"), Value: proto.String(e.ext.location)},
			{Key: proto.String("offset"), Value: proto.String(strconv.FormatInt(off, 10))},
			{Key: proto.String("length"), Value: proto.String(strconv.Itoa(len(t.Raw)))},
		}
		return tp, nil
	}
	if keep {
		return tp, nil
	}
	if err := checkData(t); err != nil {
		return nil, err
	}
	clearData(tp)
	if t.DType == graph.String {
		tp.StringData = t.Strings
	} else if t.Raw != nil {
		tp.RawData = t.Raw
	}
	return tp, nil
}

// checkData verifies that t's data matches its shape, for the types whose
// element size is known.
func checkData(t *graph.Tensor) error {
	if t.DType == graph.String || elemSize(t.DType) == 0 {
		return nil
	}
	want := graph.NumElements(t.Shape) * int64(elemSize(t.DType))
	if int64(len(t.Raw)) != want {
		return fmt.Errorf("%w: tensor %q: %d bytes of data, shape %v of %v needs %d",
			ErrInvalid, t.Name, len(t.Raw), t.Shape, t.DType, want)
	}
	return nil
}

func clearData(tp *onnxpb.TensorProto) {
	tp.RawData = nil
	tp.FloatData = nil
	tp.Int32Data = nil
	tp.StringData = nil
	tp.Int64Data = nil
	tp.DoubleData = nil
	tp.Uint64Data = nil
	tp.ExternalData = nil
	tp.DataLocation = nil
}
