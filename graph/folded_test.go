package graph_test

import (
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
)

// DetectFoldedBN: a Conv whose weight and bias are PyTorch's folded
// constants ("onnx::Conv_<n>") in a graph without BatchNormalization is a
// folded export; state_dict names, a missing bias, or any
// BatchNormalization node in the graph are not. (The real exports are
// checked in cmd/unlearn's TestInspectFoldedBatchNorm.)
func TestDetectFoldedBN(t *testing.T) {
	cnn := func(w, bias string, bn bool) *graph.Graph {
		b := newBuilder(t)
		x := b.input("input", -1, 1, 4, 4)
		in := vals(x, b.w(w, 2, 1, 3, 3))
		if bias != "" {
			in = append(in, b.w(bias, 2))
		}
		c := b.op("Conv", in, attrInts("pads", 1, 1, 1, 1))
		if bn {
			c = b.op("BatchNormalization", vals(c, b.w("bn.weight", 2), b.w("bn.bias", 2), b.w("bn.running_mean", 2), b.w("bn.running_var", 2)))
		}
		b.output(b.op("Gemm", vals(b.op("Flatten", vals(c), attrI("axis", 1)), b.w("fc.weight", 3, 32)), attrI("transB", 1)))
		return b.g
	}
	f := graph.DetectFoldedBN(cnn("onnx::Conv_26", "onnx::Conv_27", false))
	if f == nil || f.Convs != 1 || f.Example != "onnx::Conv_26" {
		t.Fatalf("folded export: %+v", f)
	}
	for _, want := range []string{"1 convolution(s)", "onnx::Conv_26", graph.ReexportAdvice} {
		if !strings.Contains(f.Note(), want) {
			t.Errorf("note %q lacks %q", f.Note(), want)
		}
	}
	for name, g := range map[string]*graph.Graph{
		"state_dict names":       cnn("conv.weight", "conv.bias", false),
		"no bias":                cnn("onnx::Conv_26", "", false),
		"BatchNormalization too": cnn("onnx::Conv_26", "onnx::Conv_27", true),
	} {
		if f := graph.DetectFoldedBN(g); f != nil {
			t.Errorf("%s: reported as folded: %+v", name, f)
		}
	}
}
