package graph

import (
	"fmt"
	"strings"
)

// FoldedBN describes a graph whose BatchNormalization layers an exporter
// folded into the convolutions before them.
type FoldedBN struct {
	// Convs counts the convolutions whose weight and bias are folded
	// constants.
	Convs int
	// Example is the first such convolution's weight, e.g. "onnx::Conv_26".
	Example string
}

// DetectFoldedBN recognises PyTorch's default export of a model with
// BatchNormalization: torch.onnx.export in eval mode with constant folding
// (its default) replaces every Conv → BatchNormalization pair by one Conv
// whose weight W·γ/√(σ²+ε) and bias β − μγ/√(σ²+ε) it computes and stores
// under made-up names ("onnx::Conv_<n>"), while parameters it leaves alone
// keep their state_dict names ("fc.weight"). So a graph with no
// BatchNormalization node and a Conv whose weight and bias are both
// initializers named "onnx::Conv_…" was folded; nil otherwise. A model
// that never had normalization keeps "conv.weight"-style names and is not
// reported. Other exporters are not recognised (no false alarm, no note).
func DetectFoldedBN(g *Graph) *FoldedBN {
	var f FoldedBN
	for _, n := range g.nodes {
		if !n.IsDefaultDomain() {
			continue
		}
		switch n.OpType {
		case "BatchNormalization":
			return nil
		case "Conv":
			w, b := n.Input(1), n.Input(2)
			if w == nil || b == nil || w.Init == nil || b.Init == nil || !foldedName(w.Name) || !foldedName(b.Name) {
				continue
			}
			if f.Convs == 0 {
				f.Example = w.Name
			}
			f.Convs++
		}
	}
	if f.Convs == 0 {
		return nil
	}
	return &f
}

func foldedName(name string) bool { return strings.HasPrefix(name, "onnx::Conv_") }

// ReexportAdvice is how to export a PyTorch model so that
// BatchNormalization stays a node of its own with the running statistics
// untouched and the state_dict names kept (README "Exporting from
// PyTorch").
const ReexportAdvice = `torch.onnx.export(model.eval(), x, f, training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False, dynamic_axes={...})`

// Note is the warning a run and inspect print for a folded model.
func (f *FoldedBN) Note() string {
	return fmt.Sprintf("the export folded BatchNormalization into %d convolution(s) (weights with exporter-made names such as %s, no BatchNormalization node): "+
		"training (unlearning or retraining) then updates the convolutions without normalization, which is less stable and needs a lower learning rate, "+
		"and the parameters lost their state_dict names; re-export with %s (README \"Exporting from PyTorch\")",
		f.Convs, f.Example, ReexportAdvice)
}
