package eval

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/eval/svc"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/infer"
	"github.com/unlearn-tool/unlearn/onnxrt"
	"github.com/unlearn-tool/unlearn/schema"
)

// Oracle-free proxies: what a user without a retrained oracle can measure
// while unlearning (issue 8). Three groups of examples are involved:
//
//   - the forget set (training ids);
//   - a held-out slice of the retain set that the unlearning run does not
//     train on (the unlearn package draws it; see unlearn.ProxyConfig);
//   - the reference: test examples that show what "never seen" looks like
//     for this forget set (schema.ProxyReference).
//
// From the logits of a model on these groups ComputeProxies measures utility
// (held-out accuracy and loss), forgetting (forget accuracy and loss against
// the reference's) and a membership-inference score (schema.ProxyMIA).

// DefaultIIDAlpha is the significance level of the test that decides whether
// a forget set is IID (NewProxyReference).
const DefaultIIDAlpha = 1e-3

// DefaultProxyFeature is the MIA feature of the proxies: the softmax
// probability of the true label (the paper's appendix feature; correctness
// would only repeat the accuracies).
const DefaultProxyFeature = Confidence

// NewProxyReference decides whether forget (indices into the training
// split, whose labels are trainLabels) is IID and picks the reference test
// examples (testLabels are the test split's labels); classes is the number
// of classes (labels must lie in [0, classes)). alpha ≤ 0 means
// DefaultIIDAlpha.
func NewProxyReference(trainLabels, testLabels, forget []int, classes int,
	alpha float64) (*schema.ProxyReference, error) {
	if alpha <= 0 {
		alpha = DefaultIIDAlpha
	}
	if alpha >= 1 || math.IsNaN(alpha) {
		return nil, fmt.Errorf("IID test significance %v outside (0, 1): %w", alpha, ErrShape)
	}
	if len(forget) == 0 {
		return nil, ErrEmptyForget
	}
	if len(testLabels) == 0 {
		return nil, fmt.Errorf("no reference examples for the proxies: %w", ErrNoTest)
	}
	if classes < 1 {
		return nil, fmt.Errorf("%d classes: %w", classes, ErrShape)
	}
	count := func(labels []int, idx []int, what string) ([]int, error) {
		c := make([]int, classes)
		if idx == nil {
			for i, y := range labels {
				if y < 0 || y >= classes {
					return nil, fmt.Errorf("%s example %d has label %d, outside [0, %d): %w", what, i, y, classes, ErrShape)
				}
				c[y]++
			}
			return c, nil
		}
		for _, i := range idx {
			if i < 0 || i >= len(labels) {
				return nil, fmt.Errorf("%s index %d outside [0, %d): %w", what, i, len(labels), ErrShape)
			}
			y := labels[i]
			if y < 0 || y >= classes {
				return nil, fmt.Errorf("%s example %d has label %d, outside [0, %d): %w", what, i, y, classes, ErrShape)
			}
			c[y]++
		}
		return c, nil
	}
	nTrain, err := count(trainLabels, nil, "training")
	if err != nil {
		return nil, err
	}
	nForget, err := count(trainLabels, forget, "forget")
	if err != nil {
		return nil, err
	}
	nTest, err := count(testLabels, nil, "test")
	if err != nil {
		return nil, err
	}
	ref := &schema.ProxyReference{Alpha: alpha}
	n := float64(len(forget))
	k := 0
	for c := range classes {
		if nTrain[c] == 0 {
			continue
		}
		k++
		e := n * float64(nTrain[c]) / float64(len(trainLabels))
		d := float64(nForget[c]) - e
		ref.ChiSquare += d * d / e
	}
	ref.DoF = k - 1
	if ref.DoF >= 1 {
		ref.Critical = distuv.ChiSquared{K: float64(ref.DoF)}.Quantile(1 - alpha)
	}
	ref.IID = ref.DoF < 1 || !(ref.ChiSquare > ref.Critical)
	all := func() {
		ref.Test = data.Range(len(testLabels))
	}
	if ref.IID {
		all()
		ref.NTest = len(ref.Test)
		return ref, nil
	}
	var covered float64
	for c := range classes {
		if nForget[c] > 0 && nTest[c] > 0 {
			ref.Classes = append(ref.Classes, c)
			covered += float64(nForget[c])
		}
	}
	if len(ref.Classes) == 0 {
		all()
		ref.NTest = len(ref.Test)
		ref.Note = "no test example of the forget set's classes; the reference is the whole test split"
		return ref, nil
	}
	if int(covered) < len(forget) {
		ref.Note = fmt.Sprintf("%d forget examples belong to classes without test examples; "+
			"class-matched accuracy covers the other %d", len(forget)-int(covered), int(covered))
	}
	in := make([]bool, classes)
	for _, c := range ref.Classes {
		in[c] = true
		ref.Weights = append(ref.Weights, float64(nForget[c])/covered)
	}
	for i, y := range testLabels {
		if in[y] {
			ref.Test = append(ref.Test, i)
		}
	}
	ref.NTest = len(ref.Test)
	return ref, nil
}

