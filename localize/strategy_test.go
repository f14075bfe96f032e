package localize

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxio"
)

var registerFirst sync.Once

// TestRegisterStrategy: a strategy registered from a test file alone is
// listed, dispatched to by Localize with the budget as a parameter count,
// and a second registration under the same name is refused.
func TestRegisterStrategy(t *testing.T) {
	var gotLimit int64
	registerFirst.Do(func() {
		err := RegisterStrategy(Strategy{Name: "first-layer", Summary: "test only",
			Localize: func(r *Request) (*Mask, map[string][]float64, error) {
				gotLimit = r.Limit
				l := r.Neurons.Layers[0]
				sel := make([]bool, l.Members[0].Param.Init.Len())
				sel[0] = true
				return &Mask{Strategy: "first-layer", Budget: r.Options.Budget, Total: r.Neurons.NumParams, Selected: 1,
					Elements: map[string][]bool{l.Members[0].Param.Name: sel}}, nil, nil
			}})
		if err != nil {
			t.Fatal(err)
		}
	})
	if !slices.Contains(Strategies(), "first-layer") {
		t.Fatalf("not listed: %v", Strategies())
	}
	if err := RegisterStrategy(Strategy{Name: "del", Localize: localizeDepth}); err == nil {
		t.Error("a second del was registered")
	}
	m, err := onnxio.Load(testutil.Testdata(t, "resnet_small_train.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	mk, _, err := Localize(context.Background(), m, nil, nil, Options{Strategy: "first-layer", Budget: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if mk.Selected != 1 || gotLimit != 77754/2 {
		t.Errorf("selected %d, limit %d; want 1 and %d", mk.Selected, gotLimit, 77754/2)
	}
}
