package onnxio

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/fsread"
	"github.com/unlearn-tool/unlearn/onnxio/onnxpb"
)

// Load reads an ONNX model file. External data is resolved relative to the
// file's folder. Errors name the file.
//
// The whole file is read into memory and parsed in one go. protobuf's C++
// and Python implementations refuse messages over 2 GB; Go's does not, so a
// model of 2 GB or more without external data still loads here (Save then
// writes it with external data, see SaveOptions).
func Load(path string) (*graph.Model, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("onnxio: load %s: %w", path, err)
	}
	// A model file is one protobuf message, which cannot exceed 2 GB
	// (larger models keep their weights in external data).
	data, err := fsread.File(abs, "model", 2<<30)
	if err != nil {
		return nil, fmt.Errorf("onnxio: load: %w", err)
	}
	countLoad(abs)
	m, err := decode(data, filepath.Dir(abs), abs)
	if err != nil {
		return nil, fmt.Errorf("onnxio: load %s: %w", path, err)
	}
	return m, nil
}

// Decode parses a serialized ModelProto. baseDir is the folder that external
// data locations are relative to; "" refuses external data.
//
// Tensors' Raw data shares memory with the decoded protobuf message kept in
// Ext; data is not copied again after parsing.
func Decode(data []byte, baseDir string) (*graph.Model, error) {
	if baseDir != "" {
		abs, err := filepath.Abs(baseDir)
		if err != nil {
			return nil, fmt.Errorf("onnxio: decode: %w", err)
		}
		baseDir = abs
	}
	m, err := decode(data, baseDir, "")
	if err != nil {
		return nil, fmt.Errorf("onnxio: decode: %w", err)
	}
	return m, nil
}

func decode(data []byte, baseDir, source string) (*graph.Model, error) {
	mp := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(data, mp); err != nil {
		return nil, diagnose(data, err)
	}
	if err := checkModel(mp, len(data)); err != nil {
		return nil, err
	}
	d := &decoder{baseDir: baseDir}
	defer d.close()
	m, err := d.model(mp)
	if err != nil {
		return nil, err
	}
	x := m.Ext.(*modelExt)
	x.source = source
	x.dataFiles = d.dataFiles
	return m, nil
}

// checkModel catches bytes that happen to parse as protobuf but are not a
// model: every model has an IR version and a graph with nodes or outputs.
func checkModel(mp *onnxpb.ModelProto, n int) error {
	if n == 0 {
		return fmt.Errorf("%w: the file is empty", ErrNotModel)
	}
	if mp.GetIrVersion() <= 0 {
		return fmt.Errorf("%w: no ir_version", ErrNotModel)
	}
	g := mp.GetGraph()
	if g == nil {
		return fmt.Errorf("%w: no graph (or the file is truncated)", ErrNotModel)
	}
	if len(g.GetNode()) == 0 && len(g.GetOutput()) == 0 {
		return fmt.Errorf("%w: the graph has neither nodes nor outputs", ErrNotModel)
	}
	return nil
}

// diagnose explains why proto.Unmarshal failed: a file cut short in the
// middle of a field, or bytes that are not a ModelProto at all.
func diagnose(data []byte, uerr error) error {
	b := data
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			if errors.Is(protowire.ParseError(n), io.ErrUnexpectedEOF) {
				return fmt.Errorf("%w: file ends inside a field tag at byte %d", ErrTruncated, len(data)-len(b))
			}
			return fmt.Errorf("%w: bytes %d.. are not protobuf (%v)", ErrNotModel, len(data)-len(b), uerr)
		}
		if !knownModelField(num, typ) {
			return fmt.Errorf("%w: unexpected field %d (wire type %d) at byte %d (%v)",
				ErrNotModel, num, typ, len(data)-len(b), uerr)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			if typ == protowire.BytesType {
				if l, k := protowire.ConsumeVarint(b[n:]); k > 0 && l > uint64(len(b)-n-k) {
					return fmt.Errorf("%w: field %d at byte %d needs %d bytes, only %d left",
						ErrTruncated, num, len(data)-len(b), l, len(b)-n-k)
				}
			}
			return fmt.Errorf("%w: field %d at byte %d: %v", ErrTruncated, num, len(data)-len(b), protowire.ParseError(m))
		}
		b = b[n+m:]
	}
	// The top level is well formed: the damage is inside a nested message.
	return fmt.Errorf("%w: corrupt model: %v", ErrNotModel, uerr)
}

