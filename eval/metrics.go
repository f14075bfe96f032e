package eval

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/infer"
	"github.com/unlearn-tool/unlearn/onnxrt"
	"github.com/unlearn-tool/unlearn/schema"
)

// Options configure Evaluate.
type Options struct {
	// Runtime selects the ONNX Runtime library, threads and device.
	Runtime onnxrt.Options
	// BatchSize is the number of examples per forward pass (0: 256).
	BatchSize int
	// Progress, if not nil, is called as work advances: stage is "train",
	// "test" (forward passes, done/total examples) or "mia" (attacks,
	// done/total). Calls for one stage come in order from one goroutine at
	// a time.
	Progress func(stage string, done, total int)
	// NoMIA skips the membership-inference attacks (accuracy only).
	NoMIA bool
	// MIA configures the attacks.
	MIA MIAOptions
}

// Metrics are one model's measurements on a dataset and forget set:
// metrics.json's per-model section (schema.Metrics, whose fields are
// promoted) and what comparisons and plots need besides, which the JSON
// leaves out. A schema.Report or schema.Section takes &m.Metrics.
type Metrics struct {
	schema.Metrics

	// Predictions are the arg-max classes on the whole training and test
	// splits, for agreement between models.
	Predictions Predictions
	// ForgetIDs and RetainIDs are the training-split indices evaluated
	// (both nil without a forget set).
	ForgetIDs, RetainIDs []int
	// MIADetail holds the attacks' features, predictions and folds (nil
	// with Options.NoMIA or without a forget set).
	MIADetail *MIAResult
	// MembersIDs are the retain examples used as shadow members.
	MemberIDs []int
}

// Predictions are arg-max classes, indexed like the split.
type Predictions struct {
	Train, Test []int
}

func (o *Options) batch() int {
	if o.BatchSize <= 0 {
		return 256
	}
	return o.BatchSize
}

// Evaluate runs m on the training and test splits of ds and measures it:
// accuracy on train, test, forget and retain (overall and per class) and,
// unless opts.NoMIA, the membership-inference scores of the forget set.
// forget and retain are indices into ds.Train (data.ForgetRetain makes
// them); both nil means no forget set (accuracy on train and test only). A
// non-nil empty forget set is ErrEmptyForget; an empty retain set makes the
// MIA impossible (ErrNoRetain) unless opts.NoMIA. m is not modified.
func Evaluate(m *graph.Model, ds *data.Dataset, forget, retain []int, opts Options) (*Metrics, error) {
	if err := checkSplit(ds.Train.Len(), forget, retain, opts.NoMIA); err != nil {
		return nil, err
	}
	if !opts.NoMIA && forget != nil && ds.Test.Len() == 0 {
		return nil, fmt.Errorf("no shadow non-members for the MIA: %w", ErrNoTest)
	}
	start := time.Now()
	cl, err := infer.NewClassifier(m, opts.Runtime, opts.batch())
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	if c := cl.Classes(); c > 0 && ds.Classes > 0 && c != ds.Classes {
		return nil, fmt.Errorf("model outputs %d classes, dataset %s has %d: %w", c, ds.Name, ds.Classes, ErrClasses)
	}
	stage := func(s string) func(done, total int) {
		if opts.Progress == nil {
			return nil
		}
		return func(done, total int) { opts.Progress(s, done, total) }
	}
	trainLogits, err := cl.Logits(ds.Train, data.Range(ds.Train.Len()), stage("train"))
	if err != nil {
		return nil, err
	}
	testLogits, err := cl.Logits(ds.Test, data.Range(ds.Test.Len()), stage("test"))
	if err != nil {
		return nil, err
	}
	classes := cl.Classes()
	if classes <= 0 {
		classes = ds.Classes // both splits empty
	}
	if ds.Classes > 0 && classes != ds.Classes {
		return nil, fmt.Errorf("model outputs %d classes, dataset %s has %d: %w", classes, ds.Name, ds.Classes, ErrClasses)
	}
	forward := time.Since(start)
	train := Outputs{Logits: trainLogits, Labels: ds.Train.Labels(nil), Classes: classes}
	test := Outputs{Logits: testLogits, Labels: ds.Test.Labels(nil), Classes: classes}
	met, err := EvaluateOutputs(train, test, forget, retain, opts)
	if err != nil {
		return nil, err
	}
	met.Timings.ForwardS = forward.Seconds()
	met.Timings.TotalS = time.Since(start).Seconds()
	return met, nil
}

