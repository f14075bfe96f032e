package localize

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/localize/floor"
	"github.com/unlearn-tool/unlearn/onnxrt"
	"github.com/unlearn-tool/unlearn/schema"
	"github.com/unlearn-tool/unlearn/train"
	"github.com/unlearn-tool/unlearn/train/autodiff"
)

// ErrStrategy reports an unknown strategy or bad options.
var ErrStrategy = errors.New("localize")

// Options configures Localize.
type Options struct {
	Strategy string
	Budget   float64 // α ∈ (0, 1]
	// TopK fixes h for del (0: ⌊TopFrac·C_out⌋, at least 1).
	TopK    int
	TopFrac float64 // default 0.1
	// ElementRank ranks elements by their neuron's score (reference code).
	ElementRank bool
	// DepthFloor, in [0, 1), keeps del away from the first layers: a layer
	// whose depth is below ⌈DepthFloor·max depth⌉ (graph.Layer.Depth; the
	// classifier has the max depth) is not eligible. 0: every layer is.
	// Resetting channels that every later, frozen layer reads costs more
	// utility than reset-and-finetune can restore (docs/METHODS.md "Which method").
	DepthFloor float64
	BatchSize  int // forget batches for scores (default 128)
	Seed       uint64
	// RandomOf is the strategy whose per-layer counts random matches
	// (default del).
	RandomOf string
	// CritMemExamples and CritMemMaxSteps bound critmem's work (defaults
	// DefaultCritMemExamples, DefaultCritMemMaxSteps).
	CritMemExamples int
	CritMemMaxSteps int
	// Classifier overrides the classifier layer that critmem never zeroes
	// (empty: detected, graph.NeuronMap.Classifier).
	Classifier string
	Runtime    onnxrt.Options
	Progress   func(done, total int)
	// Neurons is m's neuron map when the caller has it; nil: computed.
	Neurons *graph.NeuronMap
	// Graph is m's training graph in inference mode with every parameter
	// (GraphOptions), when the caller has built it for m as it is now
	// (unlearn.Prepare's check); the gradient strategies run on it instead
	// of building it again. nil, or one built with another spec: built.
	Graph *autodiff.Artifacts
}

// GraphOptions are the options of the training graph the gradient
// strategies (del and salloc's scores, critmem) run on: inference-mode
// BatchNormalization, every parameter differentiated.
func GraphOptions(rt onnxrt.Options) train.EngineOptions {
	return train.EngineOptions{Runtime: rt, Spec: autodiff.Spec{BN: autodiff.BNInference}}
}

// engine opens the gradient strategies' engine on m: on o.Graph when it
// was built with the spec train.NewEngine would build, else on a graph
// built anew.
func (o Options) engine(m *graph.Model) (*train.Engine, error) {
	opts := GraphOptions(o.Runtime)
	if o.Graph != nil && reflect.DeepEqual(o.Graph.Spec, train.EngineSpec(opts)) {
		return train.NewEngineFromArtifacts(m, o.Graph, o.Runtime)
	}
	return train.NewEngine(m, opts)
}

// Mask is the result of a strategy.
type Mask struct {
	Strategy string
	Budget   float64
	// DepthFloor is Options.DepthFloor and MinDepth the depth below which
	// no layer was eligible (0 when every layer was).
	DepthFloor float64
	MinDepth   int
	// Elements maps parameter names to selected elements; parameters with
	// nothing selected are absent. nil Elements (strategy full) selects all.
	Elements map[string][]bool
	Selected int64 // selected elements
	Total    int64 // trainable elements
	Layers   []schema.LayerChoice
	// CritMem holds critmem's statistics (nil for other strategies).
	CritMem *schema.CritMemStats
}

// Scores computes per-parameter scores for del ("del") or salloc
// ("salloc") over the forget set, in float64, keyed by parameter name.
func Scores(ctx context.Context, m *graph.Model, split *data.Split, forget []int, kind string,
	o Options) (map[string][]float64, error) {
	if kind != "del" && kind != "salloc" {
		return nil, fmt.Errorf("%w: no scores for strategy %q", ErrStrategy, kind)
	}
	if len(forget) == 0 {
		return nil, fmt.Errorf("%w: empty forget set", ErrStrategy)
	}
	bs := o.BatchSize
	if bs <= 0 {
		bs = 128
	}
	e, err := o.engine(m)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	acc := map[string][]float64{}
	for _, p := range e.Params() {
		acc[p.Name] = make([]float64, len(p.Data))
	}
	total := (len(forget) + bs - 1) / bs
	for b := 0; b*bs < len(forget); b++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		idx := forget[b*bs : min((b+1)*bs, len(forget))]
		if _, err := e.LoadBatch(split, idx); err != nil {
			return nil, err
		}
		if _, err := e.StepFilled(len(idx)); err != nil {
			return nil, err
		}
		for _, p := range e.Params() {
			a := acc[p.Name]
			if kind == "del" {
				for i, g := range p.Grad {
					a[i] += float64(p.Data[i]) * float64(g)
				}
			} else {
				for i, g := range p.Grad {
					a[i] += float64(g)
				}
			}
		}
		if o.Progress != nil {
			o.Progress(b+1, total)
		}
	}
	for _, a := range acc {
		for i, v := range a {
			a[i] = math.Abs(v)
		}
	}
	return acc, nil
}

