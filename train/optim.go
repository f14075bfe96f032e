package train

import (
	"errors"
	"fmt"
	"math"
	"runtime"

	"github.com/unlearn-tool/unlearn/internal/par"
)

// Param is one trainable tensor held in Go memory: Data is updated in place
// by optimizers (and is what a runtime session reads as its input), Grad is
// where the gradient of the current step is found.
type Param struct {
	Name string
	Data []float32
	Grad []float32
	// Mask selects the elements that may change (nil: all of them). An element
	// whose mask is false never changes by a single bit: no weight decay, no
	// momentum, no update.
	Mask []bool
	// Frozen excludes the whole tensor from updates.
	Frozen bool
}

// Validate checks lengths.
func (p *Param) Validate() error {
	if len(p.Grad) != len(p.Data) {
		return fmt.Errorf("param %q: %d gradient values for %d weights", p.Name, len(p.Grad), len(p.Data))
	}
	if p.Mask != nil && len(p.Mask) != len(p.Data) {
		return fmt.Errorf("param %q: mask of %d for %d weights", p.Name, len(p.Mask), len(p.Data))
	}
	return nil
}

// Optimizer updates parameters from their gradients.
type Optimizer interface {
	// Step applies one update with learning rate lr.
	Step(params []*Param, lr float64) error
	Name() string
}

// SGD is PyTorch's torch.optim.SGD: g ← grad + wd·θ; buf ← g on the first
// step, else μ·buf + (1−dampening)·g; with Nesterov g ← g + μ·buf, else g ← buf;
// θ ← θ − lr·g. Arithmetic is in float32 like PyTorch's float32 parameters.
type SGD struct {
	Momentum    float64
	Dampening   float64
	Nesterov    bool
	WeightDecay float64
	// Threads is how many goroutines share the update of a large tensor
	// (0: GOMAXPROCS). Every element is updated on its own, so the result
	// does not depend on it.
	Threads int

	bufs map[string][]float32
}

// Name implements Optimizer.
func (o *SGD) Name() string { return "sgd" }

// Step implements Optimizer.
func (o *SGD) Step(params []*Param, lr float64) error {
	if o.Nesterov && (o.Momentum <= 0 || o.Dampening != 0) {
		return errors.New("sgd: Nesterov momentum requires momentum > 0 and zero dampening")
	}
	if o.bufs == nil {
		o.bufs = map[string][]float32{}
	}
	mu, damp, wd, lr32 := float32(o.Momentum), float32(1-o.Dampening), float32(o.WeightDecay), float32(lr)
	for _, p := range params {
		if p.Frozen {
			continue
		}
		if err := p.Validate(); err != nil {
			return err
		}
		var buf []float32
		first := false
		if mu != 0 {
			buf = o.bufs[p.Name]
			if buf == nil {
				buf = make([]float32, len(p.Data))
				o.bufs[p.Name] = buf
				first = true
			}
		}
		parallelRange(len(p.Data), o.Threads, func(lo, hi int) {
			sgdUpdate(p, buf, lo, hi, first, mu, damp, wd, lr32, o.Nesterov)
		})
	}
	return nil
}

// sgdUpdate applies SGD's update to p's elements [lo, hi). The common cases
// (momentum after the first step, no Nesterov) have loops of their own over
// local slices, without per-element branches or bounds checks, so that the
// update runs at the memory bandwidth (BenchmarkSGDStep; bench/RESULTS.md,
// section "around the convolutions"). Every path does the same float32
// operations in the same order, so the result does not depend on which one
// runs.
func sgdUpdate(p *Param, buf []float32, lo, hi int, first bool, mu, damp, wd, lr32 float32, nesterov bool) {
	d, gr := p.Data[lo:hi], p.Grad[lo:hi]
	gr = gr[:len(d)]
	var m []bool
	if p.Mask != nil {
		m = p.Mask[lo:hi]
		m = m[:len(d)]
	}
	if mu != 0 && !first && !nesterov {
		bf := buf[lo:hi]
		bf = bf[:len(d)]
		switch {
		case m == nil && wd == 0:
			for i := range d {
				b := mu*bf[i] + damp*gr[i]
				bf[i] = b
				d[i] -= lr32 * b
			}
		case m == nil:
			for i := range d {
				b := mu*bf[i] + damp*(gr[i]+wd*d[i])
				bf[i] = b
				d[i] -= lr32 * b
			}
		default:
			for i := range d {
				if m[i] {
					g := gr[i]
					if wd != 0 {
						g += wd * d[i]
					}
					b := mu*bf[i] + damp*g
					bf[i] = b
					d[i] -= lr32 * b
				}
			}
		}
		return
	}
	for i := range d {
		if m != nil && !m[i] {
			continue
		}
		g := gr[i]
		if wd != 0 {
			g += wd * d[i]
		}
		if mu != 0 {
			if first {
				buf[lo+i] = g
			} else {
				buf[lo+i] = mu*buf[lo+i] + damp*g
			}
			if nesterov {
				g += mu * buf[lo+i]
			} else {
				g = buf[lo+i]
			}
		}
		d[i] -= lr32 * g
	}
}

