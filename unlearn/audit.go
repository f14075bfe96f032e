package unlearn

import (
	"bytes"
	"fmt"
	"math"
	"sort"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/schema"
)

// Allowed says what a run may change: elements by parameter name (nil
// slice: the whole tensor), and whether non-parameter initializers
// (running statistics) may change.
type Allowed struct {
	Elements map[string][]bool
	Whole    map[string]bool
	State    bool
}

// AuditModels is the evidence of what unlearning changed (metrics.json's
// schema.Audit): every initializer of after compared bit for bit with
// before's (which must have the same initializer names and shapes),
// changed elements counted per tensor and (for trainable parameters) per
// output channel, and every change checked against what the run was
// allowed to change. nm, the neuron map of before's (untied) graph, gives
// roles and channels.
func AuditModels(before, after *graph.Graph, nm *graph.NeuronMap, allowed Allowed) (*schema.Audit, error) {
	inits := map[string]*graph.Tensor{}
	for _, v := range before.Initializers {
		if v.Init != nil {
			inits[v.Name] = v.Init
		}
	}
	return audit(inits, after, nm, before.LocalValue, allowed)
}

// auditTensors is AuditModels against a snapshot of the initializers taken
// before the run, with nm the neuron map of after's graph (the working
// copy the algorithm changed in place).
func auditTensors(before map[string]*graph.Tensor, after *graph.Graph, nm *graph.NeuronMap,
	allowed Allowed) (*schema.Audit, error) {
	return audit(before, after, nm, after.LocalValue, allowed)
}

// audit compares before's tensors with after's initializers; nmValue
// returns the value nm knows under a name (for roles, layers and
// channels).
func audit(before map[string]*graph.Tensor, after *graph.Graph, nm *graph.NeuronMap, nmValue func(string) *graph.Value,
	allowed Allowed) (*schema.Audit, error) {
	a := &schema.Audit{Changed: []schema.TensorChange{}, Violations: []string{}, TotalParams: nm.NumParams}
	params := map[string]*graph.Param{}
	for _, p := range nm.Params {
		params[p.Value.Name] = p
	}
	names := make([]string, 0, len(before))
	for name := range before {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		bv := nmValue(name)
		av := after.LocalValue(name)
		if av == nil || av.Init == nil {
			return nil, fmt.Errorf("audit: initializer %q missing from the output", name)
		}
		bt, at := before[name], av.Init
		if bt.DType != at.DType || fmt.Sprint(bt.Shape) != fmt.Sprint(at.Shape) {
			return nil, fmt.Errorf("audit: initializer %q changed type or shape (%v %v → %v %v)", name, bt.DType, bt.Shape,
				at.DType, at.Shape)
		}
		if bytes.Equal(bt.Raw, at.Raw) {
			a.UnchangedTensors++
			continue
		}
		tc := schema.TensorChange{Name: name, Kind: "state", Elements: bt.Len()}
		p := params[name]
		if p != nil {
			tc.Kind = p.Kind
		}
		changedIdx := changedElements(bt, at)
		tc.Changed = int64(len(changedIdx))
		if p != nil {
			a.ChangedParams += tc.Changed
			if l, mi := nm.LayerOf(bv); l != nil {
				tc.Layer = l.Name
				seen := map[int]bool{}
				m := l.Members[mi]
				for _, i := range changedIdx {
					seen[m.ChannelOf(i)] = true
				}
				for c := range seen {
					tc.Channels = append(tc.Channels, c)
				}
				sort.Ints(tc.Channels)
			}
			switch {
			case allowed.Whole[name]:
			case allowed.Elements[name] != nil:
				el := allowed.Elements[name]
				bad := 0
				for _, i := range changedIdx {
					if i >= len(el) || !el[i] {
						bad++
					}
				}
				if bad > 0 {
					a.Violations = append(a.Violations, fmt.Sprintf("%s: %d changed elements outside the mask", name, bad))
				}
			default:
				a.Violations = append(a.Violations, fmt.Sprintf("%s: changed (%d elements) but not allowed to", name, tc.Changed))
			}
		} else {
			a.ChangedState += tc.Changed
			if !allowed.State {
				a.Violations = append(a.Violations, fmt.Sprintf("%s: non-parameter initializer changed (%d elements)", name,
					tc.Changed))
			}
		}
		a.Changed = append(a.Changed, tc)
	}
	a.BitIdentical = len(a.Violations) == 0
	return a, nil
}

// changedElements lists the indices of the elements of at that differ
// from bt's (same type and shape): float elements by their bits, so that
// -0 against +0 is a change, others by their bytes.
func changedElements(bt, at *graph.Tensor) []int {
	var changedIdx []int
	if bt.DType == graph.Float {
		bf, _ := bt.Float32s()
		af, _ := at.Float32s()
		for i := range bf {
			if math.Float32bits(bf[i]) != math.Float32bits(af[i]) {
				changedIdx = append(changedIdx, i)
			}
		}
		return changedIdx
	}
	// Compare element-wise by bytes.
	sz := bt.DType.Size()
	if sz <= 0 {
		sz = 1
	}
	for i := 0; i*sz < len(bt.Raw); i++ {
		if !bytes.Equal(bt.Raw[i*sz:(i+1)*sz], at.Raw[i*sz:(i+1)*sz]) {
			changedIdx = append(changedIdx, i)
		}
	}
	return changedIdx
}
