package eval

import (
	"errors"
	"math"
	"testing"
)

// The prior-shift estimate on hand-made logits whose answer is known: the
// shift is log(π'_c/π_c), a removed class is never predicted, and an IID
// forget set (class shares unchanged) leaves the predictions alone.
func TestEstimateOracle(t *testing.T) {
	// Training split: 4 examples of class 0, 4 of class 1, 2 of class 2.
	train := []int{0, 0, 0, 0, 1, 1, 1, 1, 2, 2}
	// Test: three examples; logits (3 classes).
	test := Outputs{Classes: 3, Labels: []int{0, 1, 2}, Logits: []float32{
		1.0, 0.8, 0, // class 0 by 0.2
		0.5, 1.0, 0, // class 1 by 0.5
		0, 0.9, 1.0, // class 2 by 0.1
	}}
	// Forget 2 of class 0: π_0 = 0.4 → π'_0 = 2/8 = 0.25, π'_1 = 0.5 (from
	// 0.4), π'_2 = 0.25 (from 0.2). Class 0 loses half, the split a fifth:
	// thinned.
	est, err := EstimateOracle(test, train, []int{0, 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{math.Log(0.25 / 0.4), math.Log(0.5 / 0.4), math.Log(0.25 / 0.2)}
	for c, w := range want {
		if math.Abs(est.Shift[c]-w) > 1e-12 {
			t.Errorf("shift[%d] = %v, want %v", c, est.Shift[c], w)
		}
	}
	// Shifted: row 0: 1.0−0.470 = 0.530 vs 0.8+0.223 = 1.023 → class 1
	// (wrong); row 1: class 1 (right); row 2: 0.9+0.223 = 1.123 vs
	// 1.0+0.223 = 1.223 → class 2 (right).
	if math.Abs(est.TestAccuracy-2.0/3) > 1e-12 || math.Abs(est.ReferenceAccuracy-est.TestAccuracy) > 1e-12 {
		t.Errorf("accuracy %v / %v, want 2/3 for both (no reference: the whole test split)", est.TestAccuracy, est.ReferenceAccuracy)
	}
	if math.Abs(est.MaxShift-math.Abs(want[0])) > 1e-12 || est.Method != OracleEstimateMethod {
		t.Errorf("max shift %v, method %q", est.MaxShift, est.Method)
	}
	if len(est.Partial) != 1 || est.Partial[0] != 0 || est.PartialKept != 2 || len(est.Removed) != 0 {
		t.Errorf("partial %v, removed %v; want class 0 thinned (half of it), none removed", est.Partial, est.Removed)
	}
	// A non-IID reference: the forget set's classes weighted like it (here
	// class 0 alone, whose one test row the shift gets wrong).
	ref, err := NewProxyReference(train, test.Labels, []int{0, 1}, 3, 0.5)
	if err != nil || ref.IID {
		t.Fatalf("reference %+v, %v", ref, err)
	}
	if est, err = EstimateOracle(test, train, []int{0, 1}, ref); err != nil || est.ReferenceAccuracy != 0 {
		t.Errorf("reference accuracy %v (%v), want 0", est.ReferenceAccuracy, err)
	}

	// The whole of class 2 forgotten: never predicted, shift reported 0.
	est, err = EstimateOracle(test, train, []int{8, 9}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(est.Removed) != 1 || est.Removed[0] != 2 || est.Shift[2] != 0 || len(est.Partial) != 0 {
		t.Errorf("removed %v, shift %v", est.Removed, est.Shift)
	}
	// Rows 0 and 1 keep their class (both shifted by log(1.25)); row 2
	// cannot be class 2: accuracy 2/3.
	if math.Abs(est.TestAccuracy-2.0/3) > 1e-12 {
		t.Errorf("accuracy %v, want 2/3", est.TestAccuracy)
	}

	// IID: one example of each class of a balanced split → no shift, and
	// no class thinned more than the split.
	bal := []int{0, 0, 1, 1, 2, 2}
	est, err = EstimateOracle(test, bal, []int{0, 2, 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if est.MaxShift > 1e-12 || est.TestAccuracy != 1 || len(est.Partial) != 0 {
		t.Errorf("IID: max shift %v, accuracy %v; want 0 and 1", est.MaxShift, est.TestAccuracy)
	}

	for _, c := range []struct {
		forget []int
		train  []int
		want   error
	}{
		{nil, train, ErrEmptyForget},
		{[]int{10}, train, ErrShape},
		{[]int{0, 1}, []int{0, 5}, ErrShape},
		{[]int{0, 1}, []int{0, 1}, ErrNoRetain},
	} {
		if _, err := EstimateOracle(test, c.train, c.forget, nil); !errors.Is(err, c.want) {
			t.Errorf("forget %v, train %v: error %v, want %v", c.forget, c.train, err, c.want)
		}
	}
}