// ProxyOptions configure ComputeProxies.
type ProxyOptions struct {
	// Feature names the MIA feature ("correctness", "confidence",
	// "entropy", "m_entropy", "prob"; "" is DefaultProxyFeature).
	Feature string
	// NoMIA skips the attack.
	NoMIA bool
	// MIA supplies the SVC settings and the modified-entropy variant.
	MIA MIAOptions
}

// ParseFeature returns the Feature named as in metrics.json.
func ParseFeature(name string) (Feature, error) {
	for _, f := range Features {
		if f.String() == name {
			return f, nil
		}
	}
	return 0, fmt.Errorf("unknown MIA feature %q: %w", name, ErrShape)
}

func (o ProxyOptions) feature() (Feature, error) {
	if o.Feature == "" {
		return DefaultProxyFeature, nil
	}
	return ParseFeature(o.Feature)
}

// ComputeProxies measures a model from its logits on the forget set, the
// held-out retain slice and the reference test examples (reference holds
// the rows of ref.Test, in that order). forget and holdout must not be
// empty; reference must have ref.NTest rows.
func ComputeProxies(forget, holdout, reference Outputs, ref *schema.ProxyReference,
	opts ProxyOptions) (*schema.Proxies, error) {
	if ref == nil {
		return nil, fmt.Errorf("no proxy reference: %w", ErrShape)
	}
	if forget.Len() == 0 {
		return nil, ErrEmptyForget
	}
	if holdout.Len() == 0 {
		return nil, fmt.Errorf("no held-out retain examples: %w", ErrNoRetain)
	}
	if reference.Len() == 0 {
		return nil, fmt.Errorf("no reference examples: %w", ErrNoTest)
	}
	if reference.Len() != ref.NTest {
		return nil, fmt.Errorf("%d reference rows for %d reference examples: %w", reference.Len(), ref.NTest, ErrShape)
	}
	for _, g := range []struct {
		o    Outputs
		name string
	}{{forget, "forget"}, {holdout, "held-out"}, {reference, "reference"}} {
		if err := g.o.check(g.name); err != nil {
			return nil, err
		}
	}
	if forget.Classes != holdout.Classes || forget.Classes != reference.Classes {
		return nil, fmt.Errorf("groups have %d, %d and %d classes: %w",
			forget.Classes, holdout.Classes, reference.Classes, ErrClasses)
	}
	if len(ref.Weights) != len(ref.Classes) {
		return nil, fmt.Errorf("%d weights for %d reference classes: %w", len(ref.Weights), len(ref.Classes), ErrShape)
	}
	feat, err := opts.feature()
	if err != nil {
		return nil, err
	}
	mo := opts.MIA.resolved()
	ff := ComputeFeatures(forget, mo.MEntropy)
	fh := ComputeFeatures(holdout, mo.MEntropy)
	fr := ComputeFeatures(reference, mo.MEntropy)
	p := &schema.Proxies{
		HoldoutAccuracy: mean(fh.Correctness),
		HoldoutLoss:     mean(fh.Loss),
		ForgetAccuracy:  mean(ff.Correctness),
		ForgetLoss:      mean(ff.Loss),
	}
	if len(ref.Classes) == 0 {
		p.ReferenceAccuracy = mean(fr.Correctness)
		p.ReferenceLoss = mean(fr.Loss)
	} else {
		acc, err := classWeighted(fr.Correctness, reference.Labels, reference.Classes, ref.Classes, ref.Weights)
		if err != nil {
			return nil, err
		}
		loss, _ := classWeighted(fr.Loss, reference.Labels, reference.Classes, ref.Classes, ref.Weights)
		p.ReferenceAccuracy, p.ReferenceLoss = acc, loss
	}
	p.ForgetGap = p.ForgetAccuracy - p.ReferenceAccuracy
	if opts.NoMIA {
		return p, nil
	}
	m, err := proxyMIA(feat, fh, fr, ff, mo.SVC)
	if err != nil {
		return nil, err
	}
	p.MIA = m
	return p, nil
}