// knownModelField reports whether (num, typ) is a ModelProto field with its
// wire type; any other field at the top level means the bytes are something
// else.
func knownModelField(num protowire.Number, typ protowire.Type) bool {
	switch num {
	case 1, 5: // ir_version, model_version
		return typ == protowire.VarintType
	case 2, 3, 4, 6, 7, 8, 14, 20, 25: // strings and messages
		return typ == protowire.BytesType
	}
	// Fields of later ONNX versions (e.g. 26 configuration) are accepted if
	// they use a sane wire type.
	return num > 0 && num < 1000 && (typ == protowire.VarintType || typ == protowire.BytesType)
}

// decoder holds the state of one Decode: pending name resolutions (the second
// pass) and the external data files opened.
type decoder struct {
	baseDir   string
	files     map[string]openFile
	dataFiles []string
	inputs    []pendingInput
	outputs   []pendingOutputs
	values    []*graph.Value // values with a valueExt, to snapshot at the end
	// mem is the memory available for external data (memRead: read).
	mem     int64
	memRead bool
}

type pendingInput struct {
	g    *graph.Graph
	n    *graph.Node
	i    int
	name string
}

type pendingOutputs struct {
	g *graph.Graph
	x *graphExt
}

func (d *decoder) close() {
	for _, f := range d.files {
		f.f.Close()
	}
}

func (d *decoder) model(mp *onnxpb.ModelProto) (*graph.Model, error) {
	m := &graph.Model{
		IRVersion:       mp.GetIrVersion(),
		ProducerName:    mp.GetProducerName(),
		ProducerVersion: mp.GetProducerVersion(),
		Domain:          mp.GetDomain(),
		ModelVersion:    mp.GetModelVersion(),
		Doc:             mp.GetDocString(),
	}
	x := &modelExt{pb: mp}
	for _, o := range mp.GetOpsetImport() {
		m.Opsets = append(m.Opsets, graph.OpsetImport{Domain: o.GetDomain(), Version: o.GetVersion()})
	}
	x.opsets = append([]graph.OpsetImport(nil), m.Opsets...)
	if props := mp.GetMetadataProps(); len(props) > 0 {
		m.Metadata = make(map[string]string, len(props))
		x.meta = make(map[string]string, len(props))
		for _, p := range props {
			k := p.GetKey()
			// The tool reads its own keys (unlearn.*); a second value for
			// one of them would silently replace the first.
			if _, dup := m.Metadata[k]; dup && strings.HasPrefix(k, "unlearn.") {
				return nil, fmt.Errorf("%w: metadata key %q appears more than once; keep one (the tool reads it)", ErrInvalid, k)
			}
			m.Metadata[k] = p.GetValue()
			x.meta[k] = p.GetValue()
		}
	}
	g, err := d.graph(mp.GetGraph(), nil)
	if err != nil {
		return nil, err
	}
	if err := d.resolve(); err != nil {
		return nil, err
	}
	m.Graph = g
	m.Ext = x
	return m, nil
}

