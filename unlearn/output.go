package unlearn

import (
	"bytes"
	"fmt"

	"github.com/unlearn-tool/unlearn/graph"
)

// Finalize returns the model to write: the original model with the
// working copy's initializers (same graph, names and opset; only changed
// initializers differ), in inference form (BatchNormalization
// training_mode 0, Dropout off). When untying changed the graph (untied >
// 0: initializers the exporter had shared behind Identity nodes now differ),
// the original graph cannot hold the result and the working copy is
// returned instead, with a note saying so and the original's declared
// input, output and value_info shapes (a batch made symbolic for training
// is fixed again).
func Finalize(orig, work *graph.Model, untied int) (*graph.Model, string, error) {
	note := ""
	dst := orig
	if untied > 0 {
		dst = work
		graph.RestoreDeclaredShapes(work.Graph, orig.Graph)
		note = fmt.Sprintf("%d parameters the exporter had tied behind Identity nodes were untied; the output graph has "+
			"those Identity nodes removed", untied)
	} else {
		for _, v := range orig.Graph.Initializers {
			if v.Init == nil {
				continue
			}
			w := work.Graph.LocalValue(v.Name)
			if w == nil || w.Init == nil {
				return nil, "", fmt.Errorf("unlearn: initializer %q missing from the working copy", v.Name)
			}
			if bytes.Equal(v.Init.Raw, w.Init.Raw) {
				continue
			}
			if v.Init.DType != w.Init.DType || len(v.Init.Raw) != len(w.Init.Raw) {
				return nil, "", fmt.Errorf("unlearn: initializer %q changed type or size", v.Name)
			}
			vals, err := w.Init.Float32s()
			if err != nil {
				return nil, "", fmt.Errorf("unlearn: initializer %q: %w", v.Name, err)
			}
			if err := v.Init.SetFloat32s(vals); err != nil {
				return nil, "", fmt.Errorf("unlearn: initializer %q: %w", v.Name, err)
			}
		}
	}
	if _, err := graph.InferenceForm(dst.Graph); err != nil {
		return nil, "", err
	}
	return dst, note, nil
}
