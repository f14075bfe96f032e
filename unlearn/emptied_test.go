package unlearn

import (
	"fmt"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
)

// A reset that takes most channels of an early layer while deeper layers
// stay frozen is named in a warning; a reset of a few channels, of the
// classifier, or of every layer is not.
func TestEmptiedLayersWarns(t *testing.T) {
	m := loadModel(t, "resnet_small_train.onnx")
	nm, err := graph.Neurons(m.Graph)
	if err != nil {
		t.Fatal(err)
	}
	cls, err := nm.Classifier("")
	if err != nil {
		t.Fatal(err)
	}
	empty := func() map[string][]bool {
		mk := map[string][]bool{}
		for _, p := range nm.Params {
			mk[p.Value.Name] = make([]bool, p.Value.Init.Len())
		}
		return mk
	}
	// selects channels [0, k) of layer l (every member: weight, bias, norm).
	selects := func(mk map[string][]bool, l *graph.Layer, k int) {
		for c := 0; c < k; c++ {
			for _, mb := range l.Members {
				for i := range mb.Elements(c) {
					mk[mb.Param.Name][i] = true
				}
			}
		}
	}
	first := nm.Layers[0]
	if first.Depth != 0 || first == cls || first.Channels < 8 {
		t.Fatalf("first layer %s (depth %d, %d channels)", first.Name, first.Depth, first.Channels)
	}
	k := (3*first.Channels + 3) / 4 // the smallest count at 75 %

	mk := empty()
	selects(mk, first, k)
	w := emptiedLayers(nm, mk, cls).String()
	if want := fmt.Sprintf("%d of %d channels of %s", k, first.Channels, first.Name); !strings.Contains(w, want) {
		t.Errorf("warning %q lacks %q", w, want)
	}

	mk = empty()
	selects(mk, first, k-1)
	selects(mk, cls, cls.Channels)
	if w := emptiedLayers(nm, mk, cls); w != nil {
		t.Errorf("%d of %d channels and the classifier: warned %q", k-1, first.Channels, w)
	}

	mk = empty()
	for _, l := range nm.Layers {
		selects(mk, l, l.Channels)
	}
	if w := emptiedLayers(nm, mk, cls); w != nil {
		t.Errorf("every layer reset (nothing frozen): warned %q", w)
	}
	if w := emptiedLayers(nm, nil, cls); w != nil {
		t.Errorf("no mask: warned %q", w)
	}
}
