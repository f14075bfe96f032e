package autodiff

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
)

func TestNewArtifactsDoc(t *testing.T) {
	f := newFG(t, graph.Float, 1)
	x, err := f.g.AddInput("x", &graph.Type{DType: graph.Float, Shape: []graph.Dim{{Param: "N"}, {Size: 4}}})
	if err != nil {
		t.Fatal(err)
	}
	out := f.op("Add", []*graph.Value{f.op("MatMul", []*graph.Value{x, f.param("w", 4, 3)}), f.param("b", 3)})
	m := f.model(out)
	out.Type.Shape = []graph.Dim{{Param: "N"}, {Size: 3}}
	spec := Spec{Loss: Loss{Kind: LossKL, Temperature: 2}}
	art, err := Build(m, spec)
	if err != nil {
		t.Fatal(err)
	}
	doc := NewArtifactsDoc(art, spec, m.Graph, "m.onnx", "abc")
	roles := map[string]int{}
	for _, io := range append(append([]ArtifactIO{}, doc.Training.Inputs...), doc.Training.Outputs...) {
		roles[io.Role]++
	}
	if roles["images"] != 1 || roles["teacher_logits"] != 1 || roles["param"] != 2 || roles["grad"] != 2 || roles["loss"] != 1 {
		t.Errorf("roles %v", roles)
	}
	if len(doc.Inference.Inputs) != 1 || doc.Inference.Inputs[0].Name != "x" || doc.Inference.Inputs[0].DType != "float32" ||
		len(doc.Inference.Inputs[0].Shape) != 2 || doc.Inference.Inputs[0].Shape[0] != -1 || doc.Inference.Inputs[0].Shape[1] != 4 {
		t.Errorf("inference inputs %+v", doc.Inference.Inputs)
	}
	if len(doc.Inference.Outputs) != 1 || doc.Inference.Outputs[0].Role != "logits" || doc.BN != nil {
		t.Errorf("inference outputs %+v, batchnorm %v", doc.Inference.Outputs, doc.BN)
	}
	// The model section's keys stay in the order artifacts.json has always
	// had (alphabetical), and no batchnorm key appears without one.
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := `"model":{"bn":"inference","dropout":false,"loss":"kl","path":"m.onnx","sha256":"abc"}`
	if !bytes.Contains(b, []byte(want)) || bytes.Contains(b, []byte(`"batchnorm"`)) {
		t.Errorf("JSON %s\nwant it to contain %s and no batchnorm", b, want)
	}
	// The usage lines are the document's own: changing them changes no
	// other document.
	doc.Usage[0] = "changed"
	if NewArtifactsDoc(art, spec, m.Graph, "m.onnx", "abc").Usage[0] == "changed" {
		t.Error("documents share their usage lines")
	}
}