// Localize computes a mask. m must be untied (graph.UntieIdentityInitializers).
func Localize(ctx context.Context, m *graph.Model, split *data.Split, forget []int,
	o Options) (*Mask, map[string][]float64, error) {
	if !(o.Budget > 0 && o.Budget <= 1) {
		return nil, nil, fmt.Errorf("%w: budget %g outside (0, 1]", ErrStrategy, o.Budget)
	}
	if !(o.DepthFloor >= 0 && o.DepthFloor < 1) {
		return nil, nil, fmt.Errorf("%w: depth floor %g outside [0, 1)", ErrStrategy, o.DepthFloor)
	}
	if o.TopFrac == 0 {
		o.TopFrac = 0.1
	}
	nm := o.Neurons
	if nm == nil {
		var err error
		if nm, err = graph.Neurons(m.Graph); err != nil {
			return nil, nil, err
		}
	}
	st, err := LookupStrategy(o.Strategy)
	if err != nil {
		return nil, nil, err
	}
	limit := int64(math.Floor(o.Budget * float64(nm.NumParams)))
	return st.Localize(&Request{Ctx: ctx, Model: m, Neurons: nm, Split: split, Forget: forget, Limit: limit, Options: o})
}

// neuronScore is the del score of one neuron.
func neuronScore(nm *graph.NeuronMap, l *graph.Layer, c int, sc map[string][]float64, o Options) float64 {
	var vals []float64
	for _, s := range nm.ElementsOf(l, c) {
		a := sc[s.Param.Name]
		for _, i := range s.Flat {
			vals = append(vals, a[i])
		}
	}
	h := o.TopK
	if h <= 0 {
		h = max(1, int(math.Floor(o.TopFrac*float64(l.Channels))))
	}
	h = min(h, len(vals))
	if h == 0 {
		return 0
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(vals)))
	sum := 0.0
	for _, v := range vals[:h] {
		sum += v
	}
	return sum / float64(h)
}

type ranked struct {
	layer *graph.Layer
	c     int
	score float64
}

func newMask(nm *graph.NeuronMap, strategy string, budget float64) *Mask {
	return &Mask{Strategy: strategy, Budget: budget, Elements: map[string][]bool{}, Total: nm.NumParams}
}

func (mk *Mask) selectNeuron(nm *graph.NeuronMap, l *graph.Layer, c int) {
	for _, s := range nm.ElementsOf(l, c) {
		mk.selectElems(s.Param, s.Flat)
	}
}

func (mk *Mask) selectElems(v *graph.Value, flat []int) {
	sel := mk.Elements[v.Name]
	if sel == nil {
		sel = make([]bool, v.Init.Len())
		mk.Elements[v.Name] = sel
	}
	for _, i := range flat {
		if !sel[i] {
			sel[i] = true
			mk.Selected++
		}
	}
}

// takePrefix selects neurons in order while the budget allows.
func takePrefix(nm *graph.NeuronMap, mk *Mask, order []ranked, limit int64) {
	var used int64
	for _, r := range order {
		n := int64(nm.Neuron(r.layer, r.c).NumParams)
		if used+n > limit {
			break
		}
		used += n
		mk.selectNeuron(nm, r.layer, r.c)
	}
}

func delMask(nm *graph.NeuronMap, sc map[string][]float64, limit int64, o Options) *Mask {
	var order []ranked
	minDepth := floor.MinDepth(o.DepthFloor, nm.MaxDepth)
	for _, l := range nm.Layers {
		if l.Depth < minDepth {
			continue
		}
		for c := 0; c < l.Channels; c++ {
			order = append(order, ranked{l, c, neuronScore(nm, l, c, sc, o)})
		}
	}
	sortRanked(order)
	mk := newMask(nm, "del", o.Budget)
	mk.DepthFloor, mk.MinDepth = o.DepthFloor, minDepth
	if o.ElementRank {
		// Every element carries its neuron's score; the top limit elements
		// are chosen, so the last neuron may be split.
		var left = limit
		for _, r := range order {
			if left <= 0 {
				break
			}
			for _, s := range nm.ElementsOf(r.layer, r.c) {
				take := s.Flat
				if int64(len(take)) > left {
					take = take[:left]
				}
				mk.selectElems(s.Param, take)
				left -= int64(len(take))
				if left <= 0 {
					break
				}
			}
		}
	} else {
		takePrefix(nm, mk, order, limit)
	}
	mk.summarize(nm)
	return mk
}

