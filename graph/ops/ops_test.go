package ops

import (
	"strings"
	"testing"
)

// TestRegister: a new op becomes known with its facts; a listed one is
// refused and keeps its entry.
func TestRegister(t *testing.T) {
	saved := table.Load()
	t.Cleanup(func() { table.Store(saved) })
	if err := Register("UnlearnTestOp", Def{Diff: []int{1}, Roles: map[int]string{1: Weight}}); err != nil {
		t.Fatal(err)
	}
	d, ok := Lookup("UnlearnTestOp")
	if !ok || d.Differentiable(0) || !d.Differentiable(1) || d.Role(1) != Weight {
		t.Errorf("after Register: %+v, %v", d, ok)
	}
	n := len(Known())
	err := Register("Conv", Def{})
	if err == nil || !strings.Contains(err.Error(), "Conv") {
		t.Errorf("Register(Conv): %v, want a refusal naming it", err)
	}
	if d, _ := Lookup("Conv"); !d.Differentiable(1) || len(Known()) != n {
		t.Errorf("a refused Register changed the table: Conv %+v", d)
	}
}
