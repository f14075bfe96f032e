package inspect

import (
	"errors"
	"fmt"
	"strings"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/ops"
	"github.com/unlearn-tool/unlearn/internal/fsread"
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/localize/floor"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/train/autodiff"
)

// Schema is the version tag of Report's JSON form.
const Schema = "unlearn.inspect/v1"

// Report is the summary of one model (schema unlearn.inspect/v1,
// documented in docs/FORMATS.md).
type Report struct {
	Schema      string         `json:"schema"`
	Model       ModelInfo      `json:"model"`
	Inputs      []IO           `json:"inputs"`
	Outputs     []IO           `json:"outputs"`
	Ops         map[string]int `json:"ops"` // op_type → number of nodes
	Parameters  Params         `json:"parameters"`
	Layers      []Layer        `json:"layers"`
	Classifier  string         `json:"classifier"` // "" when no layer produces the logits
	Unsupported []NodeRef      `json:"unsupported"`
	// Untrainable, when every node has a gradient rule but the training
	// graph still cannot be built (autodiff.CheckSupported, the check a run
	// makes before any work: e.g. logits whose rank the shape inference
	// cannot establish), is that error; the model cannot be unlearned.
	Untrainable string `json:"untrainable,omitempty"`
	// Untied is the number of parameters the exporter shared behind
	// Identity nodes, each of which the tool trains as its own.
	Untied int `json:"untied"`
	// FixedBatch is the batch size the input declares when it is fixed
	// (an export without dynamic_axes), else 0; BatchNote says what the
	// tool does about it and how to re-export.
	FixedBatch int64  `json:"fixed_batch,omitempty"`
	BatchNote  string `json:"batch_note,omitempty"`
	// FoldedBatchNorm, when the export folded BatchNormalization into the
	// convolutions (graph.DetectFoldedBN), says what that costs and how to
	// re-export.
	FoldedBatchNorm string `json:"folded_batchnorm,omitempty"`
	// TrainingExport, when BatchNormalization nodes are in training form
	// (graph.TrainingModeBN), says what that means and how to re-export.
	TrainingExport string `json:"training_export,omitempty"`
	// Normalization is the input normalization the model's metadata
	// records (data.MetaMean, data.MetaStd), or what to do without it.
	Normalization string `json:"normalization"`
}

// ModelInfo describes the file and its format.
type ModelInfo struct {
	Path        string           `json:"path"`
	SHA256      string           `json:"sha256"`
	IRVersion   int64            `json:"ir_version"`
	Opsets      map[string]int64 `json:"opsets"` // domain ("ai.onnx" for the default) → version
	Producer    string           `json:"producer,omitempty"`
	Nodes       int              `json:"nodes"`
	BatchNorm   int              `json:"batchnorm"`
	BNPreserved bool             `json:"batchnorm_preserved"`
}

// IO is one graph input or output.
type IO struct {
	Name  string `json:"name"`
	DType string `json:"dtype"`
	Shape []any  `json:"shape"` // ints, or strings for symbolic dims, or null for unknown
}

// Params counts the trainable parameters and the neurons they form.
type Params struct {
	Tensors  int   `json:"tensors"`
	Elements int64 `json:"elements"`
	Neurons  int   `json:"neurons"`
	Layers   int   `json:"layers"`
	MaxDepth int   `json:"max_depth"`
	// DefaultMinDepth is the smallest layer depth the default localization
	// may reset (DEL with the recommended depth floor: floor.MinDepth of
	// floor.Recommended and MaxDepth).
	DefaultMinDepth int `json:"default_min_depth"`
}

// Layer is one group of parameters sharing output channels (graph.Layer).
type Layer struct {
	Name       string   `json:"name"`
	Op         string   `json:"op"`
	Node       string   `json:"node"`
	Depth      int      `json:"depth"`
	Channels   int      `json:"channels"`
	Params     int64    `json:"params"`
	Standalone bool     `json:"standalone,omitempty"`
	Members    []Member `json:"members"`
}

// Member is one parameter tensor of a layer (graph.Member).
type Member struct {
	Name  string  `json:"name"` // the initializer name: the state_dict key when the export kept it
	Role  string  `json:"role"`
	Shape []int64 `json:"shape"`
	Axis  int     `json:"axis"`
	Node  string  `json:"node"`
}

