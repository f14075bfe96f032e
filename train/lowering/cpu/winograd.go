package cpu

import (
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/shapes"
)

// Winograd's minimal filtering (Lavin and Gray, "Fast Algorithms for
// Convolutional Neural Networks", CVPR 2016) for 3×3 convolutions at
// stride 1 and pad 1 on small planes, where ONNX Runtime's kernels multiply
// the padding's zeros (31 % of a 4×4 layer's products, 18 % at 7×7;
// bench/RESULTS.md, section "Padding") and the plane is too small to
// amortise them.
//
// F(4×4, 3×3) computes a 4×4 output tile from a 6×6 input tile with 36
// products per channel pair where the direct form needs 144:
//
//	Y = Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A
//
// Every transform is linear, so over a whole plane it is one constant
// matrix: the input's (Bᵀ·B per tile, the tiling and the zero padding
// folded in) maps X [N·C, H·W] to V [36·T, N·C] (T tiles), the filter's
// (G·Gᵀ) W [M·C, 9] to U [36, M·C], the output's (Aᵀ·A, the crop folded
// in) P [36·T, N·M] to Y [N·M, H·W]; each a Gemm with a transposed
// operand, so that no Transpose copies anything. The channel sums are one
// batched product over the 36 transformed positions:
//
//	P[t] = V[t] [T·N, C] · U[t]ᵀ [C, M]
//
// The input gradient is the same convolution of dY with the flipped,
// transposed filter (the flip folded into G's matrix), and the weight
// gradient the correlation of X with dY, F(3×3, 4×4) on the same 6×6
// tiles: its input transform has the same matrix Bᵀ (it depends only on
// the interpolation points), so it reuses the forward's V:
//
//	dW[t] = Z[t]ᵀ [M, T·N] · V[t] [T·N, C],   Z = dY through G₄ (6×4),
//	dW    = Aᵀ₃ dW[t] A₃ (3×6)
//
// The transforms cost O(T·36·H·W) per channel, so the form is for planes
// of up to winogradMaxPlane.
//
// The matrices come from the Toom-Cook construction (toomCook) on the
// points 0, 1, −1, ½, −2 and ∞ (Barabasz et al., "Error analysis and
// improving the accuracy of Winograd convolution for deep neural
// networks", 2020, on the choice of points), which give a smaller float32
// error than the common 0, ±1, ±2. Against a float64 reference
// (TestConvWinogradFloat32) the error of the output and both gradients is
// a few times that of ONNX Runtime's direct forms, far inside the 1e-4 of
// the PyTorch parity checks (bench/RESULTS.md, section "Winograd on the
// small planes").

// winoPoints are the finite interpolation points (∞ is the sixth).
var winoPoints = []float64{0, 1, -1, 0.5, -2}

const (
	winoOut  = 4 // output tile
	winoTile = 6 // input tile: winoOut + 3 − 1
	// winogradMaxPlane bounds the planes (H·W) where the form is chosen:
	// its dense transforms grow as the plane squared. On ResNet-18's 4×4
	// and 7×7 layers the form makes the whole step faster (bench/
	// RESULTS.md, section "Winograd on the small planes"); at 14×14 the
	// input transform alone (576×196 per channel) would cost about as much
	// as the direct Conv.
	winogradMaxPlane = 64
	// winogradMinChannels: the products grow as C·M, the transforms as C
	// and M, so few channels do not pay for them: at 64 channels on 7×7
	// (testdata's small ResNet and VGG) the form ties or loses, at 256 it
	// gains (bench/RESULTS.md, section "Winograd on the small planes").
	winogradMinChannels = 128
)

