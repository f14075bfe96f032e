package localize

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/graph"
)

// Strategy describes one localization strategy: how it computes a mask and
// what the command line says about it. Everything that dispatches on a
// strategy name comes from here; adding one is one file that calls
// RegisterStrategy from an init function, plus its test.
type Strategy struct {
	// Name is what --strategy and Options.Strategy take.
	Name string
	// Summary is one line for help texts.
	Summary string
	// Scores: Localize also returns per-parameter scores (--scores).
	Scores bool
	// Localize returns the mask for req (and the scores when Scores).
	Localize func(req *Request) (*Mask, map[string][]float64, error)
}

// Request is what a strategy works on: the model (untied), its neuron map,
// the forget examples, the budget in parameters (Limit = ⌊α·p⌋) and the
// options.
type Request struct {
	Ctx     context.Context
	Model   *graph.Model
	Neurons *graph.NeuronMap
	Split   *data.Split
	Forget  []int
	Limit   int64
	Options Options
}

var (
	strategyMu    sync.RWMutex
	strategies    = map[string]*Strategy{}
	strategyOrder []string
)

func init() {
	for _, s := range []Strategy{
		{Name: "del", Summary: "DEL: |Σ θ·g| over forget batches, neurons by the mean of their top-h scores, " +
			"whole neurons within the budget",
			Scores: true, Localize: func(r *Request) (*Mask, map[string][]float64, error) {
				sc, err := Scores(r.Ctx, r.Model, r.Split, r.Forget, "del", r.Options)
				if err != nil {
					return nil, nil, err
				}
				return delMask(r.Neurons, sc, r.Limit, r.Options), sc, nil
			}},
		{Name: "salloc", Summary: "SalUn: global top-α of |Σ g|",
			Scores: true, Localize: func(r *Request) (*Mask, map[string][]float64, error) {
				sc, err := Scores(r.Ctx, r.Model, r.Split, r.Forget, "salloc", r.Options)
				if err != nil {
					return nil, nil, err
				}
				return sallocMask(r.Neurons, sc, r.Limit, r.Options), sc, nil
			}},
		{Name: "critmem", Summary: "per forget example, zero the neuron with the largest Σ|θ·g| " +
			"until the prediction flips",
			Scores: true, Localize: localizeCritMem},
		{Name: "deepest", Summary: "whole layers from the output", Localize: localizeDepth},
		{Name: "shallowest", Summary: "whole layers from the input", Localize: localizeDepth},
		{Name: "random", Summary: "another strategy's per-layer counts, random neurons",
			Localize: localizeRandom},
		{Name: "full", Summary: "every parameter",
			Localize: func(r *Request) (*Mask, map[string][]float64, error) {
				nm := r.Neurons
				return &Mask{Strategy: "full", Budget: r.Options.Budget, Total: nm.NumParams, Selected: nm.NumParams}, nil, nil
			}},
	} {
		if err := RegisterStrategy(s); err != nil {
			panic(err) // the built-in table is wrong: a programming error
		}
	}
}

// RegisterStrategy adds a strategy; its name must be new and it must have a
// Localize function.
func RegisterStrategy(s Strategy) error {
	if s.Name == "" || s.Localize == nil {
		return fmt.Errorf("%w: RegisterStrategy: a strategy needs a name and a Localize function", ErrStrategy)
	}
	strategyMu.Lock()
	defer strategyMu.Unlock()
	if _, dup := strategies[s.Name]; dup {
		return fmt.Errorf("%w: RegisterStrategy: strategy %q is already registered", ErrStrategy, s.Name)
	}
	strategies[s.Name] = &s
	strategyOrder = append(strategyOrder, s.Name)
	return nil
}

// Strategies lists the strategy names in registration order.
func Strategies() []string {
	strategyMu.RLock()
	defer strategyMu.RUnlock()
	return append([]string(nil), strategyOrder...)
}

// StrategyHelp lists the registered strategies, one "name: summary" line
// each, in registration order (the localize command's help).
func StrategyHelp() string {
	var b strings.Builder
	for _, name := range Strategies() {
		s, _ := LookupStrategy(name)
		fmt.Fprintf(&b, "  %s: %s\n", name, s.Summary)
	}
	return b.String()
}

// LookupStrategy returns the named strategy.
func LookupStrategy(name string) (*Strategy, error) {
	strategyMu.RLock()
	s, ok := strategies[name]
	strategyMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: unknown strategy %q (choose one of %s)",
			ErrStrategy, name, strings.Join(Strategies(), ", "))
	}
	return s, nil
}

func localizeCritMem(r *Request) (*Mask, map[string][]float64, error) {
	nm := r.Neurons
	counts, weight, st, err := critMem(r.Ctx, r.Model, nm, r.Split, r.Forget, r.Options)
	if err != nil {
		return nil, nil, err
	}
	sc := map[string][]float64{}
	for _, l := range nm.Layers {
		for _, mem := range l.Members {
			s := make([]float64, mem.Param.Init.Len())
			for c := 0; c < l.Channels; c++ {
				for i := range mem.Elements(c) {
					s[i] = float64(counts[l.First+c])
				}
			}
			sc[mem.Param.Name] = s
		}
	}
	return critMemMask(nm, counts, weight, st, r.Limit, r.Options), sc, nil
}

func localizeDepth(r *Request) (*Mask, map[string][]float64, error) {
	return depthMask(r.Neurons, r.Limit, r.Options), nil, nil
}

func localizeRandom(r *Request) (*Mask, map[string][]float64, error) {
	base := r.Options
	base.Strategy = r.Options.RandomOf
	if base.Strategy == "" {
		base.Strategy = "del"
	}
	if base.Strategy == "random" || base.Strategy == "full" {
		return nil, nil, fmt.Errorf("%w: random must match del, salloc, critmem, deepest or shallowest, not %s",
			ErrStrategy, base.Strategy)
	}
	ref, _, err := Localize(r.Ctx, r.Model, r.Split, r.Forget, base)
	if err != nil {
		return nil, nil, err
	}
	return randomMask(r.Neurons, ref, r.Options), nil, nil
}
