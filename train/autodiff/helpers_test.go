package autodiff

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/shapes"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/onnxrt"
	"github.com/unlearn-tool/unlearn/train/lowering/cpu"
)

// fg builds small forward graphs for the rule tests.
type fg struct {
	t     testing.TB
	g     *graph.Graph
	dt    graph.DType
	rng   *rand.Rand
	opset int64
	k     int
}

func newFG(t testing.TB, dt graph.DType, seed uint64) *fg {
	return &fg{t: t, g: graph.NewGraph("test"), dt: dt, rng: rand.New(rand.NewPCG(seed, 7)), opset: 17}
}

func (f *fg) randn(n int64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = f.rng.NormFloat64()
	}
	return v
}

// param adds a random float initializer.
func (f *fg) param(name string, shape ...int64) *graph.Value {
	return f.paramVals(name, shape, f.randn(graph.NumElements(shape)))
}

func (f *fg) paramVals(name string, shape []int64, vals []float64) *graph.Value {
	t := floatTensor(f.dt, shape, vals)
	t.Name = name
	v, err := f.g.AddInitializer(t)
	if err != nil {
		f.t.Fatal(err)
	}
	return v
}

// ints adds an int64 initializer.
func (f *fg) ints(shape []int64, vals ...int64) *graph.Value {
	f.k++
	v, err := f.g.AddInitializer(graph.NewInt64(fmt.Sprintf("c%d", f.k), shape, vals))
	if err != nil {
		f.t.Fatal(err)
	}
	return v
}

func (f *fg) i1(vals ...int64) *graph.Value { return f.ints([]int64{int64(len(vals))}, vals...) }

// scalarF adds a float scalar initializer that is not a parameter candidate
// in tests that name their parameters.
func (f *fg) scalarF(v float64) *graph.Value {
	f.k++
	t := floatTensor(f.dt, []int64{}, []float64{v})
	t.Name = fmt.Sprintf("s%d", f.k)
	val, err := f.g.AddInitializer(t)
	if err != nil {
		f.t.Fatal(err)
	}
	return val
}

func (f *fg) op(op string, ins []*graph.Value, attrs ...*graph.Attribute) *graph.Value {
	return f.opN(op, ins, 1, attrs...)[0]
}

func (f *fg) opN(op string, ins []*graph.Value, nout int, attrs ...*graph.Attribute) []*graph.Value {
	outs := make([]string, nout)
	for i := range outs {
		f.k++
		outs[i] = fmt.Sprintf("v%d", f.k)
	}
	n, err := f.g.AddNode(op, "", outs[0], ins, outs, attrs...)
	if err != nil {
		f.t.Fatal(err)
	}
	return n.Outputs()
}

func (f *fg) model(out *graph.Value) *graph.Model {
	out.Type = &graph.Type{DType: f.dt}
	f.g.Outputs = []*graph.Value{out}
	return &graph.Model{Graph: f.g, IRVersion: 8, Opsets: []graph.OpsetImport{{Domain: "", Version: f.opset}}}
}

// runner runs an artifacts' model with one session.
type runner struct {
	s    *onnxrt.Session
	outs []string
	ins  []string
}

func newRunner(t testing.TB, art *Artifacts) *runner {
	t.Helper()
	testutil.RequireORT(t)
	data, err := onnxio.Encode(art.Model)
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{}
	for _, io := range art.Inputs {
		r.ins = append(r.ins, io.Name)
	}
	for _, io := range art.Outputs {
		r.outs = append(r.outs, io.Name)
	}
	s, err := onnxrt.NewSession(data, r.ins, r.outs, onnxrt.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	r.s = s
	return r
}

func (r *runner) run(t testing.TB, feeds map[string]*graph.Tensor) map[string]*graph.Tensor {
	t.Helper()
	in := make([]*onnxrt.Tensor, len(r.ins))
	for i, name := range r.ins {
		ft, ok := feeds[name]
		if !ok {
			t.Fatalf("no feed for input %q", name)
		}
		x, err := onnxrt.FromGraph(ft)
		if err != nil {
			t.Fatal(err)
		}
		defer x.Close()
		in[i] = x
	}
	out := make([]*onnxrt.Tensor, len(r.outs))
	if err := r.s.Run(in, out); err != nil {
		t.Fatal(err)
	}
	res := map[string]*graph.Tensor{}
	for i, o := range out {
		gt, err := o.ToGraph(r.outs[i])
		if err != nil {
			t.Fatal(err)
		}
		o.Close()
		res[r.outs[i]] = gt
	}
	return res
}

func vals(t testing.TB, x *graph.Tensor) []float64 {
	t.Helper()
	v := shapes.FloatValues(x)
	if v == nil {
		t.Fatalf("tensor %q (%v) is not float", x.Name, x.DType)
	}
	return v
}

// buildSeed builds m's graph in seed mode (the loss ⟨seed, output 0⟩). A
// nil spec.Lowering takes cpu.Lowering{}, so that the rule checks cover the
// CPU forms chosen per shape; TestConvForms forces each form, and
// TestPlainLowering checks lowering.Plain.
func buildSeed(t testing.TB, m *graph.Model, spec Spec) *Artifacts {
	t.Helper()
	if spec.Lowering == nil {
		spec.Lowering = cpu.Lowering{}
	}
	var art *Artifacts
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				if bo, ok := r.(bailout); ok {
					err = bo.err
					return
				}
				panic(r)
			}
		}()
		art, err = build(m, spec, true)
	}()
	if err != nil {
		t.Fatal(err)
	}
	return art
}