// toomCook returns Aᵀ (m×n), G (n×r) and Bᵀ (n×n), n = m+r−1 =
// len(winoPoints)+1, of the correlation y_i = Σ_k g_k d_{i+k}
// (i < m, k < r): y = Aᵀ[(G g) ⊙ (Bᵀ d)]. It is the transpose of the
// Toom-Cook linear convolution of an m-vector by an r-vector: evaluate both
// at the points (and take their leading coefficients at ∞), multiply,
// interpolate. Aᵀ evaluates at the points (columns), G too with the
// Lagrange denominators 1/∏_{k≠j}(p_j − p_k) folded in, and Bᵀ's rows are
// the coefficients of ∏_{k≠j}(x − p_k) and of ∏_k(x − p_k) for ∞.
func toomCook(m, r int) (AT, G, BT [][]float64) {
	p := winoPoints
	n := len(p) + 1
	if m+r-1 != n {
		panic("autodiff: toomCook: m + r − 1 must be the number of points + 1")
	}
	pow := func(x float64, e int) float64 {
		v := 1.0
		for range e {
			v *= x
		}
		return v
	}
	AT = make([][]float64, m)
	for i := range m {
		AT[i] = make([]float64, n)
		for j, x := range p {
			AT[i][j] = pow(x, i)
		}
		if i == m-1 {
			AT[i][n-1] = 1
		}
	}
	polyMul := func(a []float64, root float64) []float64 { // a·(x − root)
		out := make([]float64, len(a)+1)
		for i, c := range a {
			out[i+1] += c
			out[i] -= c * root
		}
		return out
	}
	G = make([][]float64, n)
	BT = make([][]float64, n)
	all := []float64{1}
	for j, x := range p {
		den := 1.0
		L := []float64{1}
		for k, y := range p {
			if k != j {
				den *= x - y
				L = polyMul(L, y)
			}
		}
		G[j] = make([]float64, r)
		for k := range r {
			G[j][k] = pow(x, k) / den
		}
		BT[j] = append(L, make([]float64, n-len(L))...)
		all = polyMul(all, x)
	}
	G[n-1] = make([]float64, r)
	G[n-1][r-1] = 1
	BT[n-1] = all
	return AT, G, BT
}

// winoPlan is a Winograd convolution's plane: H×W input and output, Ty×Tx
// tiles of winoOut.
type winoPlan struct {
	H, W, Ty, Tx int64
}

func (p winoPlan) tiles() int64 { return p.Ty * p.Tx }

// winogradApplies returns the plan of a Conv with input shape xs, filter
// ws and geometry geo in the Winograd form: 2-D, float or double, group 1,
// a 3×3 kernel at stride 1, dilation 1 and pad 1 on every side, static
// channel and spatial sizes.
func winogradApplies(xs, ws []int64, geo shapes.Geom, dt graph.DType) (winoPlan, bool) {
	if (dt != graph.Float && dt != graph.Double) || len(xs) != 4 || len(ws) != 4 ||
		!shapes.AllKnown(xs[1:]) || !shapes.AllKnown(ws) || geo.Group != 1 || xs[1] != ws[1] || len(geo.K) != 2 {
		return winoPlan{}, false
	}
	for i := range 2 {
		if geo.K[i] != 3 || geo.S[i] != 1 || geo.D[i] != 1 || geo.PB[i] != 1 || geo.PE[i] != 1 {
			return winoPlan{}, false
		}
	}
	H, W := xs[2], xs[3]
	return winoPlan{H: H, W: W, Ty: (H + winoOut - 1) / winoOut, Tx: (W + winoOut - 1) / winoOut}, true
}

// winograd reports whether the Conv (input shape xs, filter ws) takes the
// Winograd form for the pass whose forced form is forced ("winograd": where
// it applies; "": where it applies, the plane is at most winogradMaxPlane
// and both channel counts at least winogradMinChannels; anything else:
// never).
func winograd(forced string, xs, ws []int64, geo shapes.Geom, dt graph.DType) (winoPlan, bool) {
	p, ok := winogradApplies(xs, ws, geo, dt)
	switch {
	case !ok:
		return p, false
	case forced == ConvWinograd:
		return p, true
	case forced != "":
		return p, false
	}
	return p, p.H*p.W <= winogradMaxPlane && ws[0] >= winogradMinChannels && ws[1] >= winogradMinChannels
}

// winoPlane returns the plane matrix of one spatial axis of size S with T
// tiles for a per-tile map f [6][q] from the q-th element of a tile's
// window, which starts at 4i − off on tile i (elements outside [0, S) are
// the padding's zeros): out[i·6+t][s].
func winoPlane(S, T int64, f [][]float64, off int64) [][]float64 {
	out := make([][]float64, T*winoTile)
	for i := range T {
		for t := range int64(winoTile) {
			row := make([]float64, S)
			for q, c := range f[t] {
				if s := winoOut*i + int64(q) - off; s >= 0 && s < S {
					row[s] += c
				}
			}
			out[i*winoTile+t] = row
		}
	}
	return out
}