// parallelRange calls f on consecutive parts of [0, n), on up to threads
// goroutines (0: GOMAXPROCS) with at least minParallel elements each.
func parallelRange(n, threads int, f func(lo, hi int)) {
	const minParallel = 1 << 15
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	par.Range(n, max(1, min(threads, n/minParallel)), f)
}

// Adam is PyTorch's torch.optim.Adam (L2 weight decay added to the gradient,
// bias-corrected moments).
type Adam struct {
	Beta1, Beta2 float64
	Eps          float64
	WeightDecay  float64
	// Threads: as SGD's.
	Threads int

	m, v map[string][]float32
	t    map[string]int
}

// Name implements Optimizer.
func (o *Adam) Name() string { return "adam" }

// Step implements Optimizer.
func (o *Adam) Step(params []*Param, lr float64) error {
	if o.m == nil {
		o.m, o.v, o.t = map[string][]float32{}, map[string][]float32{}, map[string]int{}
	}
	b1, b2 := o.Beta1, o.Beta2
	if b1 == 0 && b2 == 0 {
		b1, b2 = 0.9, 0.999
	}
	eps := o.Eps
	if eps == 0 {
		eps = 1e-8
	}
	for _, p := range params {
		if p.Frozen {
			continue
		}
		if err := p.Validate(); err != nil {
			return err
		}
		m, v := o.m[p.Name], o.v[p.Name]
		if m == nil {
			m, v = make([]float32, len(p.Data)), make([]float32, len(p.Data))
			o.m[p.Name], o.v[p.Name] = m, v
		}
		o.t[p.Name]++
		t := float64(o.t[p.Name])
		bc1 := 1 - math.Pow(b1, t)
		bc2 := 1 - math.Pow(b2, t)
		step := float32(lr / bc1)
		sqrtBC2 := float32(math.Sqrt(bc2))
		b1f, b2f, wd, epsf := float32(b1), float32(b2), float32(o.WeightDecay), float32(eps)
		parallelRange(len(p.Data), o.Threads, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				if p.Mask != nil && !p.Mask[i] {
					continue
				}
				g := p.Grad[i]
				if wd != 0 {
					g += wd * p.Data[i]
				}
				m[i] = b1f*m[i] + (1-b1f)*g
				v[i] = b2f*v[i] + (1-b2f)*g*g
				denom := float32(math.Sqrt(float64(v[i])))/sqrtBC2 + epsf
				p.Data[i] -= step * m[i] / denom
			}
		})
	}
	return nil
}

// Schedule gives the learning rate of step t of total steps.
type Schedule interface {
	LR(t, total int) float64
}

// Constant keeps the learning rate fixed.
type Constant struct{ Base float64 }

// LR implements Schedule.
func (s Constant) LR(t, total int) float64 { return s.Base }

// StepDecay multiplies the rate by Gamma every Every steps (PyTorch's StepLR).
type StepDecay struct {
	Base  float64
	Every int
	Gamma float64
}

// LR implements Schedule.
func (s StepDecay) LR(t, total int) float64 {
	if s.Every <= 0 {
		return s.Base
	}
	return s.Base * math.Pow(s.Gamma, float64(t/s.Every))
}

// Cosine anneals from Base to Floor over total steps (PyTorch's
// CosineAnnealingLR with T_max = total and eta_min = Floor).
type Cosine struct {
	Base, Floor float64
}

// LR implements Schedule.
func (s Cosine) LR(t, total int) float64 {
	if total <= 0 {
		return s.Base
	}
	if t > total {
		t = total
	}
	return s.Floor + (s.Base-s.Floor)*(1+math.Cos(math.Pi*float64(t)/float64(total)))/2
}

// ClipGradNorm scales every (unmasked, unfrozen) gradient so that their global
// L2 norm is at most maxNorm, like torch.nn.utils.clip_grad_norm_; it returns
// the norm before clipping.
func ClipGradNorm(params []*Param, maxNorm float64) float64 {
	var sum float64
	for _, p := range params {
		if p.Frozen {
			continue
		}
		for i, g := range p.Grad {
			if p.Mask != nil && !p.Mask[i] {
				continue
			}
			sum += float64(g) * float64(g)
		}
	}
	norm := math.Sqrt(sum)
	if maxNorm > 0 && norm > maxNorm {
		scale := float32(maxNorm / (norm + 1e-6))
		for _, p := range params {
			if p.Frozen {
				continue
			}
			for i := range p.Grad {
				p.Grad[i] *= scale
			}
		}
	}
	return norm
}

// ErrNonFinite is wrapped by the error returned when a loss or gradient is NaN or Inf.
var ErrNonFinite = errors.New("non-finite value")

// CheckFinite returns an error naming the first parameter whose gradient has
// a NaN or Inf.
func CheckFinite(params []*Param) error {
	for _, p := range params {
		for i, g := range p.Grad {
			if math.IsNaN(float64(g)) || math.IsInf(float64(g), 0) {
				return fmt.Errorf("%w: gradient of %q element %d is %v", ErrNonFinite, p.Name, i, g)
			}
		}
	}
	return nil
}
