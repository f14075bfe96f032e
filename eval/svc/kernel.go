package svc

import (
	"encoding/binary"
	"math"
	"runtime"
	"sync"
)

// parallelMin is the number of kernel entries below which a row is filled
// by one goroutine; above it the work is split across GOMAXPROCS.
const parallelMin = 4096

// qMatrix serves rows of Qᵢⱼ = yᵢyⱼ·exp(−γ‖xᵢ − xⱼ‖²) for the solver, in
// the solver's current (shrinking-permuted) index order, through an LRU
// row cache. Swapping two indices swaps the points, labels and cached rows.
//
// Entries are computed in float64 as LIBSVM does,
// exp(−γ(‖xᵢ‖² + ‖xⱼ‖² − 2xᵢ·xⱼ)), and stored as T; with T = float32 the
// stored values are bit for bit LIBSVM's.
type qMatrix[T elem] struct {
	l, d  int
	gamma float64
	x     []float64 // l×d, row-major, in solver order
	sq    []float64 // ‖xᵢ‖²
	y     []float64 // ±1
	cache *rowCache[T]
	procs int

	// Duplicate points (SalUn's 0/1 correctness feature has two distinct
	// values) share kernel values: when the points take few distinct
	// values, a row is filled by computing exp once per distinct point and
	// gathering. uid is the distinct-point id of each position (swapped
	// with the points); ux, usq the distinct points and their norms; ek the
	// per-row scratch. The values are bit for bit those of fill.
	uid []int32
	ux  []float64
	usq []float64
	ek  []float64
}

// maxDistinctFrac: the distinct-point path is used when the number of
// distinct points is at most l/maxDistinctFrac.
const maxDistinctFrac = 8

func newQMatrix[T elem](x []float64, l, d int, y []float64, gamma float64, cacheBytes int64) *qMatrix[T] {
	q := &qMatrix[T]{
		l: l, d: d, gamma: gamma,
		x: x, y: y,
		cache: newRowCache[T](l, cacheBytes),
		procs: runtime.GOMAXPROCS(0),
	}
	q.sq = make([]float64, l)
	for i := range l {
		q.sq[i] = dot(x[i*d:(i+1)*d], x[i*d:(i+1)*d])
	}
	q.findDistinct()
	return q
}

// findDistinct sets up the distinct-point path when it pays.
func (q *qMatrix[T]) findDistinct() {
	l, d := q.l, q.d
	limit := l / maxDistinctFrac
	ids := make(map[string]int32)
	uid := make([]int32, l)
	key := make([]byte, 8*d)
	for i := range l {
		for k, v := range q.x[i*d : (i+1)*d] {
			binary.LittleEndian.PutUint64(key[8*k:], math.Float64bits(v))
		}
		id, ok := ids[string(key)]
		if !ok {
			if len(ids) >= limit {
				return
			}
			id = int32(len(ids))
			ids[string(key)] = id
			q.ux = append(q.ux, q.x[i*d:(i+1)*d]...)
			q.usq = append(q.usq, q.sq[i])
		}
		uid[i] = id
	}
	q.uid = uid
	q.ek = make([]float64, len(ids))
}

// row returns Q row i, entries [0, length). The slice is valid until the
// next row call but one (two rows can be held at once).
func (q *qMatrix[T]) row(i, length int) []T {
	r, start := q.cache.get(i, length)
	if start < length {
		n := length - start
		if q.uid != nil && n >= 2*len(q.ek) {
			q.fillDistinct(r, i, start, length)
		} else if q.procs > 1 && n >= parallelMin {
			chunks := min(q.procs, n/(parallelMin/2))
			var wg sync.WaitGroup
			step := (n + chunks - 1) / chunks
			for lo := start; lo < length; lo += step {
				hi := min(lo+step, length)
				wg.Add(1)
				go func(lo, hi int) {
					defer wg.Done()
					q.fill(r, i, lo, hi)
				}(lo, hi)
			}
			wg.Wait()
		} else {
			q.fill(r, i, start, length)
		}
	}
	return r[:length]
}

// fill sets r[j] = Qᵢⱼ for j in [lo, hi).
func (q *qMatrix[T]) fill(r []T, i, lo, hi int) {
	g := q.gamma
	yi := q.y[i]
	y := q.y[lo:hi]
	out := r[lo:hi]
	sqi := q.sq[i]
	sq := q.sq[lo:hi]
	if q.d == 1 {
		xi := q.x[i]
		xs := q.x[lo:hi]
		for k, xj := range xs {
			out[k] = T(yi * y[k] * math.Exp(-g*(sqi+sq[k]-2*(xi*xj))))
		}
		return
	}
	d := q.d
	xi := q.x[i*d : (i+1)*d]
	for k := range out {
		j := lo + k
		out[k] = T(yi * y[k] * math.Exp(-g*(sqi+sq[k]-2*dot(xi, q.x[j*d:(j+1)*d]))))
	}
}

// fillDistinct is fill through the distinct points.
func (q *qMatrix[T]) fillDistinct(r []T, i, lo, hi int) {
	g, d := q.gamma, q.d
	sqi := q.sq[i]
	xi := q.x[i*d : (i+1)*d]
	for u := range q.ek {
		if d == 1 {
			q.ek[u] = math.Exp(-g * (sqi + q.usq[u] - 2*(xi[0]*q.ux[u])))
		} else {
			q.ek[u] = math.Exp(-g * (sqi + q.usq[u] - 2*dot(xi, q.ux[u*d:(u+1)*d])))
		}
	}
	yi := q.y[i]
	y := q.y[lo:hi]
	uid := q.uid[lo:hi]
	out := r[lo:hi]
	for k, u := range uid {
		out[k] = T(yi * y[k] * q.ek[u])
	}
}

// swap exchanges solver indices i and j.
func (q *qMatrix[T]) swap(i, j int) {
	if i == j {
		return
	}
	q.cache.swap(i, j)
	d := q.d
	xi, xj := q.x[i*d:(i+1)*d], q.x[j*d:(j+1)*d]
	for k := range d {
		xi[k], xj[k] = xj[k], xi[k]
	}
	q.sq[i], q.sq[j] = q.sq[j], q.sq[i]
	q.y[i], q.y[j] = q.y[j], q.y[i]
	if q.uid != nil {
		q.uid[i], q.uid[j] = q.uid[j], q.uid[i]
	}
}

func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s float64
	for k, v := range a {
		s += v * b[k]
	}
	return s
}

// rbf is exp(−γ‖u − v‖²) computed from the differences, as LIBSVM's
// prediction-time kernel does.
func rbf(u, v []float64, gamma float64) float64 {
	v = v[:len(u)]
	var s float64
	for k, a := range u {
		t := a - v[k]
		s += t * t
	}
	return math.Exp(-gamma * s)
}
