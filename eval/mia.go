package eval

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/eval/svc"
	"github.com/unlearn-tool/unlearn/schema"
)

// MIAOptions configure the membership-inference attacks. The zero value
// gives SalUn's SVC_MIA settings and the unlearning challenge kit's loss
// attack.
type MIAOptions struct {
	// SVC configures the support vector classifiers; the zero value is
	// scikit-learn's SVC(C=3, gamma='auto', kernel='rbf') as in SalUn.
	SVC svc.Options
	// MEntropy chooses the modified-entropy formula (default Song & Mittal).
	MEntropy MEntropyVariant
	// Splits is the number of cross-validation splits of the loss attack
	// (0: 10, the kit's n_splits).
	Splits int
	// TestFraction is each split's test share (0: 0.1, scikit-learn's
	// StratifiedShuffleSplit default).
	TestFraction float64
	// C is the loss attack's inverse L2 strength (0: 1.0, scikit-learn's
	// LogisticRegression default).
	C float64
	// Seed seeds the loss attack's subsampling and splits; the same seed
	// gives the same subsample and folds for every model, so that a model
	// and its oracle are attacked on identical partitions.
	Seed uint64
	// Workers bounds the SVC fits run at once (0: GOMAXPROCS).
	Workers int
	// Progress, if not nil, is called after each attack finishes (done of
	// total, one per SVC feature plus the loss attack); calls are
	// serialised.
	Progress func(done, total int)
}

