package train

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/ops"
)

// PyTorch's default initialisation of a fresh layer, by parameter role
// (torch/nn/modules/conv.py and linear.py, reset_parameters):
//   - Conv/ConvTranspose/Linear weight: kaiming_uniform_(a=√5), i.e.
//     U(−b, b) with b = gain·√(3/fan_in), gain = √(2/(1+a²)) = √(1/3), so
//     b = 1/√fan_in;
//   - their bias: U(−1/√fan_in, 1/√fan_in) with the weight's fan_in;
//   - normalization scale 1, shift 0 (BatchNorm/LayerNorm reset_parameters);
//   - embeddings N(0, 1) (nn.Embedding);
//   - anything else (cls tokens, positional embeddings, …) 0: models
//     initialise these themselves and there is no default to follow.
//
// fan_in is PyTorch's _calculate_fan_in_and_fan_out: size(1)·∏size(2:) of
// the weight in PyTorch's layout [out, in/groups, k…]. For an ONNX weight
// whose output-channel axis is Axis that is numel/shape[Axis]; for a
// ConvTranspose weight ([in, out/groups, k…] in both frameworks) PyTorch
// takes size(1)·∏k, i.e. numel/shape[0].

// FanIn returns PyTorch's fan_in of a layer's weight, or 0 if the layer has
// no weight.
func FanIn(l *graph.Layer) int {
	if len(l.Members) == 0 || l.Members[0].Role != graph.KindWeight || l.Weight == nil || l.Weight.Init == nil {
		return 0
	}
	w := l.Members[0]
	shape := w.Param.Init.Shape
	n := graph.NumElements(shape)
	ax := w.Axis
	if w.Node != nil && ops.KindOf(w.Node.OpType) == ops.KindConvTranspose {
		ax = 0
	}
	if ax < 0 || ax >= len(shape) || shape[ax] == 0 {
		return 0
	}
	return int(n / shape[ax])
}

// InitValue draws the PyTorch default initial value of one element of a
// member of layer l.
func InitValue(l *graph.Layer, m graph.Member, rng *rand.Rand) float32 {
	switch m.Role {
	case graph.KindWeight, graph.KindBias:
		fan := FanIn(l)
		if fan == 0 {
			return 0
		}
		b := 1 / math.Sqrt(float64(fan))
		return float32((2*rng.Float64() - 1) * b)
	case graph.KindNormScale:
		return 1
	case graph.KindEmbedding:
		return float32(rng.NormFloat64())
	default:
		return 0
	}
}

// ResetNeurons re-initialises, PyTorch-style, every element selected by
// mask (parameter name → selected elements) in params (parameter name →
// values, modified in place). Elements are drawn in a fixed order (layers,
// members, flat index), so a seed gives the same values every time.
func ResetNeurons(nm *graph.NeuronMap, params map[string][]float32, mask map[string][]bool,
	rng *rand.Rand) (int, error) {
	n := 0
	for _, l := range nm.Layers {
		for _, m := range l.Members {
			name := m.Param.Name
			sel := mask[name]
			if sel == nil {
				continue
			}
			data := params[name]
			if len(data) != len(sel) {
				return n, fmt.Errorf("train: reset %q: %d values, mask of %d", name, len(data), len(sel))
			}
			for i, on := range sel {
				if on {
					data[i] = InitValue(l, m, rng)
					n++
				}
			}
		}
	}
	return n, nil
}

// ReinitModel re-initialises every parameter of m PyTorch-style (as a fresh
// model would start: ResetNeurons over all elements, drawn from
// PCG(seed, 0x1417)) and resets BatchNormalization running statistics
// (mean 0, variance 1), in m's initializers. It is how training from
// scratch starts from a trained model's graph.
func ReinitModel(m *graph.Model, seed uint64) error {
	nm, err := graph.Neurons(m.Graph)
	if err != nil {
		return err
	}
	params := map[string][]float32{}
	mask := map[string][]bool{}
	for _, p := range nm.Params {
		v, err := p.Value.Init.Float32s()
		if err != nil {
			return err
		}
		all := make([]bool, len(v))
		for i := range all {
			all[i] = true
		}
		params[p.Value.Name], mask[p.Value.Name] = v, all
	}
	if _, err := ResetNeurons(nm, params, mask, rand.New(rand.NewPCG(seed, 0x1417))); err != nil {
		return err
	}
	for name, v := range params {
		if err := m.Graph.LocalValue(name).Init.SetFloat32s(v); err != nil {
			return err
		}
	}
	for _, n := range m.Graph.Nodes() {
		if n.OpType != ops.BatchNormalization {
			continue
		}
		// Inputs 3 and 4 are the running mean and variance.
		for _, st := range []struct {
			input int
			fill  float32
		}{{3, 0}, {4, 1}} {
			v := n.Input(st.input)
			if v == nil || v.Init == nil {
				continue
			}
			vals := make([]float32, v.Init.Len())
			for k := range vals {
				vals[k] = st.fill
			}
			if err := v.Init.SetFloat32s(vals); err != nil {
				return fmt.Errorf("%s: %w", v.Name, err)
			}
		}
	}
	return nil
}