// sortRanked sorts by score descending, ties by layer then channel index, so
// that the order is deterministic.
func sortRanked(order []ranked) {
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].score != order[j].score {
			return order[i].score > order[j].score
		}
		if order[i].layer.Index != order[j].layer.Index {
			return order[i].layer.Index < order[j].layer.Index
		}
		return order[i].c < order[j].c
	})
}

func sallocMask(nm *graph.NeuronMap, sc map[string][]float64, limit int64, o Options) *Mask {
	type el struct {
		p     *graph.Value
		i     int
		score float64
	}
	var all []el
	for _, p := range nm.Params {
		for i, s := range sc[p.Value.Name] {
			all = append(all, el{p.Value, i, s})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].score > all[j].score })
	mk := newMask(nm, "salloc", o.Budget)
	for _, e := range all[:min(int64(len(all)), limit)] {
		mk.selectElems(e.p, []int{e.i})
	}
	mk.summarize(nm)
	return mk
}

func depthMask(nm *graph.NeuronMap, limit int64, o Options) *Mask {
	layers := append([]*graph.Layer{}, nm.Layers...)
	sort.SliceStable(layers, func(i, j int) bool {
		if o.Strategy == "deepest" {
			return layers[i].Depth > layers[j].Depth
		}
		return layers[i].Depth < layers[j].Depth
	})
	var order []ranked
	for _, l := range layers {
		for c := 0; c < l.Channels; c++ {
			order = append(order, ranked{layer: l, c: c})
		}
	}
	mk := newMask(nm, o.Strategy, o.Budget)
	takePrefix(nm, mk, order, limit)
	mk.summarize(nm)
	return mk
}

func randomMask(nm *graph.NeuronMap, ref *Mask, o Options) *Mask {
	rng := rand.New(rand.NewPCG(o.Seed, 0xda7a))
	mk := newMask(nm, "random", o.Budget)
	counts := map[string]int{}
	for _, lc := range ref.Layers {
		counts[lc.Layer] = len(lc.Chosen) + len(lc.Partial)
	}
	for _, l := range nm.Layers {
		k := counts[l.Name]
		if k == 0 {
			continue
		}
		for _, c := range rng.Perm(l.Channels)[:k] {
			mk.selectNeuron(nm, l, c)
		}
	}
	mk.summarize(nm)
	return mk
}

// summarize fills Layers from Elements.
func (mk *Mask) summarize(nm *graph.NeuronMap) {
	mk.Layers = nil
	for _, l := range nm.Layers {
		lc := schema.LayerChoice{Layer: l.Name, Channels: l.Channels, Chosen: []int{}}
		for c := 0; c < l.Channels; c++ {
			full, any := true, false
			for _, s := range nm.ElementsOf(l, c) {
				sel := mk.Elements[s.Param.Name]
				for _, i := range s.Flat {
					if sel != nil && sel[i] {
						any = true
						lc.Params++
					} else {
						full = false
					}
				}
			}
			switch {
			case any && full:
				lc.Chosen = append(lc.Chosen, c)
			case any:
				lc.Partial = append(lc.Partial, c)
			}
		}
		if lc.Params > 0 {
			mk.Layers = append(mk.Layers, lc)
		}
	}
}

// DELMask is del's mask at o.Budget from scores that an earlier del
// localization of the same model returned: the same ranking cut at another
// budget, without scoring the forget set again. Neurons are taken as a
// prefix of one order, so a larger budget's mask holds a smaller one's
// (what unlearn's widening relies on).
func DELMask(nm *graph.NeuronMap, scores map[string][]float64, o Options) (*Mask, error) {
	if !(o.Budget > 0 && o.Budget <= 1) {
		return nil, fmt.Errorf("%w: budget %g outside (0, 1]", ErrStrategy, o.Budget)
	}
	if o.TopFrac == 0 {
		o.TopFrac = 0.1
	}
	return delMask(nm, scores, int64(math.Floor(o.Budget*float64(nm.NumParams))), o), nil
}
