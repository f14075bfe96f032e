package unlearn

import (
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxio"
)

func TestAuditModels(t *testing.T) {
	load := func() *graph.Model {
		m, err := onnxio.Load(testutil.Testdata(t, "resnet_small_train.onnx"))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	before, after := load(), load()
	nm, err := graph.Neurons(before.Graph)
	if err != nil {
		t.Fatal(err)
	}
	set := func(name string, idx ...int) {
		v := after.Graph.LocalValue(name).Init
		f, _ := v.Float32s()
		for _, i := range idx {
			f[i] += 1
		}
		v.SetFloat32s(f)
	}
	// Unchanged: clean audit.
	a, err := AuditModels(before.Graph, after.Graph, nm, Allowed{})
	if err != nil || len(a.Changed) != 0 || !a.BitIdentical || a.TotalParams != 77754 {
		t.Fatalf("identical models: %+v %v", a, err)
	}
	// conv1.weight is [16,1,3,3]: elements 0 and 9 are channels 0 and 1.
	set("conv1.weight", 0, 9)
	set("bn1.running_mean", 3)
	allowed := Allowed{Elements: map[string][]bool{"conv1.weight": make([]bool, 144)}, State: true}
	allowed.Elements["conv1.weight"][0] = true
	a, err = AuditModels(before.Graph, after.Graph, nm, allowed)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Changed) != 2 || a.ChangedParams != 2 || a.ChangedState != 1 {
		t.Fatalf("changes %+v", a)
	}
	c := a.Changed[1] // sorted: bn1.running_mean, conv1.weight
	if c.Name != "conv1.weight" || c.Layer != "conv1.weight" || len(c.Channels) != 2 || c.Channels[1] != 1 {
		t.Fatalf("conv1 change %+v", c)
	}
	if a.BitIdentical || len(a.Violations) != 1 {
		t.Fatalf("element 9 is outside the mask: %v", a.Violations)
	}
	allowed.Whole = map[string]bool{"conv1.weight": true}
	allowed.State = false
	a, _ = AuditModels(before.Graph, after.Graph, nm, allowed)
	if len(a.Violations) != 1 || a.BitIdentical {
		t.Fatalf("running stats not allowed: %v", a.Violations)
	}
}
