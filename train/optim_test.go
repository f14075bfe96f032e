package train

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/internal/testutil"
)

type optimRef struct {
	P0    []float64   `json:"p0"`
	Grads [][]float64 `json:"grads"`
	Mask  []float64   `json:"mask"`
	Cases map[string]struct {
		Config map[string]any `json:"config"`
		Traj   [][]float64    `json:"traj"`
	} `json:"cases"`
	Cosine struct {
		LR, Floor float64
		Total     int
		LRs       []float64
	} `json:"cosine"`
	Step struct {
		LR    float64
		Step  int
		Gamma float64
		LRs   []float64
	} `json:"step"`
}

func loadOptimRef(t *testing.T) *optimRef {
	b, err := os.ReadFile(testutil.Testdata(t, "ref", "optim.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r optimRef
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

func f32(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

func makeOpt(cfg map[string]any) Optimizer {
	num := func(k string) float64 { v, _ := cfg[k].(float64); return v }
	if cfg["kind"] == "sgd" {
		return &SGD{Momentum: num("momentum"), Nesterov: cfg["nesterov"] == true, WeightDecay: num("weight_decay")}
	}
	b := cfg["betas"].([]any)
	return &Adam{Beta1: b[0].(float64), Beta2: b[1].(float64), Eps: num("eps"), WeightDecay: num("weight_decay")}
}

// The trajectories are PyTorch's (float64); ours run in float32, hence the
// tolerance 1e-5 relative.
func TestOptimizersMatchPyTorch(t *testing.T) {
	r := loadOptimRef(t)
	for name, c := range r.Cases {
		t.Run(name, func(t *testing.T) {
			opt := makeOpt(c.Config)
			p := &Param{Name: "w", Data: f32(r.P0)}
			for s, g := range r.Grads {
				p.Grad = f32(g)
				if err := opt.Step([]*Param{p}, c.Config["lr"].(float64)); err != nil {
					t.Fatal(err)
				}
				for i, want := range c.Traj[s] {
					if !testutil.CloseAbsRel(float64(p.Data[i]), want, 1e-6, 1e-5) {
						t.Fatalf("step %d element %d: %v, PyTorch %v", s, i, p.Data[i], want)
					}
				}
			}
		})
	}
}

// Masked-out elements never change by a single bit; masked-in elements follow
// exactly the unmasked trajectory (the optimizers are elementwise).
func TestMaskBitIdentity(t *testing.T) {
	r := loadOptimRef(t)
	for name, c := range r.Cases {
		t.Run(name, func(t *testing.T) {
			full, masked := makeOpt(c.Config), makeOpt(c.Config)
			pf := &Param{Name: "w", Data: f32(r.P0)}
			pm := &Param{Name: "w", Data: f32(r.P0), Mask: make([]bool, len(r.P0))}
			for i, m := range r.Mask {
				pm.Mask[i] = m > 0
			}
			orig := f32(r.P0)
			for _, g := range r.Grads {
				pf.Grad, pm.Grad = f32(g), f32(g)
				lr := c.Config["lr"].(float64)
				if err := full.Step([]*Param{pf}, lr); err != nil {
					t.Fatal(err)
				}
				if err := masked.Step([]*Param{pm}, lr); err != nil {
					t.Fatal(err)
				}
			}
			for i := range orig {
				if pm.Mask[i] {
					if pm.Data[i] != pf.Data[i] {
						t.Errorf("element %d: masked run %v, full run %v", i, pm.Data[i], pf.Data[i])
					}
				} else if math.Float32bits(pm.Data[i]) != math.Float32bits(orig[i]) {
					t.Errorf("frozen element %d changed: %v → %v", i, orig[i], pm.Data[i])
				}
			}
		})
	}
}

func TestFrozenParamUntouched(t *testing.T) {
	p := &Param{Name: "w", Data: []float32{1, 2}, Grad: []float32{1, 1}, Frozen: true}
	opt := &SGD{Momentum: 0.9, WeightDecay: 0.1}
	for i := 0; i < 3; i++ {
		if err := opt.Step([]*Param{p}, 0.1); err != nil {
			t.Fatal(err)
		}
	}
	if p.Data[0] != 1 || p.Data[1] != 2 {
		t.Fatalf("frozen param changed: %v", p.Data)
	}
}

func TestSchedulesMatchPyTorch(t *testing.T) {
	r := loadOptimRef(t)
	cos := Cosine{Base: r.Cosine.LR, Floor: r.Cosine.Floor}
	for i, want := range r.Cosine.LRs {
		if got := cos.LR(i, r.Cosine.Total); !testutil.CloseAbsRel(got, want, 1e-12, 1e-9) {
			t.Errorf("cosine step %d: %v, PyTorch %v", i, got, want)
		}
	}
	st := StepDecay{Base: r.Step.LR, Every: r.Step.Step, Gamma: r.Step.Gamma}
	for i, want := range r.Step.LRs {
		if got := st.LR(i, 10); !testutil.CloseAbsRel(got, want, 1e-12, 1e-9) {
			t.Errorf("step schedule %d: %v, PyTorch %v", i, got, want)
		}
	}
}

func TestClipGradNorm(t *testing.T) {
	p := &Param{Name: "w", Data: make([]float32, 2), Grad: []float32{3, 4}}
	if n := ClipGradNorm([]*Param{p}, 1); math.Abs(n-5) > 1e-9 {
		t.Fatalf("norm %v, want 5", n)
	}
	got := math.Hypot(float64(p.Grad[0]), float64(p.Grad[1]))
	if math.Abs(got-1) > 1e-5 {
		t.Fatalf("clipped norm %v, want 1", got)
	}
}

func TestCheckFinite(t *testing.T) {
	p := &Param{Name: "conv.weight", Grad: []float32{0, float32(math.NaN())}}
	err := CheckFinite([]*Param{p})
	if err == nil || !strings.Contains(err.Error(), "conv.weight") || !strings.Contains(err.Error(), "element 1") {
		t.Fatalf("got %v", err)
	}
}

func TestNesterovNeedsMomentum(t *testing.T) {
	p := &Param{Name: "w", Data: []float32{1}, Grad: []float32{1}}
	if err := (&SGD{Nesterov: true}).Step([]*Param{p}, 0.1); err == nil {
		t.Fatal("Nesterov without momentum must be refused")
	}
}

// TestOptimizerThreadsBitIdentical: the update split over goroutines gives
// the same bits as on one (a tensor large enough to be split, with a mask,
// weight decay and momentum), and masked-out elements do not change.
func TestOptimizerThreadsBitIdentical(t *testing.T) {
	const n = 200_003
	mk := func() []*Param {
		p := &Param{Name: "w", Data: make([]float32, n), Grad: make([]float32, n), Mask: make([]bool, n)}
		for i := range n {
			p.Data[i] = float32(math.Sin(float64(i)))
			p.Grad[i] = float32(math.Cos(float64(3 * i)))
			p.Mask[i] = i%7 != 0
		}
		return []*Param{p}
	}
	for _, tc := range []struct {
		name string
		opt  func(threads int) Optimizer
	}{
		{"sgd-nesterov", func(th int) Optimizer {
			return &SGD{Momentum: 0.9, Nesterov: true, WeightDecay: 5e-4, Threads: th}
		}},
		{"sgd-dampening", func(th int) Optimizer { return &SGD{Momentum: 0.5, Dampening: 0.1, Threads: th} }},
		{"adam", func(th int) Optimizer { return &Adam{WeightDecay: 1e-2, Threads: th} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			one, many := mk(), mk()
			o1, o4 := tc.opt(1), tc.opt(4)
			for step := 0; step < 3; step++ {
				if err := o1.Step(one, 0.1); err != nil {
					t.Fatal(err)
				}
				if err := o4.Step(many, 0.1); err != nil {
					t.Fatal(err)
				}
			}
			orig := mk()[0].Data
			changed := 0
			for i := range n {
				if math.Float32bits(one[0].Data[i]) != math.Float32bits(many[0].Data[i]) {
					t.Fatalf("element %d: 1 thread %v, 4 threads %v", i, one[0].Data[i], many[0].Data[i])
				}
				if !one[0].Mask[i] && math.Float32bits(many[0].Data[i]) != math.Float32bits(orig[i]) {
					t.Fatalf("masked element %d changed: %v -> %v", i, orig[i], many[0].Data[i])
				}
				if many[0].Data[i] != orig[i] {
					changed++
				}
			}
			if changed < n/2 {
				t.Errorf("only %d of %d elements changed", changed, n)
			}
		})
	}
}
