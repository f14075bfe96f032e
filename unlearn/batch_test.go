package unlearn_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// TestPrepareFixedBatch: Prepare makes the working copy's batch symbolic
// (with a note) and leaves the original alone; when untying forces the
// working copy to be written, Finalize gives it back the declared shapes.
func TestPrepareFixedBatch(t *testing.T) {
	path := filepath.Join(testutil.RepoRoot(t), "testdata", "exports", "a_default_fixed_batch.onnx")
	m, err := onnxio.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	// Tie fc.bias behind an Identity node, as PyTorch's exporter does with
	// equal tensors, so that Finalize writes the untied working copy.
	g := m.Graph
	gemm := g.Nodes()[len(g.Nodes())-1]
	if gemm.OpType != "Gemm" || gemm.Input(2).Name != "fc.bias" {
		t.Fatalf("last node is %v with bias %q; the fixture changed", gemm, gemm.Input(2).Name)
	}
	id, err := g.AddNode("Identity", "", "tie_fc_bias", []*graph.Value{gemm.Input(2)}, []string{"fc.bias.tied"})
	if err != nil {
		t.Fatal(err)
	}
	gemm.SetInput(2, id.Output(0))
	if err := g.SortTopologically(); err != nil {
		t.Fatal(err)
	}

	p, err := unlearn.Prepare(m, path)
	if err != nil {
		t.Fatal(err)
	}
	if p.Untied != 1 {
		t.Fatalf("untied %d parameters, want 1", p.Untied)
	}
	// The fixed batch's note, then the folded BatchNormalization's (this
	// export folds it too).
	if len(p.Notes) != 2 || !strings.Contains(p.Notes[0], "made symbolic") || !strings.Contains(p.Notes[0], `"input.1"`) ||
		!strings.Contains(p.Notes[1], "folded BatchNormalization") {
		t.Errorf("notes %q", p.Notes)
	}
	first := func(v *graph.Value) graph.Dim { return v.Type.Shape[0] }
	if d := first(p.Work.Graph.Inputs[0]); d.Param != graph.BatchParam {
		t.Errorf("working copy's input batch %v, want %q", d, graph.BatchParam)
	}
	if d := first(p.Work.Graph.Outputs[0]); d.Param != graph.BatchParam {
		t.Errorf("working copy's logits batch %v, want %q", d, graph.BatchParam)
	}
	if d := first(m.Graph.Inputs[0]); !d.Known() || d.Size != 1 {
		t.Errorf("original's input batch %v, want 1", d)
	}
	final, note, err := unlearn.Finalize(p.Orig, p.Work, p.Untied)
	if err != nil {
		t.Fatal(err)
	}
	if final != p.Work || note == "" {
		t.Fatalf("Finalize did not return the untied working copy (note %q)", note)
	}
	for _, v := range []*graph.Value{final.Graph.Inputs[0], final.Graph.Outputs[0]} {
		if d := first(v); !d.Known() || d.Size != 1 {
			t.Errorf("written %q has batch %v, want the declared 1", v.Name, d)
		}
	}
}
