package autodiff

import (
	"fmt"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
)

// TestBatchedTransposes checks the identity-product form of stacked
// transposes (rewriteBatchedTransposes, Spec.Threads ≥ 2): its forward
// values and gradients are bit-identical to the Transpose's, it is used
// where it applies (no Transpose of that shape is left) and not where the
// identity would be too large, and finite differences agree.
func TestBatchedTransposes(t *testing.T) {
	for i, c := range []struct {
		xs      []int64
		perm    []int64
		rewrite bool
	}{
		{[]int64{3, 5, 2, 4}, []int64{0, 2, 3, 1}, true}, // attention keys [N, T, H, D] → [N, H, D, T]
		{[]int64{3, 6, 4}, []int64{0, 2, 1}, true},
		{[]int64{2, 3, 4, 5}, []int64{0, 3, 1, 2}, true},
		{[]int64{2, 3, 40, 33}, []int64{0, 1, 3, 2}, false}, // identity 33 > batchedTransposeMaxI
		{[]int64{3, 5, 2, 4}, []int64{0, 2, 1, 3}, false},   // an inner block stays
	} {
		t.Run(fmt.Sprint(c.xs, c.perm), func(t *testing.T) {
			var outs [2]map[string]*graph.Tensor
			for j, threads := range []int{0, 2} {
				f := newFG(t, graph.Float, uint64(40+i))
				ys := make([]int64, len(c.perm))
				for a, p := range c.perm {
					ys[a] = c.xs[p]
				}
				x := f.param("x", c.xs...)
				w := f.param("w", ys...)
				// Not the graph's output: that one stays a Transpose.
				y := f.op("Mul", []*graph.Value{f.op("Transpose", []*graph.Value{x}, aIs("perm", c.perm)), w})
				art := checkVJP(t, f, y, ys, []string{"x", "w"}, Spec{Threads: threads}, f32eps, f32tol)
				transposes := 0
				for _, n := range art.Model.Graph.Nodes() {
					// The rewrite's own Transposes read a Reshape.
					if p, _ := n.Input(0).Producer(); n.OpType == "Transpose" && (p == nil || p.OpType != "Reshape") {
						transposes++
					}
				}
				if rewritten := threads > 0 && c.rewrite; rewritten != (transposes == 0) {
					t.Errorf("threads %d: %d Transposes left; rewrite expected: %v", threads, transposes, rewritten)
				}
				r := newRunner(t, art)
				feeds := map[string]*graph.Tensor{"x": f.g.LocalValue("x").Init, "w": f.g.LocalValue("w").Init,
					"seed": floatTensor(graph.Float, ys, newFG(t, graph.Float, 9).randn(graph.NumElements(ys)))}
				outs[j] = r.run(t, feeds)
			}
			for name, a := range outs[0] {
				av, bv := vals(t, a), vals(t, outs[1][name])
				for e := range av {
					if av[e] != bv[e] {
						t.Fatalf("%s[%d]: %g with Transpose, %g with the identity product", name, e, av[e], bv[e])
					}
				}
			}
		})
	}
}