// graph decodes gp (first pass): it defines inputs, initializers and every
// node's outputs, and records node inputs and graph outputs for resolve, so
// that a name may be used before the node that defines it (in file order, or
// in an enclosing graph).
func (d *decoder) graph(gp *onnxpb.GraphProto, parent *graph.Graph) (*graph.Graph, error) {
	g := graph.NewGraph(gp.GetName())
	g.Parent = parent
	g.Doc = gp.GetDocString()
	x := &graphExt{pb: gp}
	g.Ext = x
	where := func() string { return graphLabel(g) }

	for _, vi := range gp.GetInput() {
		v, err := g.AddInput(vi.GetName(), decodeType(vi.GetType()))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: input: %v", ErrInvalid, where(), err)
		}
		d.setValueExt(v, vi)
		x.inputs.add(v, vi)
	}
	for _, tp := range gp.GetInitializer() {
		t, err := d.decodeTensor(tp)
		if err != nil {
			return nil, fmt.Errorf("%s: initializer: %w", where(), err)
		}
		if _, err := g.AddInitializer(t); err != nil {
			return nil, fmt.Errorf("%w: %s: initializer: %v", ErrInvalid, where(), err)
		}
	}
	for _, sp := range gp.GetSparseInitializer() {
		vals := sp.GetValues()
		t := &graph.Type{DType: graph.DType(vals.GetDataType()), Shape: graph.DimsOf(sp.GetDims())}
		if _, err := g.DefineOpaque(vals.GetName(), t); err != nil {
			return nil, fmt.Errorf("%w: %s: sparse initializer: %v", ErrInvalid, where(), err)
		}
	}
	for k, np := range gp.GetNode() {
		attrs := make([]*graph.Attribute, 0, len(np.GetAttribute()))
		for _, ap := range np.GetAttribute() {
			a, err := d.attribute(ap, g)
			if err != nil {
				return nil, fmt.Errorf("%s: node %d (%s %q): attribute %q: %w",
					where(), k, np.GetOpType(), np.GetName(), ap.GetName(), err)
			}
			attrs = append(attrs, a)
		}
		ins := make([]*graph.Value, len(np.GetInput()))
		n, err := g.AddNode(np.GetOpType(), np.GetDomain(), np.GetName(), ins, np.GetOutput(), attrs...)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: node %d: %v", ErrInvalid, where(), k, err)
		}
		n.Doc = np.GetDocString()
		n.Ext = np
		for i, name := range np.GetInput() {
			if name != "" {
				d.inputs = append(d.inputs, pendingInput{g, n, i, name})
			}
		}
	}
	for _, vi := range gp.GetValueInfo() {
		v := g.LocalValue(vi.GetName())
		if v == nil || containsValue(x.info.vals, v) {
			// An annotation of a value this graph does not define (or a
			// repeated one): kept as a detached value so it is written back.
			v = &graph.Value{Name: vi.GetName(), Doc: vi.GetDocString()}
		}
		if v.Type == nil {
			v.Type = decodeType(vi.GetType())
		}
		d.setValueExt(v, vi)
		g.ValueInfo = append(g.ValueInfo, v)
		x.info.add(v, vi)
	}
	d.outputs = append(d.outputs, pendingOutputs{g, x})
	return g, nil
}

// graphLabel names a graph in error messages.
func graphLabel(g *graph.Graph) string {
	switch {
	case g.Name != "":
		return fmt.Sprintf("graph %q", g.Name)
	case g.Parent == nil:
		return "main graph"
	}
	return "unnamed subgraph"
}

func containsValue(vs []*graph.Value, v *graph.Value) bool {
	for _, w := range vs {
		if w == v {
			return true
		}
	}
	return false
}

// setValueExt records the first ValueInfoProto seen for v and fills in the
// type and doc string if still unknown.
func (d *decoder) setValueExt(v *graph.Value, vi *onnxpb.ValueInfoProto) {
	if v.Type == nil {
		v.Type = decodeType(vi.GetType())
	}
	if v.Doc == "" {
		v.Doc = vi.GetDocString()
	}
	if _, ok := v.Ext.(*valueExt); !ok {
		v.Ext = &valueExt{pb: vi}
		d.values = append(d.values, v)
	}
}

// resolve is the second pass: it connects node inputs and graph outputs to
// the values defined by the first pass, in the graph or its parents.
func (d *decoder) resolve() error {
	for _, p := range d.inputs {
		v := p.g.Value(p.name)
		if v == nil {
			return fmt.Errorf("%w: %s: %v input %d: %q is not defined", ErrInvalid, graphLabel(p.g), p.n, p.i, p.name)
		}
		p.n.SetInput(p.i, v)
	}
	for _, p := range d.outputs {
		for _, vi := range p.x.pb.GetOutput() {
			v := p.g.Value(vi.GetName())
			if v == nil {
				return fmt.Errorf("%w: %s: output %q is not defined", ErrInvalid, graphLabel(p.g), vi.GetName())
			}
			d.setValueExt(v, vi)
			p.g.Outputs = append(p.g.Outputs, v)
			p.x.outputs.add(v, vi)
		}
	}
	for _, v := range d.values {
		x := v.Ext.(*valueExt)
		x.typ = cloneType(v.Type)
		x.doc = v.Doc
	}
	return nil
}

