package inspect

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/cmd/unlearn/flagtext"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxio"
)

func TestFileBundledResNet(t *testing.T) {
	path := testutil.Testdata(t, "resnet_small_train.onnx")
	rep, err := File(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Schema != Schema || rep.Model.Path != path || len(rep.Model.SHA256) != 64 {
		t.Errorf("schema %q path %q sha %q", rep.Schema, rep.Model.Path, rep.Model.SHA256)
	}
	// Ten convolution/linear layers (conv1, two per block, two
	// downsamples, fc), each with its BatchNormalization when it has one.
	if len(rep.Layers) != 10 || rep.Parameters.Layers != 10 || rep.Classifier != "fc.weight" {
		t.Fatalf("%d layers, classifier %q; want 10 and fc.weight", len(rep.Layers), rep.Classifier)
	}
	if rep.Parameters.Elements != 77754 || !rep.Model.BNPreserved || rep.Model.BatchNorm == 0 {
		t.Errorf("parameters %+v, batchnorm %d", rep.Parameters, rep.Model.BatchNorm)
	}
	if rep.Ops["Conv"] == 0 || rep.Model.Opsets["ai.onnx"] == 0 || len(rep.Unsupported) != 0 {
		t.Errorf("ops %v opsets %v unsupported %v", rep.Ops, rep.Model.Opsets, rep.Unsupported)
	}
	last := rep.Layers[len(rep.Layers)-1]
	if last.Name != "fc.weight" || last.Op != "Gemm" || len(last.Members) != 2 || last.Members[1].Role != graph.KindBias {
		t.Errorf("last layer %+v", last)
	}
	if len(rep.Inputs) != 1 || rep.Inputs[0].DType != "float32" || len(rep.Inputs[0].Shape) != 4 {
		t.Errorf("inputs %+v", rep.Inputs)
	}
	// The JSON form keeps the schema's field names.
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"schema":"unlearn.inspect/v1"`, `"batchnorm_preserved":true`, `"max_depth":`, `"default_min_depth":3`, `"unsupported":[]`} {
		if !bytes.Contains(b, []byte(k)) {
			t.Errorf("JSON lacks %s", k)
		}
	}
}

func TestFileClassifierOption(t *testing.T) {
	path := testutil.Testdata(t, "resnet_small_train.onnx")
	rep, err := File(path, Options{Classifier: "layer3.conv2.weight"})
	if err != nil || rep.Classifier != "layer3.conv2.weight" {
		t.Fatalf("classifier %v, %v", rep, err)
	}
	_, err = File(path, Options{Classifier: "nosuch"})
	var ce *ClassifierError
	if !errors.As(err, &ce) || ce.Name != "nosuch" || !strings.Contains(err.Error(), "fc.weight") {
		t.Fatalf("error %v; want a *ClassifierError listing the layers", err)
	}
}

func TestSummarizeRefusesModelWithoutParameters(t *testing.T) {
	g := graph.NewGraph("g")
	x, _ := g.AddInput("x", &graph.Type{DType: graph.Float, Shape: []graph.Dim{{Size: 1}, {Size: 4}}})
	n, _ := g.AddNode("Relu", "", "r", []*graph.Value{x}, []string{"y"})
	g.Outputs = []*graph.Value{n.Output(0)}
	_, err := Summarize(&graph.Model{Graph: g, IRVersion: 8, Opsets: []graph.OpsetImport{{Version: 17}}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "no trainable parameters") {
		t.Fatalf("error %v", err)
	}
}

func TestWriteTextLimitsRows(t *testing.T) {
	rep := &Report{Schema: Schema, Model: ModelInfo{SHA256: strings.Repeat("ab", 32), Opsets: map[string]int64{"ai.onnx": 17}}, Ops: map[string]int{"Gemm": 70}}
	for i := 0; i < 70; i++ {
		rep.Layers = append(rep.Layers, Layer{Name: "l" + strings.Repeat("x", i%3), Op: "Gemm"})
	}
	var short, all bytes.Buffer
	if err := WriteText(&short, rep, false, flagtext.Terms); err != nil {
		t.Fatal(err)
	}
	if err := WriteText(&all, rep, true, flagtext.Terms); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(short.String(), "... 10 more layers") || strings.Contains(all.String(), "more layers") {
		t.Errorf("row limit not applied:\n%s", short.String())
	}
	if got := strings.Count(all.String(), "Gemm\t"); got != 0 {
		t.Errorf("tabs left in the table: %d", got)
	}
	if !strings.Contains(short.String(), "sha256 abababababababab)") || !strings.Contains(short.String(), "classifier not found") {
		t.Errorf("header:\n%s", short.String())
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteTextReportsWriteError(t *testing.T) {
	if err := WriteText(failWriter{}, &Report{Model: ModelInfo{Opsets: map[string]int64{}}}, false, nil); err == nil || err.Error() != "disk full" {
		t.Fatalf("error %v; want the writer's", err)
	}
}

// TestReportsWhatTheBuildRefuses: inspect runs the check a run makes
// before any work (autodiff.CheckSupported, the training build), not only
// the gradient-rule lookup: testdata/shapes/lost_rank.onnx with its
// logits' declared shape removed has a rule for every op, yet the build
// cannot tell the logits' rank, and inspect says so, naming the node
// (swin_t was reported fully supported, then every run failed). With the
// declaration, and for swin_t's padded windows (window_pad.onnx), it
// reports nothing.
func TestReportsWhatTheBuildRefuses(t *testing.T) {
	for _, name := range []string{"window_pad.onnx", "lost_rank.onnx"} {
		rep, err := File(testutil.Testdata(t, "shapes", name), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Untrainable != "" || len(rep.Unsupported) != 0 {
			t.Errorf("%s: untrainable %q, unsupported %v; want neither", name, rep.Untrainable, rep.Unsupported)
		}
	}
	m, err := onnxio.Load(testutil.Testdata(t, "shapes", "lost_rank.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	m.Graph.Outputs[0].Type.Shape = nil
	rep, err := Summarize(m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Unsupported) != 0 || !strings.Contains(rep.Untrainable, "rank 2 [N, C]") || !strings.Contains(rep.Untrainable, `Unique node "unique"`) {
		t.Fatalf("unsupported %v, untrainable %q; want the build's refusal naming the Unique", rep.Unsupported, rep.Untrainable)
	}
	var text bytes.Buffer
	if err := WriteText(&text, rep, false, flagtext.Terms); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "the training graph cannot be built, so the model cannot be unlearned") || !strings.Contains(text.String(), rep.Untrainable) {
		t.Errorf("text:\n%s", text.String())
	}
}

// TestLinksNoRuntime: a summary never runs a model, so the package links
// neither ONNX Runtime's binding nor the tool's runtime and training
// packages (the default's first layer comes from localize/floor).
func TestLinksNoRuntime(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		switch p {
		case "github.com/yalue/onnxruntime_go", "github.com/unlearn-tool/unlearn/onnxrt",
			"github.com/unlearn-tool/unlearn/train", "github.com/unlearn-tool/unlearn/localize":
			t.Errorf("inspect depends on %s", p)
		}
	}
}

// TestWriteTextWrapsParagraphs: what an export's BatchNormalization means
// and the normalization advice are paragraphs of lines of at most
// lineWidth bytes, indented under their label, with no word lost (the demo's
// first screen was a 600-character line).
func TestWriteTextWrapsParagraphs(t *testing.T) {
	rep, err := File(testutil.Testdata(t, "exports", "d_training_dynamic.onnx"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.TrainingExport) < 2*lineWidth {
		t.Fatalf("training export note of %d bytes: the test needs a long one", len(rep.TrainingExport))
	}
	var text bytes.Buffer
	if err := WriteText(&text, rep, false, flagtext.Terms); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	i, j := strings.Index(out, "\nbatchnorm "), strings.Index(out, "\nparams ")
	if i < 0 || j < i {
		t.Fatalf("no batchnorm or params line:\n%s", out)
	}
	for _, l := range strings.Split(out[i+1:j], "\n") {
		if len(l) > lineWidth {
			t.Errorf("line of %d bytes: %q", len(l), l)
		}
		if !strings.HasPrefix(l, "batchnorm ") && !strings.HasPrefix(l, "normalize ") && !strings.HasPrefix(l, "          ") {
			t.Errorf("a following line not indented under its label: %q", l)
		}
	}
	if !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(rep.TrainingExport), " ")) {
		t.Errorf("the training export note lost words:\n%s", out)
	}
}
