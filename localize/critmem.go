package localize

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/schema"
	"github.com/unlearn-tool/unlearn/train"
)

// CritMem bounds: each zeroing costs one forward and backward pass on one
// example, so the defaults cost at most 256·64 ≈ 16k single-example steps.
const (
	DefaultCritMemExamples = 256
	DefaultCritMemMaxSteps = 64
)

// critMem runs the critical-memorization search (Torkzadehmahani et al.,
// the CritMem baseline; docs/DESIGN.md "The method", Baselines): for each
// examined forget example, with the model in inference mode, it computes per neuron
// Σ|θ_j·g_j| over the parameters the neuron owns (g the gradient of the
// example's cross-entropy with its label at the current weights), zeroes
// every parameter of the neuron with the largest value, and repeats until
// the example's predicted class differs from its prediction before any
// zeroing, or MaxSteps neurons are zeroed. Weights are restored before the
// next example. The classifier layer is never zeroed: zeroing the predicted
// class's row flips any prediction at once and says nothing about where the
// example is memorized. It returns per neuron (NeuronMap.Neurons order) the
// number of examples that zeroed it and, to break ties, the sum of its
// scores when it was chosen.
func critMem(ctx context.Context, m *graph.Model, nm *graph.NeuronMap, split *data.Split, forget []int,
	o Options) (counts []int, weight []float64, st schema.CritMemStats, err error) {
	if len(forget) == 0 {
		return nil, nil, st, fmt.Errorf("%w: empty forget set", ErrStrategy)
	}
	maxSteps := o.CritMemMaxSteps
	if maxSteps <= 0 {
		maxSteps = DefaultCritMemMaxSteps
	}
	nEx := o.CritMemExamples
	if nEx <= 0 {
		nEx = DefaultCritMemExamples
	}
	examples := forget
	if len(forget) > nEx {
		rng := rand.New(rand.NewPCG(o.Seed, 0x637269746d656d)) // "critmem"
		pick := rng.Perm(len(forget))[:nEx]
		slices.Sort(pick)
		examples = make([]int, nEx)
		for i, k := range pick {
			examples[i] = forget[k]
		}
	}
	counts, weight = make([]int, len(nm.Neurons)), make([]float64, len(nm.Neurons))
	st.Examples, st.MaxSteps = len(examples), maxSteps
	excluded := -1
	if cl, cerr := nm.Classifier(o.Classifier); cerr == nil {
		excluded = cl.Index
		st.Excluded = cl.Name
	} else if o.Classifier != "" {
		return nil, nil, st, fmt.Errorf("localize: %w", cerr)
	}

	e, err := o.engine(m)
	if err != nil {
		return nil, nil, st, err
	}
	defer e.Close()
	// owner[i][j]: the neuron that owns element j of engine parameter i,
	// or -1 when the neuron may not be zeroed.
	params := e.Params()
	owner := make([][]int32, len(params))
	for i, p := range params {
		l, k := nm.LayerOf(m.Graph.LocalValue(p.Name))
		if l == nil {
			return nil, nil, st, fmt.Errorf("localize: engine parameter %q is not in the neuron map", p.Name)
		}
		own := make([]int32, len(p.Data))
		if l.Index == excluded {
			for j := range own {
				own[j] = -1
			}
		} else {
			mem := l.Members[k]
			for c := 0; c < l.Channels; c++ {
				for j := range mem.Elements(c) {
					own[j] = int32(l.First + c)
				}
			}
		}
		owner[i] = own
	}
	score := make([]float64, len(nm.Neurons))
	zeroed := make([]bool, len(nm.Neurons))
	union := make([]bool, len(nm.Neurons))
	type saved struct {
		param, index int
		value        float32
	}
	var backup []saved
	var chosen []int
	for ei, id := range examples {
		if err := ctx.Err(); err != nil {
			return nil, nil, st, err
		}
		if _, err := e.LoadBatch(split, []int{id}); err != nil {
			return nil, nil, st, err
		}
		r, err := e.StepFilled(1)
		if err != nil {
			return nil, nil, st, err
		}
		pred0 := train.Argmax(r.Logits)
		backup, chosen = backup[:0], chosen[:0]
		flipped := false
		for step := 0; step < maxSteps; step++ {
			clear(score)
			for i, p := range params {
				own := owner[i]
				for j, g := range p.Grad {
					if n := own[j]; n >= 0 {
						score[n] += math.Abs(float64(p.Data[j]) * float64(g))
					}
				}
			}
			best := -1
			for n, s := range score {
				if zeroed[n] || !(s > 0) {
					continue
				}
				if best < 0 || s > score[best] {
					best = n
				}
			}
			if best < 0 {
				break // no neuron left that matters to this example
			}
			zeroed[best] = true
			chosen = append(chosen, best)
			weight[best] += score[best]
			for i, p := range params {
				own := owner[i]
				for j := range p.Data {
					if int(own[j]) == best {
						backup = append(backup, saved{i, j, p.Data[j]})
						p.Data[j] = 0
					}
				}
			}
			if r, err = e.StepFilled(1); err != nil {
				return nil, nil, st, err
			}
			if train.Argmax(r.Logits) != pred0 {
				flipped = true
				break
			}
		}
		for _, b := range backup {
			params[b.param].Data[b.index] = b.value
		}
		for _, n := range chosen {
			zeroed[n] = false
			counts[n]++
			union[n] = true
		}
		st.Zeroed += len(chosen)
		if flipped {
			st.Flipped++
		}
		if o.Progress != nil {
			o.Progress(ei+1, len(examples))
		}
	}
	for _, u := range union {
		if u {
			st.Union++
		}
	}
	return counts, weight, st, nil
}

// critMemMask ranks the neurons zeroed for at least one example by the
// number of such examples (descending; ties by the summed score, then
// neuron order) and takes the longest prefix within the limit. When the
// union is smaller than the budget, the mask is the union.
func critMemMask(nm *graph.NeuronMap, counts []int, weight []float64, st schema.CritMemStats, limit int64,
	o Options) *Mask {
	var order []int
	for n, c := range counts {
		if c > 0 {
			order = append(order, n)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := cmp.Compare(counts[b], counts[a]); c != 0 {
			return c
		}
		return cmp.Compare(weight[b], weight[a])
	})
	rk := make([]ranked, len(order))
	for i, n := range order {
		rk[i] = ranked{layer: nm.Neurons[n].Layer, c: nm.Neurons[n].Index, score: float64(counts[n])}
	}
	mk := newMask(nm, "critmem", o.Budget)
	takePrefix(nm, mk, rk, limit)
	mk.CritMem = &st
	mk.summarize(nm)
	return mk
}
