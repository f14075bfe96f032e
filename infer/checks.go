package infer

import (
	"fmt"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/graph"
)

// CheckModelData checks that m, read from path, is a classifier that ds
// can feed: one image input of the data's shape, one logits output, a
// batch the graph does not hard-code (graph.FixedBatch), and as many
// classes as the labels need (naming the first label out of range).
func CheckModelData(m *graph.Model, path string, ds *data.Dataset) error {
	in, shape, err := ModelInput(m)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := data.CheckInput(ds, in.Name, shape); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if _, err := ModelOutput(m); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	// A fixed batch is made symbolic where the model is run
	// (graph.MakeBatchSymbolic); one the graph hard-codes is refused here,
	// before any work.
	if _, err := graph.FixedBatch(m.Graph); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if k := StaticClasses(m); k > 0 && ds.Classes > 0 && k != ds.Classes {
		if err := ds.CheckLabels(k); err != nil {
			return fmt.Errorf("%s outputs %d classes: %w", path, k, err)
		}
		return fmt.Errorf("%s outputs %d classes, dataset %s has %d", path, k, ds.Name, ds.Classes)
	}
	return nil
}

// StaticClasses is the class count the model's output shape declares, or
// -1 when it does not say.
func StaticClasses(m *graph.Model) int {
	if len(m.Graph.Outputs) == 0 {
		return -1
	}
	t := m.Graph.Outputs[0].Type
	if t == nil || len(t.Shape) != 2 || !t.Shape[1].Known() {
		return -1
	}
	return int(t.Shape[1].Size)
}

// CheckSameClasses refuses an oracle whose declared class count differs
// from the model's (before any forward pass).
func CheckSameClasses(model, oracle *graph.Model, modelPath, oraclePath string) error {
	if a, b := StaticClasses(model), StaticClasses(oracle); a > 0 && b > 0 && a != b {
		return fmt.Errorf("oracle %s outputs %d classes, model %s outputs %d", oraclePath, b, modelPath, a)
	}
	return nil
}

// InputNotes say what about a model's form matters for a run, before any
// work: a fixed batch the tool makes symbolic (graph.DescribeFixedBatch),
// and, for runs that train (training), BatchNormalization an exporter
// folded into the convolutions (graph.DetectFoldedBN).
func InputNotes(m *graph.Model, training bool) []string {
	var notes []string
	if n := graph.DescribeFixedBatch(m.Graph); n != "" {
		notes = append(notes, n)
	}
	if f := graph.DetectFoldedBN(m.Graph); f != nil && training {
		notes = append(notes, f.Note())
	}
	return notes
}
