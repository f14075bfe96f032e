package svc

import "math"

// tau replaces non-positive curvature in working-set selection and in the
// two-variable update (Fan, Chen & Lin 2005, §4).
const tau = 1e-12

// Variable states, relative to the box 0 ≤ αᵢ ≤ C.
const (
	atLower int8 = iota
	atUpper
	free
)

// smo solves min ½αᵀQα − eᵀα s.t. yᵀα = 0, 0 ≤ α ≤ C by LIBSVM's SMO.
//
// Indices are permuted by shrinking: positions [0, active) hold the active
// variables; perm[k] is the original index of the variable at position k.
// grad is ∇f(α) = Qα − e for active positions (and for all positions after
// reconstruction); gbar is Ḡᵢ = C·Σ_{j at upper bound} Qᵢⱼ, kept for every
// position so the gradient of shrunk variables can be rebuilt.
type smo[T elem] struct {
	l, active int
	c, eps    float64
	shrinking bool
	unshrunk  bool

	q      *qMatrix[T]
	y      []float64 // shared with q.y
	alpha  []float64
	status []int8
	grad   []float64
	gbar   []float64
	perm   []int
	// set has bit inUp when the variable is in I_up(α) = {t | yₜ = +1,
	// αₜ < C or yₜ = −1, αₜ > 0}, bit inLow when in I_low(α) (the
	// mirror image); derived from status and y.
	set []uint8

	iter int
}

type solution struct {
	alpha      []float64 // in the solver's input order
	rho        float64
	obj        float64
	iterations int
	converged  bool
}

func newSMO[T elem](q *qMatrix[T], c, eps float64, shrinking bool) *smo[T] {
	l := q.l
	s := &smo[T]{
		l: l, active: l, c: c, eps: eps, shrinking: shrinking,
		q: q, y: q.y,
		alpha:  make([]float64, l),
		status: make([]int8, l),
		grad:   make([]float64, l),
		gbar:   make([]float64, l),
		perm:   make([]int, l),
		set:    make([]uint8, l),
	}
	for i := range l {
		s.perm[i] = i
		s.grad[i] = -1 // α = 0: ∇f = Q·0 − e
		s.status[i] = atLower
		s.setFlags(i)
	}
	return s
}

// Bits of smo.set.
const (
	inUp uint8 = 1 << iota
	inLow
)

func (s *smo[T]) updateStatus(i int) {
	switch {
	case s.alpha[i] >= s.c:
		s.status[i] = atUpper
	case s.alpha[i] <= 0:
		s.status[i] = atLower
	default:
		s.status[i] = free
	}
	s.setFlags(i)
}

func (s *smo[T]) setFlags(i int) {
	var f uint8
	pos := s.y[i] > 0
	if s.status[i] != atUpper {
		if pos {
			f |= inUp
		} else {
			f |= inLow
		}
	}
	if s.status[i] != atLower {
		if pos {
			f |= inLow
		} else {
			f |= inUp
		}
	}
	s.set[i] = f
}

func (s *smo[T]) swap(i, j int) {
	if i == j {
		return
	}
	s.q.swap(i, j) // swaps y too (shared)
	s.grad[i], s.grad[j] = s.grad[j], s.grad[i]
	s.status[i], s.status[j] = s.status[j], s.status[i]
	s.alpha[i], s.alpha[j] = s.alpha[j], s.alpha[i]
	s.perm[i], s.perm[j] = s.perm[j], s.perm[i]
	s.gbar[i], s.gbar[j] = s.gbar[j], s.gbar[i]
	s.set[i], s.set[j] = s.set[j], s.set[i]
}

// reconstructGradient rebuilds grad for the shrunk positions [active, l)
// from Ḡ and the free variables, then the caller sets active = l.
func (s *smo[T]) reconstructGradient() {
	if s.active == s.l {
		return
	}
	l, a := s.l, s.active
	for j := a; j < l; j++ {
		s.grad[j] = s.gbar[j] - 1
	}
	nFree := 0
	for j := range a {
		if s.status[j] == free {
			nFree++
		}
	}
	// Choose the cheaper way to touch the kernel: rows of the shrunk
	// variables restricted to the active ones, or rows of the free ones.
	if int64(nFree)*int64(l) > 2*int64(a)*int64(l-a) {
		for i := a; i < l; i++ {
			qi := s.q.row(i, a)
			for j := range a {
				if s.status[j] == free {
					s.grad[i] += s.alpha[j] * float64(qi[j])
				}
			}
		}
	} else {
		for i := range a {
			if s.status[i] != free {
				continue
			}
			qi := s.q.row(i, l)
			ai := s.alpha[i]
			for j := a; j < l; j++ {
				s.grad[j] += ai * float64(qi[j])
			}
		}
	}
}