// classWeighted is Σ_k w_k·mean(v over the rows labelled classes[k]).
func classWeighted(v []float64, labels []int, nClasses int, classes []int, weights []float64) (float64, error) {
	sum, n := make([]float64, nClasses), make([]int, nClasses)
	for i, y := range labels {
		sum[y] += v[i]
		n[y]++
	}
	var out float64
	for k, c := range classes {
		if c < 0 || c >= nClasses || n[c] == 0 {
			return 0, fmt.Errorf("class %d has no example to weigh: %w", c, ErrShape)
		}
		out += weights[k] * sum[c] / float64(n[c])
	}
	return out, nil
}

// MatchedAccuracy is o's accuracy re-weighted to the class distribution of
// labels: Σ_c w_c·acc_o(c), w_c the share of class c in labels, over the
// classes that have examples in o (weights renormalised over them). ok is
// false when no class of labels has an example in o. The unlearn package
// uses it for the auto schedule's utility target: the input model's test
// accuracy weighted like the held-out retain slice, i.e. its accuracy on
// unseen examples distributed like the slice.
func MatchedAccuracy(o Outputs, labels []int) (acc float64, ok bool, err error) {
	if err := o.check("matched accuracy"); err != nil {
		return 0, false, err
	}
	share := make([]int, o.Classes)
	for i, y := range labels {
		if y < 0 || y >= o.Classes {
			return 0, false, fmt.Errorf("label %d of example %d outside [0, %d): %w", y, i, o.Classes, ErrShape)
		}
		share[y]++
	}
	present := make([]bool, o.Classes)
	for _, y := range o.Labels {
		present[y] = true
	}
	var classes []int
	var weights []float64
	total := 0
	for c, n := range share {
		if n > 0 && present[c] {
			classes = append(classes, c)
			total += n
		}
	}
	if total == 0 {
		return 0, false, nil
	}
	for _, c := range classes {
		weights = append(weights, float64(share[c])/float64(total))
	}
	correct := make([]float64, o.Len())
	for i, p := range infer.Argmax(o.Logits, o.Classes) {
		if p == o.Labels[i] {
			correct[i] = 1
		}
	}
	acc, err = classWeighted(correct, o.Labels, o.Classes, classes, weights)
	return acc, err == nil, err
}

// evenly returns k of the indices 0..n-1, evenly spaced (⌊i·n/k⌋).
func evenly(n, k int) []int {
	out := make([]int, k)
	for i := range out {
		out[i] = i * n / k
	}
	return out
}