func checkSplit(n int, forget, retain []int, noMIA bool) error {
	if forget == nil && retain == nil {
		return nil
	}
	if len(forget) == 0 {
		return ErrEmptyForget
	}
	if len(forget)+len(retain) != n {
		return fmt.Errorf("%d forget + %d retain examples for a training split of %d: %w",
			len(forget), len(retain), n, ErrShape)
	}
	seen := make([]bool, n)
	for _, ids := range [][]int{forget, retain} {
		for _, i := range ids {
			if i < 0 || i >= n || seen[i] {
				return fmt.Errorf("training index %d out of range [0, %d) or repeated: %w", i, n, ErrShape)
			}
			seen[i] = true
		}
	}
	if len(retain) == 0 && !noMIA {
		return fmt.Errorf("the forget set covers all %d training examples: %w", n, ErrNoRetain)
	}
	return nil
}

// EvaluateOutputs is Evaluate on logits already computed: train and test
// hold the logits of the whole training and test splits. opts.Runtime,
// BatchSize and the forward-pass stages of Progress are unused.
func EvaluateOutputs(train, test Outputs, forget, retain []int, opts Options) (*Metrics, error) {
	start := time.Now()
	if err := checkSplit(train.Len(), forget, retain, opts.NoMIA); err != nil {
		return nil, err
	}
	if err := train.check("training split"); err != nil {
		return nil, err
	}
	if test.Len() > 0 || test.Classes != 0 {
		if err := test.check("test split"); err != nil {
			return nil, err
		}
		if test.Classes != train.Classes {
			return nil, fmt.Errorf("training logits have %d classes, test logits %d: %w",
				train.Classes, test.Classes, ErrClasses)
		}
	}
	c := train.Classes
	met := &Metrics{Metrics: schema.Metrics{Classes: c}}
	met.Predictions.Train = infer.Argmax(train.Logits, c)
	met.Predictions.Test = infer.Argmax(test.Logits, c)
	met.Counts = schema.Counts{Train: train.Len(), Test: test.Len()}
	met.Accuracy.Train = infer.Accuracy(met.Predictions.Train, train.Labels)
	met.Accuracy.Test = infer.Accuracy(met.Predictions.Test, test.Labels)
	met.PerClass.Train = perClass(met.Predictions.Train, train.Labels, c)
	met.PerClass.Test = perClass(met.Predictions.Test, test.Labels, c)
	if forget != nil {
		met.ForgetIDs, met.RetainIDs = forget, retain
		nf, nr := len(forget), len(retain)
		met.Counts.Forget, met.Counts.Retain = &nf, &nr
		pf, lf := pick(met.Predictions.Train, forget), pick(train.Labels, forget)
		af := infer.Accuracy(pf, lf)
		met.Accuracy.Forget = &af
		met.PerClass.Forget = perClass(pf, lf, c)
		if nr > 0 {
			pr, lr := pick(met.Predictions.Train, retain), pick(train.Labels, retain)
			ar := infer.Accuracy(pr, lr)
			met.Accuracy.Retain = &ar
			met.PerClass.Retain = perClass(pr, lr, c)
		}
	}
	if !opts.NoMIA && forget != nil {
		if test.Len() == 0 {
			return nil, fmt.Errorf("no shadow non-members for the MIA: %w", ErrNoTest)
		}
		mo := opts.MIA
		if opts.Progress != nil {
			mo.Progress = func(done, total int) { opts.Progress("mia", done, total) }
		}
		met.MemberIDs = ShadowMembers(retain, test.Len())
		ms := time.Now()
		res, err := MIA(train.Subset(met.MemberIDs), test, train.Subset(forget), mo)
		if err != nil {
			return nil, err
		}
		met.MIA = &res.Scores
		met.MIADetail = res
		met.Timings.MIAS = time.Since(ms).Seconds()
	}
	met.Timings.TotalS = time.Since(start).Seconds()
	return met, nil
}

