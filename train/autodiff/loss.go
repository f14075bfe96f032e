package autodiff

import (
	"github.com/unlearn-tool/unlearn/graph"
)

// loss emits the loss (named name) and its gradient with respect to the
// logits S [N, C], in closed form:
//
//	ce: L = Σ w_i·CE_i / N,  CE_i = −log softmax(S_i)[l_i];
//	    dS = (softmax(S) − onehot(l)) ⊙ w/N
//	kl: L = Σ w_i·T²·KL(softmax(t_i/T) ‖ softmax(S_i/T)) / N;
//	    dS = (softmax(S/T) − softmax(t/T)) ⊙ w·T/N
//
// Labels must lie in [0, C). The loss has shape [1].
func (b *builder) loss(S, labels, w, teacher *graph.Value, name string) (loss, dS *graph.Value) {
	dt := b.dtype(S)
	if dt == graph.Undefined {
		dt = graph.Float
	}
	b.checkLogits(S)
	// N as a float scalar: a constant when the batch is static (no shape
	// computation left for a GPU's provider to run on the host).
	var nf *graph.Value
	if s := b.shape(S); len(s) == 2 && s[0] >= 0 { // the logits' batch is the labels'
		nf = b.scalarF(dt, float64(s[0]))
	} else {
		nf = b.cast(b.op1("Gather", []*graph.Value{b.op1("Shape", []*graph.Value{labels}), b.scalarI64(0)}), dt)
	}
	wn := b.unsqueeze(b.div(w, nf), []int64{1}) // [N,1]
	if b.spec.Loss.Kind == LossKL {
		T := float64(b.spec.Loss.Temperature)
		if T == 0 {
			T = 1
		}
		ls := b.op1("LogSoftmax", []*graph.Value{b.mulF(S, 1/T)}, aI("axis", 1))
		lt := b.op1("LogSoftmax", []*graph.Value{b.mulF(teacher, 1/T)}, aI("axis", 1))
		pt := b.op1("Exp", []*graph.Value{lt})
		kl := b.reduceSum(b.mul(pt, b.sub(lt, ls)), []int64{1}, false)
		l := b.mulF(b.reduceMean(b.mul(w, kl), []int64{0}, true), T*T)
		loss = b.identityAs(l, name)
		ps := b.op1("Exp", []*graph.Value{ls})
		dS = b.mul(b.sub(ps, pt), b.mulF(wn, T))
		return loss, dS
	}
	logp := b.op1("LogSoftmax", []*graph.Value{S}, aI("axis", 1))
	var classes *graph.Value
	if s := b.shape(S); s[1] >= 0 {
		cl := make([]int64, s[1])
		for i := range cl {
			cl[i] = int64(i)
		}
		classes = b.i64(cl...)
	} else {
		cnum := b.op1("Gather", []*graph.Value{b.op1("Shape", []*graph.Value{S}), b.scalarI64(1)})
		classes = b.op1("Range", []*graph.Value{b.scalarI64(0), cnum, b.scalarI64(1)})
	}
	onehot := b.cast(b.op1("Equal", []*graph.Value{b.unsqueeze(labels, []int64{1}), classes}), dt)
	ce := b.neg(b.reduceSum(b.mul(logp, onehot), []int64{1}, false))
	loss = b.identityAs(b.reduceMean(b.mul(w, ce), []int64{0}, true), name)
	dS = b.mul(b.sub(b.op1("Exp", []*graph.Value{logp}), onehot), wn)
	return loss, dS
}

// checkLogits refuses logits S whose inferred rank is not 2 ([N, C]). An
// unknown rank names the first node after which the shape inference lost
// the rank (builder.declared), where a missing shape rule or an
// untracked value is to be looked for.
func (b *builder) checkLogits(S *graph.Value) {
	switch r := b.rank(S); {
	case r == 2:
	case r < 0 && b.lostRank != nil:
		b.fail("%w: the logits %q must have rank 2 [N, C]; their rank is unknown: the shape inference lost it at "+
			"%v and the model declares no shape for the values after it", ErrModel, S.Name, b.lostRank)
	case r < 0:
		b.fail("%w: the logits %q must have rank 2 [N, C]; their rank is unknown and the model declares no shape "+
			"for them", ErrModel, S.Name)
	default:
		b.fail("%w: the logits %q must have rank 2 [N, C], got rank %d", ErrModel, S.Name, r)
	}
}