// winoKron returns the [36·T, H·W] matrix of two axes' plane matrices
// (winoPlane): row (ty, tx, iy, ix), t-major so that a product with it
// gives V as [36, T·N, C], column (y, x).
func winoKron(p winoPlan, ay, ax [][]float64) []float64 {
	T, S := p.tiles(), p.H*p.W
	out := make([]float64, winoTile*winoTile*T*S)
	for ty := range int64(winoTile) {
		for tx := range int64(winoTile) {
			for iy := range p.Ty {
				for ix := range p.Tx {
					row := (((ty*winoTile+tx)*p.Ty+iy)*p.Tx + ix) * S
					ry, rx := ay[iy*winoTile+ty], ax[ix*winoTile+tx]
					for y, cy := range ry {
						if cy == 0 {
							continue
						}
						for x, cx := range rx {
							out[row+int64(y)*p.W+int64(x)] = cy * cx
						}
					}
				}
			}
		}
	}
	return out
}

// winoInput returns the input transform [36·T, H·W]: Bᵀ·B on every tile's
// 6×6 window of X padded by 1.
func winoInput(p winoPlan) []float64 {
	_, _, BT := toomCook(winoOut, 3)
	return winoKron(p, winoPlane(p.H, p.Ty, BT, 1), winoPlane(p.W, p.Tx, BT, 1))
}

// winoOutput returns the output transform, transposed: [36·T, H·W], Aᵀ·A
// from every tile's 36 products to its 4×4 outputs, cropped to the plane.
func winoOutput(p winoPlan) []float64 {
	AT, _, _ := toomCook(winoOut, 3)
	// Output o of tile i is element o − 4i of the tile: the per-tile map
	// from 6 products to output q is AT[q], i.e. f[t][q] = AT[q][t].
	f := make([][]float64, winoTile)
	for t := range f {
		f[t] = make([]float64, winoOut)
		for q := range winoOut {
			f[t][q] = AT[q][t]
		}
	}
	return winoKron(p, winoPlane(p.H, p.Ty, f, 0), winoPlane(p.W, p.Tx, f, 0))
}

// winoGradOut returns the weight gradient's transform of dY [36·T, H·W]:
// G₄ (F(3×3, 4×4)'s filter matrix, 6×4) on every tile's 4×4 of dY.
func winoGradOut(p winoPlan) []float64 {
	_, G4, _ := toomCook(3, winoOut)
	return winoKron(p, winoPlane(p.H, p.Ty, G4, 0), winoPlane(p.W, p.Tx, G4, 0))
}

// winoFilter returns the filter transform [36, 9], G·Gᵀ, of the kernel
// rotated by 180° when flip.
func winoFilter(flip bool) []float64 {
	_, G, _ := toomCook(winoOut, 3)
	return winoKron9(func(t, k int) float64 {
		if flip {
			k = 2 - k
		}
		return G[t][k]
	})
}

// winoWeightOut returns the weight gradient's output transform, transposed:
// [36, 9], A₃ᵀ·A₃ of F(3×3, 4×4).
func winoWeightOut() []float64 {
	AT3, _, _ := toomCook(3, winoOut)
	return winoKron9(func(t, k int) float64 { return AT3[k][t] })
}

// winoKron9 returns the [36, 9] matrix m(ty, ky)·m(tx, kx), row ty·6+tx,
// column ky·3+kx: a map between the 6×6 transformed positions and a 3×3
// kernel applied along both axes.
func winoKron9(m func(t, k int) float64) []float64 {
	out := make([]float64, 36*9)
	for ty := range winoTile {
		for tx := range winoTile {
			for ky := range 3 {
				for kx := range 3 {
					out[(ty*winoTile+tx)*9+ky*3+kx] = m(ty, ky) * m(tx, kx)
				}
			}
		}
	}
	return out
}