func pick[T any](v []T, idx []int) []T {
	out := make([]T, len(idx))
	for i, j := range idx {
		out[i] = v[j]
	}
	return out
}

func perClass(pred, labels []int, classes int) []schema.ClassAccuracy {
	out := make([]schema.ClassAccuracy, classes)
	for i, y := range labels {
		out[y].N++
		if pred[i] == y {
			out[y].Correct++
		}
	}
	for k := range out {
		if out[k].N > 0 {
			a := float64(out[k].Correct) / float64(out[k].N)
			out[k].Accuracy = &a
		}
	}
	return out
}

// NewDelta returns oracle − model for every metric both have.
func NewDelta(oracle, model *Metrics) *schema.Delta {
	d := &schema.Delta{}
	d.Accuracy.Train = oracle.Accuracy.Train - model.Accuracy.Train
	d.Accuracy.Test = oracle.Accuracy.Test - model.Accuracy.Test
	d.Accuracy.Forget = subPtr(oracle.Accuracy.Forget, model.Accuracy.Forget)
	d.Accuracy.Retain = subPtr(oracle.Accuracy.Retain, model.Accuracy.Retain)
	if oracle.MIA != nil && model.MIA != nil {
		o, m := oracle.MIA, model.MIA
		d.MIA = &schema.MIAScores{
			Correctness: o.Correctness - m.Correctness,
			Confidence:  o.Confidence - m.Confidence,
			Entropy:     o.Entropy - m.Entropy,
			MEntropy:    o.MEntropy - m.MEntropy,
			Prob:        o.Prob - m.Prob,
			LossLR:      subPtr(o.LossLR, m.LossLR),
		}
	}
	if d.Accuracy.Forget != nil && d.Accuracy.Retain != nil && d.MIA != nil {
		g := (math.Abs(*d.Accuracy.Forget) + math.Abs(*d.Accuracy.Retain) +
			math.Abs(d.Accuracy.Test) + math.Abs(d.MIA.Correctness)) / 4
		d.AvgGap = &g
	}
	return d
}

func subPtr(a, b *float64) *float64 {
	if a == nil || b == nil {
		return nil
	}
	v := *a - *b
	return &v
}

// ErrMismatch: two Metrics were not computed on the same examples.
var ErrMismatch = errors.New("eval: metrics of different splits")

// NewAgreement compares the predictions of two models evaluated on the
// same dataset and forget set.
func NewAgreement(a, b *Metrics) (*schema.Agreement, error) {
	if len(a.Predictions.Train) != len(b.Predictions.Train) || len(a.Predictions.Test) != len(b.Predictions.Test) ||
		len(a.ForgetIDs) != len(b.ForgetIDs) {
		return nil, fmt.Errorf("%d/%d training, %d/%d test, %d/%d forget predictions: %w",
			len(a.Predictions.Train), len(b.Predictions.Train), len(a.Predictions.Test), len(b.Predictions.Test),
			len(a.ForgetIDs), len(b.ForgetIDs), ErrMismatch)
	}
	for i, id := range a.ForgetIDs {
		if b.ForgetIDs[i] != id {
			return nil, fmt.Errorf("forget sets differ at position %d: %w", i, ErrMismatch)
		}
	}
	same := func(x, y []int, idx []int) float64 {
		if idx == nil {
			idx = data.Range(len(x))
		}
		if len(idx) == 0 {
			return 0
		}
		n := 0
		for _, i := range idx {
			if x[i] == y[i] {
				n++
			}
		}
		return float64(n) / float64(len(idx))
	}
	ag := &schema.Agreement{
		Train: same(a.Predictions.Train, b.Predictions.Train, nil),
		Test:  same(a.Predictions.Test, b.Predictions.Test, nil),
	}
	if a.ForgetIDs != nil {
		f := same(a.Predictions.Train, b.Predictions.Train, a.ForgetIDs)
		ag.Forget = &f
		if len(a.RetainIDs) > 0 {
			r := same(a.Predictions.Train, b.Predictions.Train, a.RetainIDs)
			ag.Retain = &r
		}
	}
	return ag, nil
}