// checkVJP checks every parameter's gradient of L = ⟨u, f(θ)⟩ (u random, f
// the model's output, outShape its static shape) against central
// differences along random directions and, for small tensors, along every
// coordinate. eps is the step; tol the allowed error relative to the
// largest of |directional derivative| over the checks (and 1e-3·|g|·|v|).
// It returns the artifacts it checked.
func checkVJP(t *testing.T, f *fg, out *graph.Value, outShape []int64, params []string, spec Spec, eps, tol float64) *Artifacts {
	t.Helper()
	m := f.model(out)
	spec.Params = params
	art := buildSeed(t, m, spec)
	r := newRunner(t, art)
	feeds := map[string]*graph.Tensor{}
	for _, p := range params {
		feeds[p] = f.g.LocalValue(p).Init
	}
	feeds["seed"] = floatTensor(f.dt, outShape, f.randn(graph.NumElements(outShape)))
	for _, io := range art.Inputs {
		if io.Role == "state" {
			feeds[io.Name] = f.g.LocalValue(io.Name).Init
		}
	}
	base := r.run(t, feeds)
	if s := base[out.Name].Shape; !slices.Equal(s, outShape) {
		t.Fatalf("output shape %v, test expects %v", s, outShape)
	}
	loss := func(p string, theta []float64, shape []int64) float64 {
		fd := map[string]*graph.Tensor{}
		for k, v := range feeds {
			fd[k] = v
		}
		fd[p] = floatTensor(f.dt, shape, theta)
		return vals(t, r.run(t, fd)["loss"])[0]
	}
	for _, p := range params {
		init := f.g.LocalValue(p).Init
		theta := shapes.FloatValues(init)
		grad := vals(t, base["grad/"+p])
		if len(grad) != len(theta) {
			t.Fatalf("%s: gradient has %d elements, parameter %d", p, len(grad), len(theta))
		}
		var dirs [][]float64
		for k := 0; k < 3; k++ {
			dirs = append(dirs, f.randn(int64(len(theta))))
		}
		if len(theta) <= 48 {
			for i := range theta {
				e := make([]float64, len(theta))
				e[i] = 1
				dirs = append(dirs, e)
			}
		}
		worst, scale := 0.0, 0.0
		for _, v := range dirs {
			plus, minus := make([]float64, len(theta)), make([]float64, len(theta))
			for i := range theta {
				plus[i] = theta[i] + eps*v[i]
				minus[i] = theta[i] - eps*v[i]
			}
			fd := (loss(p, plus, init.Shape) - loss(p, minus, init.Shape)) / (2 * eps)
			an := 0.0
			for i := range v {
				an += grad[i] * v[i]
			}
			worst = max(worst, math.Abs(fd-an))
			scale = max(scale, math.Abs(fd), math.Abs(an))
		}
		if math.IsNaN(worst) || worst > tol*max(scale, 1e-12) {
			t.Errorf("%s: max |fd − analytic| = %.3g, scale %.3g, rel %.3g > tol %.3g", p, worst, scale, worst/scale, tol)
		} else {
			t.Logf("%s: rel err %.2g (scale %.3g)", p, worst/max(scale, 1e-30), scale)
		}
		if scale == 0 {
			t.Errorf("%s: gradient identically zero; the test checks nothing", p)
		}
	}
	return art
}