// selectWorkingSet returns the pair (i, j) by WSS3, or ok = false when the
// maximal violation m(α) − M(α) is below eps on the active set.
//
// i maximises −yₜ∇ₜf over I_up; j minimises −b²/a over t ∈ I_low with
// b = −yᵢ∇ᵢf + yₜ∇ₜf > 0 and a = Kᵢᵢ + Kₜₜ − 2Kᵢₜ (τ when a ≤ 0). Ties go to
// the last index, as in LIBSVM. Kᵢᵢ = 1 for the RBF kernel; yₜ = ±1, so the
// products with y below are exact sign changes.
func (s *smo[T]) selectWorkingSet() (int, int, bool) {
	gmax, gmax2 := math.Inf(-1), math.Inf(-1)
	gmaxIdx, gminIdx := -1, -1
	objMin := math.Inf(1)
	a := s.active
	y, g, set := s.y[:a], s.grad[:a], s.set[:a]

	for t, f := range set {
		if f&inUp != 0 {
			if v := -y[t] * g[t]; v >= gmax {
				gmax, gmaxIdx = v, t
			}
		}
	}
	i := gmaxIdx
	if i == -1 {
		return 0, 0, false // I_up is empty: nothing violates
	}
	qi := s.q.row(i, a)
	twoYi := 2 * s.y[i]
	for j, f := range set {
		if f&inLow == 0 {
			continue
		}
		yg := y[j] * g[j]
		if yg >= gmax2 {
			gmax2 = yg
		}
		gd := gmax + yg
		if gd > 0 {
			quad := 2 - twoYi*y[j]*float64(qi[j])
			if !(quad > 0) {
				quad = tau
			}
			if obj := -(gd * gd) / quad; obj <= objMin {
				gminIdx, objMin = j, obj
			}
		}
	}
	if gmax+gmax2 < s.eps || gminIdx == -1 {
		return 0, 0, false
	}
	return gmaxIdx, gminIdx, true
}

// beShrunk reports whether a bounded variable cannot re-enter the working
// set given the current extreme violations gmax1 (over I_up) and gmax2
// (over I_low).
func (s *smo[T]) beShrunk(i int, gmax1, gmax2 float64) bool {
	switch s.status[i] {
	case atUpper:
		if s.y[i] > 0 {
			return -s.grad[i] > gmax1
		}
		return -s.grad[i] > gmax2
	case atLower:
		if s.y[i] > 0 {
			return s.grad[i] > gmax2
		}
		return s.grad[i] > gmax1
	}
	return false
}

func (s *smo[T]) shrink() {
	gmax1, gmax2 := math.Inf(-1), math.Inf(-1)
	for i := range s.active {
		g := s.grad[i]
		if s.y[i] > 0 {
			if s.status[i] != atUpper && -g >= gmax1 {
				gmax1 = -g
			}
			if s.status[i] != atLower && g >= gmax2 {
				gmax2 = g
			}
		} else {
			if s.status[i] != atUpper && -g >= gmax2 {
				gmax2 = -g
			}
			if s.status[i] != atLower && g >= gmax1 {
				gmax1 = g
			}
		}
	}
	if !s.unshrunk && gmax1+gmax2 <= s.eps*10 {
		s.unshrunk = true
		s.reconstructGradient()
		s.active = s.l
	}
	for i := 0; i < s.active; i++ {
		if !s.beShrunk(i, gmax1, gmax2) {
			continue
		}
		s.active--
		for s.active > i {
			if !s.beShrunk(s.active, gmax1, gmax2) {
				s.swap(i, s.active)
				break
			}
			s.active--
		}
	}
}