// NodeRef names a node, here one without a gradient rule.
type NodeRef struct {
	Op     string `json:"op"`
	Domain string `json:"domain,omitempty"`
	Node   string `json:"node"`
}

// Options adjust the summary.
type Options struct {
	// Classifier names the classifier layer (a weight initializer or a
	// node name) when the default, the layer producing the logits, is
	// wrong. A name that matches no layer is a *ClassifierError.
	Classifier string
	// Terms words the settings the report's advice names (the command's:
	// flags); nil names them plainly (setting.Plain).
	Terms setting.Terms
}

// ClassifierError is Options.Classifier naming no layer of the model.
type ClassifierError struct {
	Name string
	Err  error
}

func (e *ClassifierError) Error() string { return fmt.Sprintf("classifier %q: %v", e.Name, e.Err) }
func (e *ClassifierError) Unwrap() error { return e.Err }

// File reads the model at path and summarizes it. A model without
// trainable parameters and without unsupported nodes is an error: there is
// nothing to unlearn.
func File(path string, opts Options) (*Report, error) {
	m, err := onnxio.Load(path)
	if err != nil {
		return nil, err
	}
	sum, err := fsread.HashPath(path)
	if err != nil {
		return nil, err
	}
	rep, err := Summarize(m, opts)
	if err != nil {
		var ce *ClassifierError
		if errors.As(err, &ce) {
			return nil, err // about the option, not the file
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rep.Model.Path, rep.Model.SHA256 = path, sum
	return rep, nil
}

// Summarize summarizes a decoded model; Model.Path and Model.SHA256 stay
// empty (File fills them). It unties m's Identity-shared initializers
// (graph.UntieIdentityInitializers) and makes a fixed batch symbolic
// (graph.MakeBatchSymbolic), as the tool does before training, to count
// them and to build the training graph as a run would: pass a copy
// (onnxio.Clone) to keep m as it was.
func Summarize(m *graph.Model, opts Options) (*Report, error) {
	g := m.Graph
	rep := &Report{
		Schema: Schema,
		Model: ModelInfo{
			IRVersion: m.IRVersion,
			Opsets:    map[string]int64{}, Producer: strings.TrimSpace(m.ProducerName + " " + m.ProducerVersion),
		},
		Ops:         map[string]int{},
		Unsupported: []NodeRef{},
	}
	for _, o := range m.Opsets {
		d := o.Domain
		if d == "" {
			d = "ai.onnx"
		}
		rep.Model.Opsets[d] = o.Version
	}
	for _, n := range g.Nodes() {
		rep.Ops[n.OpType]++
		rep.Model.Nodes++
		if n.OpType == ops.BatchNormalization {
			rep.Model.BatchNorm++
		}
	}
	rep.Model.BNPreserved = rep.Model.BatchNorm > 0
	if f := graph.DetectFoldedBN(g); f != nil {
		rep.FoldedBatchNorm = f.Note()
	}
	if n := graph.TrainingModeBN(g); n > 0 {
		rep.TrainingExport = graph.TrainingExportNote(n)
	}
	terms := opts.Terms
	if terms == nil {
		terms = setting.Plain
	}
	ms, ds := setting.Of("mean"), setting.Of("std")
	var note setting.Message
	if mean, std := m.Metadata[data.MetaMean], m.Metadata[data.MetaStd]; mean != "" || std != "" {
		if _, _, err := data.MetadataNormalization(m.Metadata); err != nil {
			note = setting.Msgf("unusable: %v; give %s/%s (they override the metadata)", err, ms, ds)
		} else {
			note = setting.Msgf("mean %s, std %s (metadata %s, %s): applied to %s when %s/%s are not given",
				mean, std, data.MetaMean, data.MetaStd, setting.Of("data"), ms, ds)
		}
	} else {
		note = setting.Msgf("none recorded: the tool feeds pixel/255; give %s/%s when the model's training normalized "+
			"its inputs (a model that scores near chance on the training split is refused)", ms, ds)
	}
	rep.Normalization = note.Render(terms)
	for _, v := range g.Inputs {
		if !v.IsInitializer() {
			rep.Inputs = append(rep.Inputs, ioOf(v))
		}
	}
	for _, v := range g.Outputs {
		rep.Outputs = append(rep.Outputs, ioOf(v))
	}
	// A fixed batch: made symbolic for the tool's runs, or refused when the
	// graph hard-codes it (graph.FixedBatch).
	fixed, err := graph.FixedBatch(g)
	rep.FixedBatch = fixed
	switch {
	case err != nil:
		rep.BatchNote = "the tool refuses this model: " + err.Error()
	case fixed > 0:
		out := "output"
		if len(g.Outputs) > 0 {
			out = g.Outputs[0].Name
		}
		in := rep.Inputs[0].Name
		rep.BatchNote = fmt.Sprintf("exported without dynamic_axes; the tool makes the batch symbolic in the graphs it runs "+
			"(the written model keeps the declared shape). "+
			"To fix the file, re-export with dynamic_axes={%q: {0: \"batch\"}, %q: {0: \"batch\"}}", in, out)
	}
	// The tool trains on an untied copy; report what untying would do.
	untied, err := graph.UntieIdentityInitializers(g)
	if err != nil {
		return nil, err
	}
	rep.Untied = untied
	nm, err := graph.Neurons(g)
	if err != nil {
		return nil, err
	}
	bad, err := autodiff.UnsupportedNodes(m)
	if err != nil {
		return nil, err
	}
	for _, n := range bad {
		rep.Unsupported = append(rep.Unsupported, NodeRef{Op: n.OpType, Domain: n.Domain, Node: n.Name})
	}
	// The rest of the check a run makes before any work: the training graph
	// of the untied copy with the batch symbolic (unlearn.Prepare). A graph
	// that hard-codes the batch is already reported in BatchNote.
	if len(bad) == 0 && len(nm.Params) > 0 {
		if _, err := graph.MakeBatchSymbolic(g); err == nil {
			if err := autodiff.CheckSupported(m); err != nil {
				rep.Untrainable = err.Error()
			}
		}
	}
	if len(nm.Params) == 0 && len(bad) == 0 {
		return nil, errors.New("the model has no trainable parameters " +
			"(no float initializer feeds a differentiable input); there is nothing to unlearn")
	}
	rep.Parameters = Params{Tensors: len(nm.Params), Elements: nm.NumParams, Neurons: len(nm.Neurons),
		Layers: len(nm.Layers), MaxDepth: nm.MaxDepth,
		DefaultMinDepth: floor.MinDepth(floor.Recommended, nm.MaxDepth)}
	for _, l := range nm.Layers {
		il := Layer{Name: l.Name, Depth: l.Depth, Channels: l.Channels, Params: l.NumParams(), Standalone: l.Standalone}
		if l.Op != nil {
			il.Op, il.Node = l.Op.OpType, l.Op.Name
		}
		for _, mb := range l.Members {
			im := Member{Name: mb.Param.Name, Role: mb.Role, Axis: mb.Axis}
			if mb.Param.Init != nil {
				im.Shape = append([]int64{}, mb.Param.Init.Shape...)
			}
			if mb.Node != nil {
				im.Node = mb.Node.Name
			}
			il.Members = append(il.Members, im)
		}
		rep.Layers = append(rep.Layers, il)
	}
	// Without a name, a model whose logits no layer produces has no
	// classifier ("" in the report); a name that fits nothing is an error.
	if cl, err := nm.Classifier(opts.Classifier); err != nil {
		if opts.Classifier != "" {
			return nil, &ClassifierError{Name: opts.Classifier, Err: err}
		}
	} else {
		rep.Classifier = cl.Name
	}
	return rep, nil
}

// ioOf describes a graph input or output: its element type in lower case
// and its shape with symbolic and unknown dimensions kept apart.
func ioOf(v *graph.Value) IO {
	io := IO{Name: v.Name}
	if v.Type == nil {
		io.DType = "unknown"
		return io
	}
	io.DType = strings.ToLower(v.Type.DType.String())
	if v.Type.Shape != nil {
		io.Shape = []any{}
		for _, d := range v.Type.Shape {
			switch {
			case d.Known():
				io.Shape = append(io.Shape, d.Size)
			case d.Param != "":
				io.Shape = append(io.Shape, d.Param)
			default:
				io.Shape = append(io.Shape, nil)
			}
		}
	}
	return io
}
