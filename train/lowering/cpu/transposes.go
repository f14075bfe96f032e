package cpu

import (
	"slices"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/ops"
	"github.com/unlearn-tool/unlearn/graph/shapes"
)

// batchedTransposeMaxI bounds the identity of rewriteBatchedTransposes:
// the product costs 2·min(A, B) flops per element moved.
const batchedTransposeMaxI = 32

// rewriteBatchedTransposes replaces, in the built graph g (outputs: its
// outputs), when it runs on 2 threads or more (autodiff.Spec.Threads),
// every float Transpose that swaps two groups of
// trailing axes under leading batch axes — [b…, A…, B…] → [b…, B…, A…],
// a stack of small matrix transposes such as a ViT's attention heads
// [N, 17, 4, 16] → [N, 4, 16, 17] — by a product with an identity
// matrix, I_A or I_B, whichever is smaller (at most batchedTransposeMaxI):
//
//	Reshape(MatMul(Transpose(Reshape(x, [-1, A, B]), [0, 2, 1]), I_A), [b…, B…, A…])
//
// ONNX Runtime folds that Transpose into its MatMul kernel
// (MatmulTransposeFusion), which runs on the thread pool over the stack.
// Its own Transpose parallelizes each small matrix of the stack
// separately and gets slower with every thread, so that on many threads
// the Transposes of a small ViT's step take a large share of it
// (bench/RESULTS.md, section "A 16-core Xeon: thread scaling"). The
// product is exact (one term 1·x, the others 0·x), except that an infinite
// x also makes NaNs in its row: only on activations that already make the
// loss non-finite.
// Transposes of the last two axes that a MatMul consumes directly are
// left to the same fusion, unless they transpose a Transpose: ONNX
// Runtime merges the two first, and the merged one is not a swap of the
// last two axes (a ViT's backward of its attention's key transposes).
func (b *builder) rewriteBatchedTransposes(g *graph.Graph, outputs []*graph.Value) {
	if b.Threads() < 2 {
		return
	}
	changed := false
	for _, n := range slices.Clone(g.Nodes()) {
		if n.OpType != ops.Transpose || !n.IsDefaultDomain() {
			continue
		}
		x, y := n.Input(0), n.Output(0)
		if b.DType(x) != graph.Float || slices.Contains(outputs, y) {
			continue
		}
		xs, perm := b.Shape(x), n.AttrInts("perm", nil)
		if xs == nil || len(perm) != len(xs) {
			continue
		}
		k, a, ok := batchedSwap(perm)
		if !ok || !shapes.AllKnown(xs[k:]) {
			continue
		}
		A, B := graph.NumElements(xs[k:k+a]), graph.NumElements(xs[k+a:])
		if min(A, B) > batchedTransposeMaxI || (k == len(perm)-2 && onlyMatMulUses(y) && !fromTranspose(x)) {
			continue
		}
		// The output shape, with the one dynamic batch axis (if any) as −1.
		out := make([]int64, 0, len(xs))
		unknown := 0
		for _, d := range xs[:k] {
			if d < 0 {
				d = -1
				unknown++
			}
			out = append(out, d)
		}
		if unknown > 1 {
			continue
		}
		for _, p := range perm[k:] {
			out = append(out, xs[p])
		}
		t := b.Transpose(b.Reshape(x, []int64{-1, A, B}), []int64{0, 2, 1})
		var m *graph.Value
		if A <= B {
			m = b.Op1("MatMul", []*graph.Value{t, b.eye(A)})
		} else {
			m = b.Op1("MatMul", []*graph.Value{b.eye(B), t})
		}
		g.ReplaceAllUsesWith(y, b.Reshape(m, out))
		if err := g.RemoveNode(n); err != nil {
			b.Fail("autodiff: rewriting %v: %v", n, err)
		}
		changed = true
	}
	if changed {
		if err := g.SortTopologically(); err != nil {
			b.Fail("autodiff: rewriting Transposes: %v", err)
		}
	}
}

// batchedSwap reports whether perm keeps its first k axes and swaps the
// group of the next a axes with the group of all the rest (k ≥ 1, both
// groups non-empty): [b…, A…, B…] → [b…, B…, A…].
func batchedSwap(perm []int64) (k, a int, ok bool) {
	r := len(perm)
	for k < r && perm[k] == int64(k) {
		k++
	}
	if k == 0 || k >= r-1 {
		return 0, 0, false
	}
	// perm[k:] = [k+a, …, r−1, k, …, k+a−1]
	a = int(perm[k]) - k
	if a <= 0 || a >= r-k {
		return 0, 0, false
	}
	for i := k; i < r; i++ {
		want := int64(i + a)
		if i+a >= r {
			want = int64(i + a - (r - k))
		}
		if perm[i] != want {
			return 0, 0, false
		}
	}
	return k, a, true
}

// onlyMatMulUses reports whether every use of v is a MatMul input.
func onlyMatMulUses(v *graph.Value) bool {
	uses := v.Uses()
	for _, u := range uses {
		if u.Node.OpType != ops.MatMul {
			return false
		}
	}
	return len(uses) > 0
}

// fromTranspose reports whether v is a Transpose's output.
func fromTranspose(v *graph.Value) bool {
	p, _ := v.Producer()
	return p != nil && p.OpType == ops.Transpose
}

// eye returns the float identity matrix of size n.
func (b *builder) eye(n int64) *graph.Value {
	v := make([]float64, n*n)
	for i := range n {
		v[i*n+i] = 1
	}
	return b.ConstF(graph.Float, []int64{n, n}, v)
}