// winoTransform applies a plane transform K [36·T, H·W] to x [N, C, H, W]:
// Gemm(K, x [N·C, H·W], transB) viewed as [36, T·N, C].
func (b *builder) winoTransform(x *graph.Value, p winoPlan, C int64, K []float64) *graph.Value {
	dt := b.DType(x)
	T, S := p.tiles(), p.H*p.W
	k := b.ConstF(dt, []int64{36 * T, S}, K)
	v := b.Op1("Gemm", []*graph.Value{k, b.Reshape(x, []int64{-1, S})}, aI("transB", 1))
	return b.Reshape(v, []int64{36, -1, C})
}

// winoFilterT returns W [M, C, 3, 3] transformed: [36, M, C].
func (b *builder) winoFilterT(W *graph.Value, M, C int64, flip bool) *graph.Value {
	k := b.ConstF(b.DType(W), []int64{36, 9}, winoFilter(flip))
	u := b.Op1("Gemm", []*graph.Value{k, b.Reshape(W, []int64{M * C, 9})}, aI("transB", 1))
	return b.Reshape(u, []int64{36, M, C})
}

// winoBack maps the products P [36, T·N, O] back to the plane: [N, O, H, W]
// (named name, or a fresh name when "").
func (b *builder) winoBack(P *graph.Value, p winoPlan, O int64, name string) *graph.Value {
	dt := b.DType(P)
	T, S := p.tiles(), p.H*p.W
	k := b.ConstF(dt, []int64{36 * T, S}, winoOutput(p))
	y := b.Op1("Gemm", []*graph.Value{b.Reshape(P, []int64{36 * T, -1}), k}, aI("transA", 1))
	shape := b.I64(-1, O, p.H, p.W)
	if name == "" {
		return b.Op1("Reshape", []*graph.Value{y, shape})
	}
	return b.Named("Reshape", []*graph.Value{y, shape}, name)
}

// winoForward emits Y = Conv(X, W, bias) (W [M, C, 3, 3]) in the Winograd
// form, Y named name, and records X's transform for the weight gradient.
func (b *builder) winoForward(X, W, bias *graph.Value, p winoPlan, M, C int64, name string) *graph.Value {
	V := b.winoV(X, p, C)
	U := b.winoFilterT(W, M, C, false)
	P := b.Op1("MatMul", []*graph.Value{V, b.Transpose(U, []int64{0, 2, 1})})
	if bias == nil {
		return b.winoBack(P, p, M, name)
	}
	y := b.winoBack(P, p, M, "")
	return b.Named("Add", []*graph.Value{y, b.Reshape(bias, []int64{M, 1, 1})}, name)
}

// winoVKey keys the input transform of a value in the Emitter's memo.
type winoVKey struct{ x *graph.Value }

// winoV returns X's input transform [36, T·N, C], emitted once per X.
func (b *builder) winoV(X *graph.Value, p winoPlan, C int64) *graph.Value {
	return b.Memo(winoVKey{X}, func() *graph.Value { return b.winoTransform(X, p, C, winoInput(p)) })
}

// winoInputGrad returns dX [N, C, H, W] from G = dY [N, M, H, W]: the
// forward of dY with the flipped, transposed filter.
func (b *builder) winoInputGrad(G, W *graph.Value, p winoPlan, M, C int64) *graph.Value {
	Vg := b.winoTransform(G, p, M, winoInput(p))
	U := b.winoFilterT(W, M, C, true) // [36, M, C]: dX[t] = dY[t] · U[t]
	return b.winoBack(b.Op1("MatMul", []*graph.Value{Vg, U}), p, C, "")
}

// winoWeightGrad returns dW [M, C, 3, 3] from X and G = dY.
func (b *builder) winoWeightGrad(X, G *graph.Value, p winoPlan, M, C int64) *graph.Value {
	dt := b.DType(G)
	V := b.winoV(X, p, C)
	Z := b.winoTransform(G, p, M, winoGradOut(p))
	Q := b.Op1("MatMul", []*graph.Value{b.Transpose(Z, []int64{0, 2, 1}), V}) // [36, M, C]
	k := b.ConstF(dt, []int64{36, 9}, winoWeightOut())
	dW := b.Op1("Gemm", []*graph.Value{b.Reshape(Q, []int64{36, M * C}), k}, aI("transA", 1))
	return b.Reshape(dW, []int64{M, C, 3, 3})
}
