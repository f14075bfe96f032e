package autodiff

import (
	"slices"
	"strings"

	"github.com/unlearn-tool/unlearn/graph"
)

// ArtifactsSchema is the version tag of artifacts.json, the description
// written beside a training graph for other runtimes (ArtifactsDoc).
const ArtifactsSchema = "unlearn.artifacts/v1"

// ArtifactsDoc is artifacts.json (schema unlearn.artifacts/v1): what the
// training graph (training.onnx) and the inference graph (inference.onnx)
// take and give, and how to drive them.
type ArtifactsDoc struct {
	Schema    string         `json:"schema"`
	Model     ArtifactsModel `json:"model"`
	Training  ArtifactGraph  `json:"training"`
	Inference ArtifactGraph  `json:"inference"`
	Params    []string       `json:"params"`
	BN        []ArtifactBN   `json:"batchnorm,omitempty"`
	Usage     []string       `json:"usage"`
}

// ArtifactsModel names the source model and the Spec the graph was built
// with. (The fields are in alphabetical order: the document was first
// written from a map, and the order of its keys is kept.)
type ArtifactsModel struct {
	BN      string `json:"bn"` // BNMode.String()
	Dropout bool   `json:"dropout"`
	Loss    string `json:"loss"` // Loss.Kind
	Path    string `json:"path"`
	SHA256  string `json:"sha256"`
}

// ArtifactGraph is one ONNX file of the set with its inputs and outputs.
type ArtifactGraph struct {
	File    string       `json:"file"`
	Inputs  []ArtifactIO `json:"inputs"`
	Outputs []ArtifactIO `json:"outputs"`
}

// ArtifactIO is one input or output (IO, with the element type in lower
// case as ONNX names it).
type ArtifactIO struct {
	Name  string  `json:"name"`
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape"` // -1: dynamic (the batch)
	Role  string  `json:"role"`
	Of    string  `json:"of,omitempty"`
}

// ArtifactBN is one BatchNormalization's running-statistics update
// (BNStat; alphabetical field order, as ArtifactsModel).
type ArtifactBN struct {
	MeanOutput  string  `json:"mean_output"`
	Momentum    float32 `json:"momentum"`
	Node        string  `json:"node"`
	PerExample  int64   `json:"per_example"`
	RunningMean string  `json:"running_mean"`
	RunningVar  string  `json:"running_var"`
	Scale       string  `json:"scale"`
	VarOutput   string  `json:"var_output"`
}

// artifactsUsage tells a reader of artifacts.json how to drive the graph.
var artifactsUsage = []string{
	"feed images [N,C,H,W] float32, labels [N] int64, weights [N] float32 (1 for the mean cross-entropy; " +
		"negative for ascent), and every param/state input with the current values of the initializer of the " +
		"same name",
	"the loss is sum_i weights_i * loss_i / N; grad/<param> is its gradient",
	"with bn=training, update running statistics after each step: rm = (1-momentum)*rm + momentum*bn_mean, " +
		"rv = (1-momentum)*rv + momentum*bn_var*M/(M-1), M = N * per_example",
}

// NewArtifactsDoc describes art, built by Build(·, spec) from the model at
// modelPath (whose SHA-256 is sha256), with inference, the same model in
// inference form (graph.InferenceForm), written beside it as
// inference.onnx. The training graph is training.onnx.
func NewArtifactsDoc(art *Artifacts, spec Spec, inference *graph.Graph, modelPath, sha256 string) *ArtifactsDoc {
	model := ArtifactsModel{Path: modelPath, SHA256: sha256, BN: spec.BN.String(), Loss: spec.Loss.Kind,
		Dropout: spec.Dropout}
	doc := &ArtifactsDoc{
		Schema:    ArtifactsSchema,
		Model:     model,
		Training:  ArtifactGraph{File: "training.onnx", Inputs: artifactIOs(art.Inputs), Outputs: artifactIOs(art.Outputs)},
		Inference: ArtifactGraph{File: "inference.onnx"},
		Params:    art.Params,
		Usage:     slices.Clone(artifactsUsage),
	}
	for _, v := range inference.Inputs {
		if !v.IsInitializer() {
			doc.Inference.Inputs = append(doc.Inference.Inputs, valueIO(v, "images"))
		}
	}
	for _, v := range inference.Outputs {
		doc.Inference.Outputs = append(doc.Inference.Outputs, valueIO(v, "logits"))
	}
	for _, st := range art.BN {
		doc.BN = append(doc.BN, ArtifactBN{
			Node: st.Node, Scale: st.Scale, RunningMean: st.RunningMean, RunningVar: st.RunningVar,
			MeanOutput: st.MeanOut, VarOutput: st.VarOut, PerExample: st.PerExample, Momentum: st.Momentum,
		})
	}
	return doc
}

func artifactIOs(ios []IO) []ArtifactIO {
	out := make([]ArtifactIO, len(ios))
	for i, io := range ios {
		dt := strings.ToLower(io.DType.String())
		out[i] = ArtifactIO{Name: io.Name, DType: dt, Shape: io.Shape, Role: io.Role, Of: io.Of}
	}
	return out
}

// valueIO describes a graph input or output of the inference graph; an
// unknown dimension is -1, an unknown type "unknown" without a shape.
func valueIO(v *graph.Value, role string) ArtifactIO {
	io := ArtifactIO{Name: v.Name, Role: role, DType: "unknown"}
	if v.Type != nil {
		io.DType = strings.ToLower(v.Type.DType.String())
		for _, d := range v.Type.Shape {
			if d.Known() {
				io.Shape = append(io.Shape, d.Size)
			} else {
				io.Shape = append(io.Shape, -1)
			}
		}
	}
	return io
}