// proxyMIA fits the SVC on members (holdout) and non-members (reference),
// the larger group thinned to the size of the smaller one (evenly spaced
// rows, so the SVC does not just learn the majority), and scores the three
// groups in full.
func proxyMIA(f Feature, members, nonMembers, target *FeatureValues, o svc.Options) (*schema.ProxyMIA, error) {
	xin, d := members.Matrix(f)
	xout, _ := nonMembers.Matrix(f)
	k := min(members.N, nonMembers.N)
	x := make([]float64, 0, 2*k*d)
	for _, i := range evenly(members.N, k) {
		x = append(x, xin[i*d:(i+1)*d]...)
	}
	for _, i := range evenly(nonMembers.N, k) {
		x = append(x, xout[i*d:(i+1)*d]...)
	}
	y := make([]int, 2*k)
	for i := range k {
		y[i] = 1
	}
	res := &schema.ProxyMIA{Feature: f.String()}
	m, err := svc.FitFlat(x, 2*k, d, y, o)
	switch {
	case errors.Is(err, svc.ErrMaxIter):
		res.Note = fmt.Sprintf("SVC on %s stopped after %d iterations without reaching tol; "+
			"its predictions are used as scikit-learn would", f, m.Iterations())
	case err != nil:
		return nil, fmt.Errorf("proxy MIA SVC on %s: %w", f, err)
	}
	nonMember := func(fv *FeatureValues) float64 {
		xt, _ := fv.Matrix(f)
		in := 0
		for _, p := range m.PredictFlat(xt) {
			in += p
		}
		return 1 - float64(in)/float64(fv.N)
	}
	res.Forget = nonMember(target)
	res.Reference = nonMember(nonMembers)
	res.Holdout = nonMember(members)
	return res, nil
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// ProxyLogits runs classifier c on the three proxy groups of ds: forget
// and holdout (indices into ds.Train) and ref.Test (indices into ds.Test).
func ProxyLogits(c *infer.Classifier, ds *data.Dataset, forget, holdout []int,
	ref *schema.ProxyReference) (f, h, r Outputs, err error) {
	run := func(s *data.Split, idx []int) (Outputs, error) {
		lg, err := c.Logits(s, idx, nil)
		if err != nil {
			return Outputs{}, err
		}
		return Outputs{Logits: lg, Labels: s.Labels(idx), Classes: c.Classes()}, nil
	}
	if f, err = run(ds.Train, forget); err != nil {
		return
	}
	if h, err = run(ds.Train, holdout); err != nil {
		return
	}
	r, err = run(ds.Test, ref.Test)
	return
}

// EvaluateProxies runs m (inference mode; m is not modified) on the proxy
// groups and measures them (ComputeProxies).
func EvaluateProxies(m *graph.Model, ds *data.Dataset, forget, holdout []int, ref *schema.ProxyReference,
	rt onnxrt.Options, batch int, opts ProxyOptions) (*schema.Proxies, error) {
	c, err := infer.NewClassifier(m, rt, batch)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	f, h, r, err := ProxyLogits(c, ds, forget, holdout, ref)
	if err != nil {
		return nil, err
	}
	p, err := ComputeProxies(f, h, r, ref, opts)
	if err != nil {
		return nil, err
	}
	p.TestAccuracy, err = testAccuracy(c, ds.Test, ref.Test, r)
	return p, err
}

// testAccuracy is the accuracy on the whole test split given the outputs
// r of its rows in (ascending indices); the other rows are run on c.
func testAccuracy(c *infer.Classifier, test *data.Split, in []int, r Outputs) (float64, error) {
	n := test.Len()
	pred, labels := infer.Argmax(r.Logits, r.Classes), r.Labels
	if len(in) < n {
		rest := make([]int, 0, n-len(in))
		j := 0
		for i := range n {
			if j < len(in) && in[j] == i {
				j++
				continue
			}
			rest = append(rest, i)
		}
		lg, err := c.Logits(test, rest, nil)
		if err != nil {
			return 0, err
		}
		pred = append(pred, infer.Argmax(lg, c.Classes())...)
		labels = append(slices.Clone(labels), test.Labels(rest)...)
	}
	return infer.Accuracy(pred, labels), nil
}
