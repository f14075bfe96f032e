package eval

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/internal/testutil"
)

// The reference numbers come from testdata/mia/make_mia_ref.py: PyTorch
// logits of the bundled model and oracle on the bundled data, NumPy float64
// features and scikit-learn's SVC and LogisticRegression. These tests feed
// the stored PyTorch logits to the Go code, so they need no ONNX Runtime.

type miaRef struct {
	a    map[string]*data.Array
	meta struct {
		Sizes  map[string]int `json:"sizes"`
		Models map[string]struct {
			Accuracy map[string]float64 `json:"accuracy"`
			PerClass map[string]struct {
				N       []int `json:"n"`
				Correct []int `json:"correct"`
			} `json:"per_class"`
			SVCMIA     map[string]float64 `json:"svc_mia"`
			SalUnTorch map[string]float64 `json:"salun_torch"`
			NSupport   map[string]int     `json:"n_support"`
			LossFolds  []float64          `json:"loss_lr_folds"`
		} `json:"models"`
	}
}

func loadMIARef(t testing.TB) *miaRef {
	t.Helper()
	r := &miaRef{}
	var err error
	if r.a, err = data.ReadNPZ(testutil.Testdata(t, "mia", "ref.npz")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(testutil.Testdata(t, "mia", "ref.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &r.meta); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *miaRef) array(t testing.TB, key string) *data.Array {
	t.Helper()
	a, ok := r.a[key]
	if !ok {
		t.Fatalf("ref.npz has no %q", key)
	}
	return a
}

func (r *miaRef) ints(t testing.TB, key string) []int {
	t.Helper()
	v, err := r.array(t, key).Ints()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// outputs returns the stored PyTorch logits of model tag on group g.
func (r *miaRef) outputs(t testing.TB, tag, g string) Outputs {
	t.Helper()
	a := r.array(t, tag+"_logits_"+g)
	return Outputs{Logits: a.Float32s(), Labels: r.ints(t, "labels_"+g), Classes: a.Shape[1]}
}

var (
	miaTags   = []string{"model", "oracle"}
	miaGroups = []string{"members", "nonmembers", "forget"}
)

func TestFeaturesMatchNumPy(t *testing.T) {
	r := loadMIARef(t)
	// The reference stores float32 copies of float64 features, so agreement
	// is limited by float32 rounding (6e-8 relative); 1e-6 leaves room for
	// nothing else.
	const tol = 1e-6
	for _, tag := range miaTags {
		for _, g := range miaGroups {
			o := r.outputs(t, tag, g)
			logits := slices.Clone(o.Logits)
			labels := slices.Clone(o.Labels)
			sm := ComputeFeatures(o, MEntropySongMittal)
			sc := ComputeFeatures(o, MEntropySalUnCode)
			if !slices.Equal(logits, o.Logits) || !slices.Equal(labels, o.Labels) {
				t.Fatal("ComputeFeatures modified its input")
			}
			cases := []struct {
				name string
				got  []float64
			}{
				{"correctness", sm.Correctness},
				{"confidence", sm.Confidence},
				{"entropy", sm.Entropy},
				{"m_entropy", sm.MEntropy},
				{"m_entropy_salun", sc.MEntropy},
				{"prob", sm.Prob},
			}
			for _, c := range cases {
				want := r.array(t, tag+"_feat_"+c.name+"_"+g).Float64s()
				if len(want) != len(c.got) {
					t.Fatalf("%s %s %s: %d values, reference %d", tag, g, c.name, len(c.got), len(want))
				}
				worst, at := 0.0, 0
				for i := range want {
					e := math.Abs(c.got[i]-want[i]) / math.Max(1, math.Abs(want[i]))
					if e > worst || math.IsNaN(e) {
						worst, at = e, i
					}
				}
				if !(worst <= tol) {
					t.Errorf("%s %s %s: error %.3g at %d (go %v, numpy %v)", tag, g, c.name, worst, at, c.got[at], want[at])
				}
			}
			// The loss is −log p_y: checked against the float64 losses.
			if g != "members" {
				key := map[string]string{"nonmembers": "_lr_losses_test", "forget": "_lr_losses_forget"}[g]
				want := r.array(t, tag+key).Float64s()
				ce := CrossEntropy(o)
				for i := range want {
					if math.Abs(sm.Loss[i]-want[i]) > 1e-12*math.Max(1, want[i]) || ce[i] != sm.Loss[i] {
						t.Fatalf("%s %s loss %d: go %v / %v, numpy %v", tag, g, i, sm.Loss[i], ce[i], want[i])
					}
				}
			}
		}
	}
}

func TestSVCMIAMatchesSklearn(t *testing.T) {
	r := loadMIARef(t)
	for _, tag := range miaTags {
		in, out, tgt := r.outputs(t, tag, "members"), r.outputs(t, tag, "nonmembers"), r.outputs(t, tag, "forget")
		ref := r.meta.Models[tag]
		for _, v := range []MEntropyVariant{MEntropySongMittal, MEntropySalUnCode} {
			res, err := SVCMIA(in, out, tgt, MIAOptions{MEntropy: v})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range Features {
				name := f.String()
				if v == MEntropySalUnCode {
					if f != MEntropy {
						continue
					}
					name = "m_entropy_salun"
				}
				want := r.array(t, tag+"_svcpred_"+name).U8
				diff := 0
				for i, p := range res.Predictions[f] {
					if p != int(want[i]) {
						diff++
					}
				}
				n := float64(tgt.Len())
				t.Logf("%s %-16s go %.4f sklearn %.4f (%d of %d predictions differ, %d SVs, sklearn %d)",
					tag, name, res.Scores[f], ref.SVCMIA[name], diff, tgt.Len(), res.NumSV[f], ref.NSupport[name])
				// Acceptance: the score within one example of scikit-learn's.
				if math.Abs(res.Scores[f]-ref.SVCMIA[name]) > 1/n+1e-12 || diff > 1 {
					t.Errorf("%s %s: score %.4f, sklearn %.4f; %d predictions differ", tag, name, res.Scores[f], ref.SVCMIA[name], diff)
				}
				// SalUn's own code path (torch float32, its m_entropy as
				// written) gives the same scores here: compare each variant
				// with what it reproduces.
				st, ok := ref.SalUnTorch[f.String()]
				if f == MEntropy && v == MEntropySongMittal {
					ok = false // SalUn's m_entropy is the other variant
				}
				if ok && math.Abs(res.Scores[f]-st) > 2/n+1e-12 {
					t.Errorf("%s %s: score %.4f, SalUn's torch path %.4f", tag, name, res.Scores[f], st)
				}
			}
		}
	}
}

func TestLossAttackSameFoldsAsSklearn(t *testing.T) {
	r := loadMIARef(t)
	for _, tag := range miaTags {
		lf := CrossEntropy(r.outputs(t, tag, "forget"))
		lt := CrossEntropy(r.outputs(t, tag, "nonmembers"))
		subF, subT := r.ints(t, tag+"_lr_sub_forget"), r.ints(t, tag+"_lr_sub_test")
		var x []float64
		var y []int
		for _, i := range subT {
			x, y = append(x, lt[i]), append(y, 0)
		}
		for _, i := range subF {
			x, y = append(x, lf[i]), append(y, 1)
		}
		mask := r.array(t, tag+"_lr_test_mask")
		nSplit, n := mask.Shape[0], mask.Shape[1]
		if n != len(x) {
			t.Fatalf("%s: mask for %d samples, have %d", tag, n, len(x))
		}
		splits := make([]CVSplit, nSplit)
		for s := range splits {
			for i := range n {
				if mask.U8[s*n+i] == 1 {
					splits[s].Test = append(splits[s].Test, i)
				} else {
					splits[s].Train = append(splits[s].Train, i)
				}
			}
		}
		folds, models, err := CrossValidateLogReg(x, y, splits, 1)
		if err != nil {
			t.Fatal(err)
		}
		coef := r.array(t, tag+"_lr_coef").F64
		ref := r.meta.Models[tag]
		var mean float64
		for s := range folds {
			mean += folds[s] / float64(len(folds))
			nTest := float64(len(splits[s].Test))
			// scikit-learn's lbfgs stops at gradient 1e-4: the optimum agrees
			// to about that, and a test loss within that of the threshold may
			// flip, hence one example of slack.
			if math.Abs(folds[s]-ref.LossFolds[s]) > 1/nTest+1e-12 {
				t.Errorf("%s split %d: accuracy %.4f, sklearn %.4f", tag, s, folds[s], ref.LossFolds[s])
			}
			w, b := coef[2*s], coef[2*s+1]
			if !testutil.CloseAbsRel(models[s].W, w, 1e-4, 1e-3) || !testutil.CloseAbsRel(models[s].B, b, 1e-4, 1e-3) {
				t.Errorf("%s split %d: W %.8f B %.8f, sklearn %.8f %.8f", tag, s, models[s].W, models[s].B, w, b)
			}
		}
		want := r.meta.Models[tag].SVCMIA["loss_lr"]
		t.Logf("%s: loss attack on sklearn's folds %.5f, sklearn %.5f", tag, mean, want)
		if math.Abs(mean-want) > 1.0/80+1e-12 {
			t.Errorf("%s: mean %.5f, sklearn %.5f", tag, mean, want)
		}

		// Our own subsample and folds: the same attack on other random
		// partitions. Over 10 splits of 80 test samples the mean's standard
		// deviation is about 0.02 near chance, so 0.06 is three of them.
		la, err := LossAttack(lf, lt, MIAOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: loss attack on our folds %.5f (per class %d)", tag, la.Score, la.PerClass)
		if la.PerClass != 400 || len(la.Folds) != 10 || math.Abs(la.Score-want) > 0.06 {
			t.Errorf("%s: own folds score %.4f (n %d, %d folds), sklearn %.4f", tag, la.Score, la.PerClass, len(la.Folds), want)
		}
	}
}

func TestFitLogReg1DOptimum(t *testing.T) {
	// At the optimum the gradient vanishes: Σ (σ(zᵢ) − yᵢ)·xᵢ + W/C = 0 and
	// Σ (σ(zᵢ) − yᵢ) = 0.
	cases := []struct {
		name string
		x    []float64
		y    []int
		c    float64
	}{
		{"overlap", []float64{0.1, 0.5, 0.9, 1.3, 0.2, 1.5, 2.0, 2.2, 0.8, 1.9}, []int{0, 0, 0, 0, 1, 1, 1, 1, 1, 0}, 1},
		{"separable", []float64{-3, -2, -1, 1, 2, 3}, []int{0, 0, 0, 1, 1, 1}, 1},
		{"separable weak penalty", []float64{-3, -2, -1, 1, 2, 3}, []int{0, 0, 0, 1, 1, 1}, 1e4},
		{"constant x", []float64{2, 2, 2, 2, 2}, []int{0, 1, 1, 0, 1}, 1},
		{"large x", []float64{1e3, 2e3, 3e3, 4e3}, []int{0, 1, 0, 1}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := FitLogReg1D(c.x, c.y, c.c)
			if err != nil {
				t.Fatal(err)
			}
			gw, gb := m.W/c.c, 0.0
			for i, x := range c.x {
				r := sigmoid(m.W*x+m.B) - float64(c.y[i])
				gw += r * x
				gb += r
			}
			scale := 1.0
			for _, x := range c.x {
				scale = math.Max(scale, math.Abs(x))
			}
			if math.Abs(gw) > 1e-8*scale*float64(len(c.x)) || math.Abs(gb) > 1e-8*float64(len(c.x)) {
				t.Errorf("gradient (%.3g, %.3g) at W %v B %v after %d iterations", gw, gb, m.W, m.B, m.Iterations)
			}
		})
	}
	if _, err := FitLogReg1D([]float64{1, 2}, []int{1, 1}, 1); err == nil {
		t.Error("one label accepted")
	}
	if _, err := FitLogReg1D([]float64{1, math.NaN()}, []int{0, 1}, 1); err == nil {
		t.Error("NaN accepted")
	}
}

func TestStratifiedShuffleSplit(t *testing.T) {
	y := make([]int, 0, 110)
	for i := range 110 {
		y = append(y, min(1, i%3)) // 37 zeros, 73 ones
	}
	rng := func() *rand.Rand { return rand.New(rand.NewPCG(7, 7)) }
	a, err := StratifiedShuffleSplit(y, 10, 0.1, rng())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := StratifiedShuffleSplit(y, 10, 0.1, rng())
	for s, sp := range a {
		if len(sp.Test) != 11 || len(sp.Train) != 99 {
			t.Fatalf("split %d: %d train %d test", s, len(sp.Train), len(sp.Test))
		}
		var ones int
		seen := map[int]bool{}
		for _, i := range sp.Test {
			ones += y[i]
			seen[i] = true
		}
		for _, i := range sp.Train {
			if seen[i] {
				t.Fatalf("split %d: %d in train and test", s, i)
			}
		}
		if ones != 7 && ones != 8 { // 73·11/110 = 7.3
			t.Errorf("split %d: %d ones among 11 test samples", s, ones)
		}
		if !slices.Equal(sp.Test, b[s].Test) {
			t.Error("same seed, different splits")
		}
	}
	if slices.Equal(a[0].Test, a[1].Test) {
		t.Error("splits repeat")
	}
	if _, err := StratifiedShuffleSplit([]int{0, 1, 1}, 10, 0.1, rng()); err == nil {
		t.Error("3 samples split")
	}
}

func TestSVCMIABadInput(t *testing.T) {
	r := loadMIARef(t)
	in, out, tgt := r.outputs(t, "model", "members"), r.outputs(t, "model", "nonmembers"), r.outputs(t, "model", "forget")
	empty := Outputs{Classes: 10}
	if _, err := MIA(empty, out, tgt, MIAOptions{}); !errors.Is(err, ErrNoRetain) {
		t.Errorf("no members: %v", err)
	}
	if _, err := MIA(in, empty, tgt, MIAOptions{}); !errors.Is(err, ErrNoTest) {
		t.Errorf("no non-members: %v", err)
	}
	if _, err := MIA(in, out, empty, MIAOptions{}); !errors.Is(err, ErrEmptyForget) {
		t.Errorf("no target: %v", err)
	}
	nan := tgt.Subset([]int{0, 1, 2})
	nan.Logits[3] = float32(math.NaN())
	if _, err := MIA(in, out, nan, MIAOptions{}); !errors.Is(err, ErrNonFinite) {
		t.Errorf("NaN logits: %v", err)
	}
	// A tiny forget set: the SVC scores exist, the loss attack cannot split.
	res, err := MIA(in, out, tgt.Subset([]int{0, 1}), MIAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Scores.LossLR != nil || res.LossNote == "" {
		t.Errorf("loss attack on 2 examples: %v %q", res.Scores.LossLR, res.LossNote)
	}
}

// TestSVCNonMembersMatchesSklearn: the one-feature, per-example form calls
// non-member exactly the examples scikit-learn's SVC calls non-member (at
// most one prediction apart, SVCMIA's bound).
func TestSVCNonMembersMatchesSklearn(t *testing.T) {
	r := loadMIARef(t)
	for _, tag := range miaTags {
		in, out, tgt := r.outputs(t, tag, "members"), r.outputs(t, tag, "nonmembers"), r.outputs(t, tag, "forget")
		for _, f := range []Feature{Confidence, Entropy} {
			got, err := SVCNonMembers(in, out, tgt, f, MIAOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := r.array(t, tag+"_svcpred_"+f.String()).U8
			diff := 0
			for i, g := range got {
				if g != 1-int(want[i]) {
					diff++
				}
			}
			if len(got) != tgt.Len() || diff > 1 {
				t.Errorf("%s %s: %d verdicts, %d differ from scikit-learn's", tag, f, len(got), diff)
			}
		}
	}
	if _, err := SVCNonMembers(Outputs{}, Outputs{}, Outputs{}, Confidence, MIAOptions{}); err == nil {
		t.Error("empty groups accepted")
	}
}

// TestSalUnCodeMEntropyUnderflow: issue 47, item 4. SalUn's m_entropy runs
// on a float32 softmax, so for logits [0, 150, 0, …] (10 classes) every
// class but the arg-max gets p = exp(−150) = 0 in float32 and its log is
// replaced by log(1e-30). With true label 0 alone in its group (L = {0})
// SalUn's code gives −(1 − 0)·log(1e-30) = 69.0776; salun-code computed in
// float64 (before this test) gave −(1 − p_0)·log p_0 = 150. With label 1
// (the arg-max) SalUn's value is exactly 0: p_1 = 1, every other p is 0.
func TestSalUnCodeMEntropyUnderflow(t *testing.T) {
	row := func(gap float32) []float32 {
		z := make([]float32, 10)
		z[1] = gap
		return z
	}
	salun := -float64(logEps32) // 69.07755…
	if math.Abs(salun-69.07755278982137) > 1e-5 {
		t.Fatalf("float32 log(1e-30) = %v", salun)
	}
	for _, c := range []struct {
		name   string
		logits []float32
		labels []int
		want   []float64
		tol    float64
	}{
		// The input: the true class 150 below the arg-max.
		{"label 0", row(150), []int{0}, []float64{salun}, 0},
		{"label 1", row(150), []int{1}, []float64{0}, 0},
		// In one group L = {0, 1}: both rows get the (1 − p)·log p terms
		// of classes 0 and 1, 69.08 + 0.
		{"one group", append(row(150), row(150)...), []int{0, 1}, []float64{salun, salun}, 0},
		// Below the float32 underflow (gap 100 < ~103.97) p_0 is a
		// subnormal, positive: −log p_0 ≈ 100 (to the subnormal's
		// precision), as in float64.
		{"gap 100", row(100), []int{0}, []float64{100}, 0.05},
		{"gap 105", row(105), []int{0}, []float64{salun}, 0},
	} {
		o := Outputs{Logits: c.logits, Labels: c.labels, Classes: 10}
		got := ComputeFeatures(o, MEntropySalUnCode).MEntropy
		for i, w := range c.want {
			if math.Abs(got[i]-w) > c.tol {
				t.Errorf("%s, row %d: salun-code m-entropy %v, SalUn's float32 code %v", c.name, i, got[i], w)
			}
		}
	}
}