// rho returns the bias: the mean of yᵢ∇ᵢf over free variables, or the
// midpoint of the interval allowed by the bounded ones.
func (s *smo[T]) rho() float64 {
	ub, lb := math.Inf(1), math.Inf(-1)
	nFree, sumFree := 0, 0.0
	for i := range s.active {
		yg := s.y[i] * s.grad[i]
		switch s.status[i] {
		case atUpper:
			if s.y[i] < 0 {
				ub = math.Min(ub, yg)
			} else {
				lb = math.Max(lb, yg)
			}
		case atLower:
			if s.y[i] > 0 {
				ub = math.Min(ub, yg)
			} else {
				lb = math.Max(lb, yg)
			}
		default:
			nFree++
			sumFree += yg
		}
	}
	if nFree > 0 {
		return sumFree / float64(nFree)
	}
	return (ub + lb) / 2
}

// solve runs SMO for at most maxIter iterations.
func (s *smo[T]) solve(maxIter int) solution {
	l := s.l
	counter := min(l, 1000) + 1
	converged := false
	for s.iter < maxIter {
		counter--
		if counter == 0 {
			counter = min(l, 1000)
			if s.shrinking {
				s.shrink()
			}
		}
		i, j, ok := s.selectWorkingSet()
		if !ok {
			// Optimal on the active set: unshrink and check the whole problem.
			s.reconstructGradient()
			s.active = l
			i, j, ok = s.selectWorkingSet()
			if !ok {
				converged = true
				break
			}
			counter = 1 // shrink at the next iteration
		}
		s.iter++
		s.step(i, j)
	}
	if !converged && s.active < l {
		s.reconstructGradient()
		s.active = l
	}
	sol := solution{rho: s.rho(), iterations: s.iter, converged: converged}
	for i := range l {
		sol.obj += s.alpha[i] * (s.grad[i] - 1)
	}
	sol.obj /= 2
	sol.alpha = make([]float64, l)
	for k, orig := range s.perm {
		sol.alpha[orig] = s.alpha[k]
	}
	return sol
}

// step optimises the two-variable subproblem on (i, j) and updates the
// gradient and Ḡ.
func (s *smo[T]) step(i, j int) {
	a := s.active
	qi := s.q.row(i, a)
	qj := s.q.row(j, a)
	c := s.c
	oldI, oldJ := s.alpha[i], s.alpha[j]
	ai, aj := oldI, oldJ
	if s.y[i] != s.y[j] {
		quad := 2 + 2*float64(qi[j]) // Kᵢᵢ + Kⱼⱼ + 2Qᵢⱼ
		if quad <= 0 {
			quad = tau
		}
		delta := (-s.grad[i] - s.grad[j]) / quad
		diff := ai - aj
		ai += delta
		aj += delta
		if diff > 0 {
			if aj < 0 {
				aj, ai = 0, diff
			}
		} else if ai < 0 {
			ai, aj = 0, -diff
		}
		if diff > 0 { // C_i − C_j = 0: both bounds are C
			if ai > c {
				ai, aj = c, c-diff
			}
		} else if aj > c {
			aj, ai = c, c+diff
		}
	} else {
		quad := 2 - 2*float64(qi[j]) // Kᵢᵢ + Kⱼⱼ − 2Qᵢⱼ
		if quad <= 0 {
			quad = tau
		}
		delta := (s.grad[i] - s.grad[j]) / quad
		sum := ai + aj
		ai -= delta
		aj += delta
		if sum > c {
			if ai > c {
				ai, aj = c, sum-c
			}
		} else if aj < 0 {
			aj, ai = 0, sum
		}
		if sum > c {
			if aj > c {
				aj, ai = c, sum-c
			}
		} else if ai < 0 {
			ai, aj = 0, sum
		}
	}
	s.alpha[i], s.alpha[j] = ai, aj

	dI, dJ := ai-oldI, aj-oldJ
	g := s.grad[:a]
	qi, qj = qi[:a], qj[:a]
	for k := range g {
		g[k] += float64(qi[k])*dI + float64(qj[k])*dJ
	}

	upI, upJ := s.status[i] == atUpper, s.status[j] == atUpper
	s.updateStatus(i)
	s.updateStatus(j)
	if upI != (s.status[i] == atUpper) {
		s.addGbar(i, upI)
	}
	if upJ != (s.status[j] == atUpper) {
		s.addGbar(j, upJ)
	}
}

// addGbar updates Ḡ when variable i enters (wasUpper = false) or leaves
// (wasUpper = true) the upper bound.
func (s *smo[T]) addGbar(i int, wasUpper bool) {
	l := s.l
	qi := s.q.row(i, l)
	c := s.c
	if wasUpper {
		c = -c
	}
	gb := s.gbar[:l]
	for k := range gb {
		gb[k] += c * float64(qi[k])
	}
}
