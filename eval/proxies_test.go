package eval

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/schema"
)

// proxyRef is testdata/proxies/ref.json, written by make_proxies_ref.py.
type proxyRef struct {
	Classes int     `json:"classes"`
	Alpha   float64 `json:"alpha"`
	Cases   map[string]struct {
		Reference struct {
			IID       bool      `json:"iid"`
			ChiSquare float64   `json:"chi_square"`
			DoF       int       `json:"dof"`
			Critical  float64   `json:"critical"`
			Classes   []int     `json:"classes"`
			Weights   []float64 `json:"weights"`
			NTest     int       `json:"n_test"`
			Test      []int     `json:"test"`
		} `json:"reference"`
		Proxies schema.Proxies `json:"proxies"`
		MIA     []struct {
			Feature string  `json:"feature"`
			F       float64 `json:"forget"`
			R       float64 `json:"reference"`
			H       float64 `json:"holdout"`
		} `json:"mia"`
		Matched float64 `json:"matched_accuracy"`
	} `json:"cases"`
}

func ints(t *testing.T, a *data.Array) []int {
	t.Helper()
	v, err := a.Ints()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The proxies agree with an independent NumPy/SciPy/scikit-learn
// computation (testdata/proxies/make_proxies_ref.py) on synthetic logits:
// the IID decision and its χ² statistic, the reference examples and
// weights, every accuracy and loss, and the MIA scores of two features
// within one example of each group (all agree exactly).
func TestProxiesMatchNumPy(t *testing.T) {
	arr, err := data.ReadNPZ(testutil.Testdata(t, "proxies", "ref.npz"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(testutil.Testdata(t, "proxies", "ref.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref proxyRef
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	trainY, testY := ints(t, arr["train_labels"]), ints(t, arr["test_labels"])
	train := Outputs{Logits: arr["train_logits"].Float32s(), Labels: trainY, Classes: ref.Classes}
	test := Outputs{Logits: arr["test_logits"].Float32s(), Labels: testY, Classes: ref.Classes}
	if len(ref.Cases) != 4 {
		t.Fatalf("%d cases", len(ref.Cases))
	}
	close := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-12*max(1, math.Abs(want)) {
			t.Errorf("%s = %.15g, NumPy %.15g", what, got, want)
		}
	}
	for name, c := range ref.Cases {
		t.Run(name, func(t *testing.T) {
			forget, holdout := ints(t, arr[name+"_forget"]), ints(t, arr[name+"_holdout"])
			pr, err := NewProxyReference(trainY, testY, forget, ref.Classes, ref.Alpha)
			if err != nil {
				t.Fatal(err)
			}
			want := c.Reference
			if pr.IID != want.IID || pr.DoF != want.DoF || pr.NTest != want.NTest || !slices.Equal(pr.Test, want.Test) || !slices.Equal(pr.Classes, want.Classes) {
				t.Fatalf("reference %+v, NumPy %+v", pr, want)
			}
			close("chi_square", pr.ChiSquare, want.ChiSquare)
			if math.Abs(pr.Critical-want.Critical) > 1e-9 {
				t.Errorf("critical %.12g, SciPy %.12g", pr.Critical, want.Critical)
			}
			for k := range want.Weights {
				close("weight", pr.Weights[k], want.Weights[k])
			}
			for _, m := range c.MIA {
				p, err := ComputeProxies(train.Subset(forget), train.Subset(holdout), test.Subset(pr.Test), pr, ProxyOptions{Feature: m.Feature})
				if err != nil {
					t.Fatal(err)
				}
				w := c.Proxies
				close("holdout_accuracy", p.HoldoutAccuracy, w.HoldoutAccuracy)
				close("holdout_loss", p.HoldoutLoss, w.HoldoutLoss)
				close("forget_accuracy", p.ForgetAccuracy, w.ForgetAccuracy)
				close("forget_loss", p.ForgetLoss, w.ForgetLoss)
				close("reference_accuracy", p.ReferenceAccuracy, w.ReferenceAccuracy)
				close("reference_loss", p.ReferenceLoss, w.ReferenceLoss)
				close("forget_gap", p.ForgetGap, w.ForgetGap)
				if p.MIA == nil || p.MIA.Feature != m.Feature {
					t.Fatalf("MIA %+v", p.MIA)
				}
				for _, g := range []struct {
					name      string
					got, want float64
					n         int
				}{{"forget", p.MIA.Forget, m.F, len(forget)}, {"reference", p.MIA.Reference, m.R, pr.NTest}, {"holdout", p.MIA.Holdout, m.H, len(holdout)}} {
					if math.Abs(g.got-g.want)*float64(g.n) > 1+1e-9 {
						t.Errorf("MIA %s %s = %.4f, scikit-learn %.4f", m.Feature, g.name, g.got, g.want)
					} else if g.got != g.want {
						t.Logf("MIA %s %s = %.4f, scikit-learn %.4f (one example apart)", m.Feature, g.name, g.got, g.want)
					}
				}
			}
			got, ok, err := MatchedAccuracy(test, train.Subset(holdout).Labels)
			if err != nil || !ok {
				t.Fatal(ok, err)
			}
			close("matched_accuracy", got, c.Matched)
		})
	}
}

// The reference's edge cases: one class in training (IID by definition),
// forget classes without test examples (fallback), bad input.
func TestProxyReferenceEdges(t *testing.T) {
	r, err := NewProxyReference([]int{0, 0, 0}, []int{0, 0}, []int{1}, 1, 0)
	if err != nil || !r.IID || r.DoF != 0 || r.NTest != 2 || r.Alpha != DefaultIIDAlpha {
		t.Errorf("one class: %+v %v", r, err)
	}
	train := make([]int, 100)
	for i := range train {
		train[i] = i % 4
	}
	forget := []int{3, 7, 11, 15, 19, 23, 27, 31, 35, 39} // all class 3
	r, err = NewProxyReference(train, []int{0, 1, 2, 0}, forget, 4, 0)
	if err != nil || r.IID || len(r.Classes) != 0 || r.NTest != 4 || r.Note == "" {
		t.Errorf("no test example of the forget classes: %+v %v", r, err)
	}
	r, err = NewProxyReference(train, []int{0, 1, 2, 3, 3}, forget, 4, 0)
	if err != nil || r.IID || !slices.Equal(r.Classes, []int{3}) || !slices.Equal(r.Test, []int{3, 4}) || r.Weights[0] != 1 {
		t.Errorf("one forget class: %+v %v", r, err)
	}
	for _, c := range []struct {
		name                string
		train, test, forget []int
		classes             int
		alpha               float64
		want                error
	}{
		{"empty forget", train, []int{0}, nil, 4, 0, ErrEmptyForget},
		{"no test", train, nil, forget, 4, 0, ErrNoTest},
		{"forget id", train, []int{0}, []int{100}, 4, 0, ErrShape},
		{"label", train, []int{4}, forget, 4, 0, ErrShape},
		{"alpha", train, []int{0}, forget, 4, 1, ErrShape},
	} {
		if _, err := NewProxyReference(c.train, c.test, c.forget, c.classes, c.alpha); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	o := Outputs{Logits: []float32{1, 0, 0, 1}, Labels: []int{0, 1}, Classes: 2}
	ref := &schema.ProxyReference{IID: true, Test: []int{0, 1}, NTest: 2}
	if _, err := ComputeProxies(o, Outputs{Classes: 2}, o, ref, ProxyOptions{}); !errors.Is(err, ErrNoRetain) {
		t.Errorf("empty held-out slice: %v", err)
	}
	if _, err := ComputeProxies(o, o, o, ref, ProxyOptions{Feature: "loss"}); !errors.Is(err, ErrShape) {
		t.Errorf("unknown feature: %v", err)
	}
	bad := Outputs{Logits: []float32{float32(math.NaN()), 0, 0, 1}, Labels: []int{0, 1}, Classes: 2}
	if _, err := ComputeProxies(bad, o, o, ref, ProxyOptions{}); !errors.Is(err, ErrNonFinite) {
		t.Errorf("NaN logits: %v", err)
	}
	p, err := ComputeProxies(o, o, o, ref, ProxyOptions{NoMIA: true})
	if err != nil || p.MIA != nil || p.ForgetAccuracy != 1 || p.ForgetGap != 0 {
		t.Errorf("no MIA: %+v %v", p, err)
	}
}