// attribute decodes one attribute; subgraphs become graphs whose Parent is g.
func (d *decoder) attribute(ap *onnxpb.AttributeProto, g *graph.Graph) (*graph.Attribute, error) {
	a := &graph.Attribute{
		Name:        ap.GetName(),
		Type:        attrTypeOf(ap),
		F:           ap.GetF(),
		I:           ap.GetI(),
		S:           ap.GetS(),
		Floats:      ap.GetFloats(),
		Ints:        ap.GetInts(),
		Strings:     ap.GetStrings(),
		RefAttrName: ap.GetRefAttrName(),
		Doc:         ap.GetDocString(),
		Ext:         ap,
	}
	var err error
	if ap.GetT() != nil {
		if a.T, err = d.decodeTensor(ap.GetT()); err != nil {
			return nil, err
		}
	}
	if ap.GetG() != nil {
		if a.G, err = d.graph(ap.GetG(), g); err != nil {
			return nil, err
		}
	}
	for _, tp := range ap.GetTensors() {
		t, err := d.decodeTensor(tp)
		if err != nil {
			return nil, err
		}
		a.Tensors = append(a.Tensors, t)
	}
	for _, gp := range ap.GetGraphs() {
		s, err := d.graph(gp, g)
		if err != nil {
			return nil, err
		}
		a.Graphs = append(a.Graphs, s)
	}
	return a, nil
}

// attrTypeOf returns the attribute's type, inferred from the field that is
// set when the type field is absent (IR version 1 files).
func attrTypeOf(ap *onnxpb.AttributeProto) graph.AttrType {
	if ap.Type != nil {
		return graph.AttrType(ap.GetType())
	}
	switch {
	case ap.F != nil:
		return graph.AttrFloat
	case ap.I != nil:
		return graph.AttrInt
	case ap.S != nil:
		return graph.AttrString
	case ap.T != nil:
		return graph.AttrTensor
	case ap.G != nil:
		return graph.AttrGraph
	case ap.SparseTensor != nil:
		return graph.AttrSparseTensor
	case ap.Tp != nil:
		return graph.AttrTypeProto
	case len(ap.Floats) > 0:
		return graph.AttrFloats
	case len(ap.Ints) > 0:
		return graph.AttrInts
	case len(ap.Strings) > 0:
		return graph.AttrStrings
	case len(ap.Tensors) > 0:
		return graph.AttrTensors
	case len(ap.Graphs) > 0:
		return graph.AttrGraphs
	case len(ap.SparseTensors) > 0:
		return graph.AttrSparseTensors
	case len(ap.TypeProtos) > 0:
		return graph.AttrTypeProtos
	}
	return graph.AttrUndefined
}

// decodeType converts a tensor TypeProto; other kinds (sequence, map,
// optional, sparse) give nil and stay in the ValueInfoProto.
func decodeType(tp *onnxpb.TypeProto) *graph.Type {
	tt := tp.GetTensorType()
	if tt == nil {
		return nil
	}
	t := &graph.Type{DType: graph.DType(tt.GetElemType())}
	if sh := tt.GetShape(); sh != nil {
		t.Shape = make([]graph.Dim, len(sh.GetDim()))
		for i, dim := range sh.GetDim() {
			switch v := dim.GetValue().(type) {
			case *onnxpb.TensorShapeProto_Dimension_DimValue:
				t.Shape[i] = graph.Dim{Size: v.DimValue}
			case *onnxpb.TensorShapeProto_Dimension_DimParam:
				t.Shape[i] = graph.Dim{Size: -1, Param: v.DimParam}
			default:
				t.Shape[i] = graph.Dim{Size: -1}
			}
		}
	}
	return t
}