func (o MIAOptions) resolved() MIAOptions {
	if o.Splits == 0 {
		o.Splits = 10
	}
	if o.TestFraction == 0 {
		o.TestFraction = 0.1
	}
	if o.C == 0 {
		o.C = 1
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return o
}

// setFeature sets the score of feature f in s.
func setFeature(s *schema.MIAScores, f Feature, v float64) {
	switch f {
	case Correctness:
		s.Correctness = v
	case Confidence:
		s.Confidence = v
	case Entropy:
		s.Entropy = v
	case MEntropy:
		s.MEntropy = v
	case Prob:
		s.Prob = v
	}
}

// SVCMIAResult is the outcome of SVCMIA.
type SVCMIAResult struct {
	// Scores[f] is the fraction of target examples predicted non-member by
	// the SVC of feature f (indexed by Feature).
	Scores []float64
	// Predictions[f][i] is 1 where the SVC of feature f calls target
	// example i a member.
	Predictions [][]int
	// NumSV[f] is the number of support vectors of feature f's SVC.
	NumSV []int
	// The features of the three groups.
	Members, NonMembers, Target *FeatureValues
	// Notes report SVC fits that stopped at the iteration cap (their
	// predictions are used anyway, as scikit-learn does after its
	// ConvergenceWarning).
	Notes []string
}

// SVCMIA runs SalUn's SVC_MIA: for each feature an RBF SVC is fitted on the
// shadow members (label 1) and shadow non-members (label 0) and predicts the
// target examples; the score is 1 − mean(prediction), the fraction called
// non-members. In SalUn the members are the first |test| retain examples,
// the non-members the test split and the target the forget set (passed as
// SVC_MIA's target_test); see ShadowMembers.
func SVCMIA(members, nonMembers, target Outputs, opts MIAOptions) (*SVCMIAResult, error) {
	if err := checkGroups(members, nonMembers, target); err != nil {
		return nil, err
	}
	o := opts.resolved()
	res := &SVCMIAResult{
		Scores:      make([]float64, len(Features)),
		Predictions: make([][]int, len(Features)),
		NumSV:       make([]int, len(Features)),
		Members:     ComputeFeatures(members, o.MEntropy),
		NonMembers:  ComputeFeatures(nonMembers, o.MEntropy),
		Target:      ComputeFeatures(target, o.MEntropy),
	}
	nIn, nOut := members.Len(), nonMembers.Len()
	y := make([]int, nIn+nOut)
	for i := range nIn {
		y[i] = 1
	}
	var (
		mu   sync.Mutex
		errs = make([]error, len(Features))
		done int
		wg   sync.WaitGroup
		sem  = make(chan struct{}, min(o.Workers, len(Features)))
	)
	for _, f := range Features {
		wg.Add(1)
		go func(f Feature) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			m, pred, err := fitPredict(res, f, y, o)
			if err != nil && !errors.Is(err, svc.ErrMaxIter) {
				errs[f] = err
				return
			}
			in := 0
			for _, p := range pred {
				in += p
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				res.Notes = append(res.Notes, fmt.Sprintf("SVC on %s stopped after %d iterations without reaching tol; "+
					"its predictions are used as scikit-learn would", f, m.Iterations()))
			}
			res.Predictions[f] = pred
			res.NumSV[f] = m.NumSV()
			res.Scores[f] = 1 - float64(in)/float64(len(pred))
			done++
			if o.Progress != nil {
				o.Progress(done, len(Features))
			}
		}(f)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	slices.Sort(res.Notes)
	return res, nil
}

// fitPredict fits feature f's SVC on the members (label 1) and
// non-members of res and predicts its targets (1: member). An error that
// wraps svc.ErrMaxIter comes with a usable model.
func fitPredict(res *SVCMIAResult, f Feature, y []int, o MIAOptions) (*svc.Model, []int, error) {
	xin, d := res.Members.Matrix(f)
	xout, _ := res.NonMembers.Matrix(f)
	x := append(slices.Clip(xin), xout...)
	m, err := svc.FitFlat(x, len(y), d, y, o.SVC)
	if err != nil && !errors.Is(err, svc.ErrMaxIter) {
		return nil, nil, fmt.Errorf("MIA SVC on %s: %w", f, err)
	}
	xt, _ := res.Target.Matrix(f)
	return m, m.PredictFlat(xt), err
}

// SVCNonMembers is SVCMIA for one feature, per example: 1 where the SVC of
// feature f calls target example i a non-member (what SVCMIA's score
// averages), 0 where it calls it a member.
func SVCNonMembers(members, nonMembers, target Outputs, f Feature, opts MIAOptions) ([]int, error) {
	if err := checkGroups(members, nonMembers, target); err != nil {
		return nil, err
	}
	o := opts.resolved()
	res := &SVCMIAResult{Members: ComputeFeatures(members, o.MEntropy),
		NonMembers: ComputeFeatures(nonMembers, o.MEntropy), Target: ComputeFeatures(target, o.MEntropy)}
	y := make([]int, members.Len()+nonMembers.Len())
	for i := range members.Len() {
		y[i] = 1
	}
	_, pred, err := fitPredict(res, f, y, o)
	if err != nil && !errors.Is(err, svc.ErrMaxIter) {
		return nil, err
	}
	out := make([]int, len(pred))
	for i, p := range pred {
		out[i] = 1 - p
	}
	return out, nil
}

func checkGroups(members, nonMembers, target Outputs) error {
	if members.Len() == 0 {
		return fmt.Errorf("no shadow members: %w", ErrNoRetain)
	}
	if nonMembers.Len() == 0 {
		return fmt.Errorf("no shadow non-members: %w", ErrNoTest)
	}
	if target.Len() == 0 {
		return fmt.Errorf("no target examples: %w", ErrEmptyForget)
	}
	for _, g := range []struct {
		o    Outputs
		name string
	}{{members, "shadow members"}, {nonMembers, "shadow non-members"}, {target, "target"}} {
		if err := g.o.check(g.name); err != nil {
			return err
		}
	}
	if members.Classes != nonMembers.Classes || members.Classes != target.Classes {
		return fmt.Errorf("groups have %d, %d and %d classes: %w",
			members.Classes, nonMembers.Classes, target.Classes, ErrClasses)
	}
	return nil
}

// ShadowMembers returns SalUn's shadow members: the first nTest retain
// examples in the order given (SalUn: Subset(retain, range(len(test)))),
// or all of retain when it has fewer.
func ShadowMembers(retain []int, nTest int) []int {
	return slices.Clone(retain[:min(len(retain), nTest)])
}

// LossAttackResult is the outcome of LossAttack.
type LossAttackResult struct {
	Score    float64   // mean test accuracy over the splits
	Folds    []float64 // each split's test accuracy
	Models   []LogReg  // each split's fitted regression
	PerClass int       // samples per class after balancing
	// Forget and Test are the subsampled indices into the loss slices
	// given (all of the smaller set).
	Forget, Test []int
	Splits       []CVSplit // indices into the samples: Test first, then Forget
}

// LossAttack is the membership-inference attack of the NeurIPS 2023
// unlearning challenge starting kit (unlearning-challenge/starting-kit,
// unlearning-CIFAR10.ipynb, simple_mia): per-example cross-entropy losses of
// the forget set (members, label 1) and of the test set (label 0), the larger
// set randomly subsampled to the size of the smaller (the kit shuffles the
// forget losses and keeps len(test) of them, its forget set being the larger;
// we subsample whichever is larger), samples ordered test first; a
// LogisticRegression (L2, C = 1) is cross-validated on
// StratifiedShuffleSplit(n_splits=10, test_size 0.1) and the score is the
// mean accuracy. The kit's numpy random streams are not reproduced: the
// subsample and the partitions come from opts.Seed (see
// StratifiedShuffleSplit), so the score matches scikit-learn's in
// distribution, and exactly on the same partitions (CrossValidateLogReg).
func LossAttack(forgetLoss, testLoss []float64, opts MIAOptions) (*LossAttackResult, error) {
	o := opts.resolved()
	k := min(len(forgetLoss), len(testLoss))
	rng := rand.New(rand.NewPCG(o.Seed, 0x6d69615f6c6f7373)) // "mia_loss"
	pick := func(n int) []int {
		if n == k {
			return data.Range(n)
		}
		p := rng.Perm(n)[:k]
		slices.Sort(p)
		return p
	}
	res := &LossAttackResult{PerClass: k, Forget: pick(len(forgetLoss)), Test: pick(len(testLoss))}
	x := make([]float64, 0, 2*k)
	y := make([]int, 0, 2*k)
	for _, i := range res.Test {
		x = append(x, testLoss[i])
		y = append(y, 0)
	}
	for _, i := range res.Forget {
		x = append(x, forgetLoss[i])
		y = append(y, 1)
	}
	splits, err := StratifiedShuffleSplit(y, o.Splits, o.TestFraction, rng)
	if err != nil {
		return nil, fmt.Errorf("loss attack on %d forget and %d test examples: %w", len(forgetLoss), len(testLoss), err)
	}
	folds, models, err := CrossValidateLogReg(x, y, splits, o.C)
	if err != nil {
		return nil, fmt.Errorf("loss attack: %w", err)
	}
	res.Splits, res.Folds, res.Models = splits, folds, models
	for _, a := range folds {
		res.Score += a
	}
	res.Score /= float64(len(folds))
	return res, nil
}

// MIAResult holds every attack's outcome.
type MIAResult struct {
	Scores schema.MIAScores
	SVC    *SVCMIAResult
	// Loss is nil when the forget or test set is too small to split
	// (LossNote says why).
	Loss     *LossAttackResult
	LossNote string
}

// MIA runs SVCMIA on every feature and LossAttack on the target's and the
// non-members' losses (the forget and test sets).
func MIA(members, nonMembers, target Outputs, opts MIAOptions) (*MIAResult, error) {
	o := opts.resolved()
	total := len(Features) + 1
	var mu sync.Mutex
	report := func(done int) {
		if opts.Progress != nil {
			mu.Lock()
			opts.Progress(done, total)
			mu.Unlock()
		}
	}
	so := o
	so.Progress = func(done, _ int) { report(done) }
	sv, err := SVCMIA(members, nonMembers, target, so)
	if err != nil {
		return nil, err
	}
	res := &MIAResult{SVC: sv}
	for _, f := range Features {
		setFeature(&res.Scores, f, sv.Scores[f])
	}
	la, err := LossAttack(sv.Target.Loss, sv.NonMembers.Loss, o)
	switch {
	case errors.Is(err, ErrTooFew):
		res.LossNote = err.Error()
	case err != nil:
		return nil, err
	default:
		res.Loss = la
		s := la.Score
		res.Scores.LossLR = &s
	}
	report(total)
	return res, nil
}
