package autodiff

import (
	"math"
	"slices"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/train/lowering/cpu"
)

var winoForced = cpu.Lowering{Forward: cpu.ConvWinograd, Input: cpu.ConvWinograd, Weight: cpu.ConvWinograd}

// TestConvWinograd checks the Winograd forward and both gradients against
// finite differences and the direct forms, on one tile, whole tiles and
// partial ones, with and without bias.
func TestConvWinograd(t *testing.T) {
	pads := aIs("pads", []int64{1, 1, 1, 1})
	for _, c := range []struct {
		name   string
		xs, ws []int64
		bias   bool
	}{
		{"4x4", []int64{2, 3, 4, 4}, []int64{4, 3, 3, 3}, true},
		{"8x8-tiles", []int64{2, 3, 8, 8}, []int64{2, 3, 3, 3}, false},
		{"7x5-partial", []int64{2, 2, 7, 5}, []int64{3, 2, 3, 3}, true},
		{"2x3-small", []int64{1, 2, 2, 3}, []int64{2, 2, 3, 3}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := []int64{c.xs[0], c.ws[0], c.xs[2], c.xs[3]}
			build := convCase("Conv", c.xs, c.ws, c.bias, out, pads)
			f := newFG(t, graph.Float, 7)
			o, shape, params := build(f)
			art := checkVJP(t, f, o, shape, params, Spec{Lowering: winoForced}, linEps, linTol)
			for _, want := range []string{"forward:", "input:", "weight:"} {
				if !slices.Contains(art.convForms, want+cpu.ConvWinograd) {
					t.Errorf("%s%s not used: %v", want, cpu.ConvWinograd, art.convForms)
				}
			}
			// The same model and feeds through the direct forms.
			direct := Spec{Lowering: cpu.Lowering{Forward: cpu.ConvForwardDirect, Input: cpu.ConvInputFlipped, Weight: cpu.ConvWeightGemm}}
			got, want := runOnce(t, f, o, shape, params, Spec{Lowering: winoForced}), runOnce(t, f, o, shape, params, direct)
			for _, name := range append([]string{o.Name}, gradNames(params)...) {
				if e := relMaxErr(vals(t, got[name]), vals(t, want[name])); e > 2e-6 {
					t.Errorf("%s: Winograd against direct: max error %.3g of the largest value", name, e)
				}
			}
		})
	}
}

// TestConvWinogradFloat32 bounds the float32 error of the Winograd forms on
// 128-channel 4×4 (one tile) and 7×7 (four, cropped) layers against a
// float64 reference (refConv3x3): the forward and both gradients within
// 1e-5 of the largest value (measured: 1.3–5.5e-6; ONNX Runtime's direct
// float32 forms 0.3–1.4e-6).
func TestConvWinogradFloat32(t *testing.T) {
	direct := Spec{Lowering: cpu.Lowering{Forward: cpu.ConvForwardDirect, Input: cpu.ConvInputFlipped, Weight: cpu.ConvWeightGemm}}
	for _, S := range []int64{4, 7} {
		f := newFG(t, graph.Float, 11)
		xs, ws := []int64{8, 128, S, S}, []int64{128, 128, 3, 3}
		xv := relu(f.randn(graph.NumElements(xs)))
		wv := f.randn(graph.NumElements(ws))
		for i := range wv {
			wv[i] *= math.Sqrt(2.0 / (9 * 128))
		}
		x, w := f.paramVals("x", xs, xv), f.paramVals("w", ws, wv)
		o := f.op("Conv", []*graph.Value{x, w}, aIs("pads", []int64{1, 1, 1, 1}))
		params := []string{"x", "w"}
		names := append([]string{o.Name}, gradNames(params)...)
		wino, dir := runOnce(t, f, o, xs, params, Spec{Lowering: winoForced}), runOnce(t, f, o, xs, params, direct)
		seed := make([]float64, graph.NumElements(xs))
		for i := range seed {
			seed[i] = math.Sin(float64(i))
		}
		y, dx, dw := refConv3x3(xv, wv, seed, xs[0], xs[1], ws[0], S)
		for i, ref := range [][]float64{y, dx, dw} {
			e, ed := relMaxErr(vals(t, wino[names[i]]), ref), relMaxErr(vals(t, dir[names[i]]), ref)
			t.Logf("%d×%d %s: max error %.2g of the largest value (direct float32 %.2g)", S, S, names[i], e, ed)
			if e > 1e-5 {
				t.Errorf("%d×%d %s: Winograd against float64: max error %.3g of the largest value", S, S, names[i], e)
			}
		}
	}
}

// refConv3x3 returns, in float64, Y = Conv(X, W) (3×3, stride 1, pad 1, X
// [N, C, S, S], W [M, C, 3, 3]) and the gradients of ⟨u, Y⟩ for X and W.
func refConv3x3(x, w, u []float64, N, C, M, S int64) (y, dx, dw []float64) {
	y, dx, dw = make([]float64, N*M*S*S), make([]float64, len(x)), make([]float64, len(w))
	for n := range N {
		for m := range M {
			for c := range C {
				for ky := range int64(3) {
					for kx := range int64(3) {
						wi := ((m*C+c)*3+ky)*3 + kx
						for oy := range S {
							iy := oy + ky - 1
							if iy < 0 || iy >= S {
								continue
							}
							for ox := range S {
								ix := ox + kx - 1
								if ix < 0 || ix >= S {
									continue
								}
								xi, yi := ((n*C+c)*S+iy)*S+ix, ((n*M+m)*S+oy)*S+ox
								y[yi] += w[wi] * x[xi]
								dx[xi] += w[wi] * u[yi]
								dw[wi] += x[xi] * u[yi]
							}
						}
					}
				}
			}
		}
	}
	return y, dx, dw
}

func relu(v []float64) []float64 {
	for i := range v {
		v[i] = max(v[i], 0)
	}
	return v
}

func gradNames(params []string) []string {
	out := make([]string, len(params))
	for i, p := range params {
		out[i] = "grad/" + p
	}
	return out
}

// runOnce builds f's model under spec and runs it once with the
// parameters' values and a fixed seed.
func runOnce(t *testing.T, f *fg, out *graph.Value, shape []int64, params []string, spec Spec) map[string]*graph.Tensor {
	t.Helper()
	spec.Params = params
	art := buildSeed(t, f.model(out), spec)
	feeds := map[string]*graph.Tensor{}
	for _, p := range params {
		feeds[p] = f.g.LocalValue(p).Init
	}
	seed := make([]float64, graph.NumElements(shape))
	for i := range seed {
		seed[i] = math.Sin(float64(i))
	}
	feeds["seed"] = floatTensor(f.dt, shape, seed)
	return newRunner(t, art).run(t, feeds)
}

// relMaxErr returns max|a − b| / max|b|.
func relMaxErr(a, b []float64) float64 {
	var e, s float64
	for i := range b {
		e = max(e, math.Abs(a[i]-b[i]))
		s = max(s, math.Abs(b[i]))
	}
	return e / s
}
