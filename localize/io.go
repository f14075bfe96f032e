package localize

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/fsread"
	"github.com/unlearn-tool/unlearn/internal/safetensors"
	"github.com/unlearn-tool/unlearn/schema"
)

// MaskJSON is the file format of a mask (schema unlearn.mask/v1). Tensors
// list, per parameter, the selected elements as [start, length] runs of
// flat (row-major) indices; Layers summarize the choice per layer.
type MaskJSON struct {
	Schema   string  `json:"schema"`
	Strategy string  `json:"strategy"`
	Budget   float64 `json:"budget"`
	// DepthFloor and MinDepth: del's depth floor (localize.Options) and
	// the smallest eligible layer depth; absent when every layer was.
	DepthFloor float64              `json:"depth_floor,omitempty"`
	MinDepth   int                  `json:"min_depth,omitempty"`
	Selected   int64                `json:"selected"`
	Total      int64                `json:"total"`
	Layers     []schema.LayerChoice `json:"layers"`
	Tensors    []TensorMask         `json:"tensors"`
	All        bool                 `json:"all,omitempty"` // strategy full: every parameter
	CritMem    *schema.CritMemStats `json:"critmem,omitempty"`
}

// Summary returns the mask's summary.
func (mk *Mask) Summary() *schema.MaskSummary {
	s := &schema.MaskSummary{Schema: schema.MaskSchema, Strategy: mk.Strategy, Budget: mk.Budget,
		DepthFloor: mk.DepthFloor, MinDepth: mk.MinDepth, Selected: mk.Selected,
		Total: mk.Total, Layers: mk.Layers, All: mk.Elements == nil, CritMem: mk.CritMem}
	if s.Layers == nil {
		s.Layers = []schema.LayerChoice{}
	}
	return s
}

// TensorMask is one parameter's selection.
type TensorMask struct {
	Name     string     `json:"name"`
	Elements int        `json:"elements"`
	Selected int        `json:"selected"`
	Runs     [][2]int64 `json:"runs"`
}

// MarshalJSON encodes the mask as unlearn.mask/v1.
func (mk *Mask) MarshalJSON() ([]byte, error) {
	doc := MaskJSON{Schema: "unlearn.mask/v1", Strategy: mk.Strategy, Budget: mk.Budget,
		DepthFloor: mk.DepthFloor, MinDepth: mk.MinDepth, Selected: mk.Selected, Total: mk.Total, Layers: mk.Layers,
		Tensors: []TensorMask{}, All: mk.Elements == nil, CritMem: mk.CritMem}
	if doc.Layers == nil {
		doc.Layers = []schema.LayerChoice{}
	}
	names := make([]string, 0, len(mk.Elements))
	for k := range mk.Elements {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, n := range names {
		sel := mk.Elements[n]
		tm := TensorMask{Name: n, Elements: len(sel), Runs: [][2]int64{}}
		for i := 0; i < len(sel); {
			if !sel[i] {
				i++
				continue
			}
			j := i
			for j < len(sel) && sel[j] {
				j++
			}
			tm.Runs = append(tm.Runs, [2]int64{int64(i), int64(j - i)})
			tm.Selected += j - i
			i = j
		}
		doc.Tensors = append(doc.Tensors, tm)
	}
	return json.Marshal(doc)
}

// ReadMask reads a mask file and checks it against the model's trainable
// parameters (names and sizes).
func ReadMask(path string, m *graph.Model) (*Mask, error) {
	nm, err := graph.Neurons(m.Graph)
	if err != nil {
		return nil, err
	}
	return ReadMaskFor(path, nm)
}

// ReadMaskFor is ReadMask against a model's neuron map.
func ReadMaskFor(path string, nm *graph.NeuronMap) (*Mask, error) {
	b, err := fsread.File(path, "mask file", 1<<30)
	if err != nil {
		return nil, err
	}
	var doc MaskJSON
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: not a mask file: %v", path, err)
	}
	if doc.Schema != "unlearn.mask/v1" {
		return nil, fmt.Errorf("%s: schema %q, want unlearn.mask/v1", path, doc.Schema)
	}
	if !(doc.Budget > 0 && doc.Budget <= 1) {
		return nil, fmt.Errorf("%s: budget %g: must be in (0, 1] (a fraction of all trainable parameters)", path, doc.Budget)
	}
	if !slices.Contains(Strategies(), doc.Strategy) {
		return nil, fmt.Errorf("%s: strategy %q: unknown; the strategies are %s",
			path, doc.Strategy, strings.Join(Strategies(), ", "))
	}
	sizes := map[string]int{}
	for _, p := range nm.Params {
		sizes[p.Value.Name] = int(p.Value.Init.Len())
	}
	mk := &Mask{Strategy: doc.Strategy, Budget: doc.Budget, DepthFloor: doc.DepthFloor, MinDepth: doc.MinDepth,
		Total: nm.NumParams, Layers: doc.Layers}
	if doc.All {
		mk.Selected = nm.NumParams
		return mk, nil
	}
	mk.Elements = map[string][]bool{}
	for _, t := range doc.Tensors {
		n, ok := sizes[t.Name]
		if !ok {
			return nil, fmt.Errorf("%s: tensor %q is not a trainable parameter of the model", path, t.Name)
		}
		if n != t.Elements {
			return nil, fmt.Errorf("%s: tensor %q has %d elements in the mask, %d in the model", path, t.Name, t.Elements, n)
		}
		if _, dup := mk.Elements[t.Name]; dup {
			return nil, fmt.Errorf("%s: tensor %q is listed twice", path, t.Name)
		}
		sel := make([]bool, n)
		for _, r := range t.Runs {
			// r[1] > n − r[0] rather than r[0]+r[1] > n: the sum can overflow.
			if r[0] < 0 || r[1] < 0 || r[0] > int64(n) || r[1] > int64(n)-r[0] {
				return nil, fmt.Errorf("%s: tensor %q: run %v outside [0, %d)", path, t.Name, r, n)
			}
			for i := r[0]; i < r[0]+r[1]; i++ {
				if !sel[i] {
					sel[i] = true
					mk.Selected++
				}
			}
		}
		mk.Elements[t.Name] = sel
	}
	return mk, nil
}

// ScoresFile returns per-parameter scores (Localize's second result) as a
// float32 safetensors file, each tensor shaped like its parameter in m.
func ScoresFile(scores map[string][]float64, m *graph.Model) ([]byte, error) {
	vals, shapes := map[string][]float32{}, map[string][]int64{}
	for k, v := range scores {
		pv := m.Graph.LocalValue(k)
		if pv == nil || pv.Init == nil {
			return nil, fmt.Errorf("%w: scores for %q, which is not an initializer of the model", ErrStrategy, k)
		}
		f := make([]float32, len(v))
		for i := range v {
			f[i] = float32(v[i])
		}
		vals[k], shapes[k] = f, pv.Init.Shape
	}
	var buf bytes.Buffer
	if err := WriteSafetensors(&buf, vals, shapes); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteSafetensors writes float32 tensors (name → values, shapes from
// shapes) in the safetensors format (internal/safetensors).
func WriteSafetensors(w io.Writer, tensors map[string][]float32, shapes map[string][]int64) error {
	ts := make([]safetensors.Tensor, 0, len(tensors))
	for n, v := range tensors {
		b := make([]byte, 0, 4*len(v))
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
		ts = append(ts, safetensors.Tensor{Name: n, DType: "F32", Shape: shapes[n], Data: b})
	}
	return safetensors.Write(w, ts, nil)
}

// ReadSafetensors reads float32 tensors written by WriteSafetensors.
func ReadSafetensors(r io.Reader) (map[string][]float32, map[string][]int64, error) {
	ts, _, err := safetensors.Read(r)
	if err != nil {
		return nil, nil, err
	}
	vals, shapes := map[string][]float32{}, map[string][]int64{}
	for _, t := range ts {
		if t.DType != "F32" {
			return nil, nil, fmt.Errorf("%w: tensor %q is %s, want F32", safetensors.ErrFormat, t.Name, t.DType)
		}
		v := make([]float32, len(t.Data)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
		}
		vals[t.Name], shapes[t.Name] = v, t.Shape
	}
	return vals, shapes, nil
}

// WriteSummary writes the mask's table for the terminal: per layer the
// neurons chosen of its channels and the parameters selected, then the
// totals against the budget and the file the mask went to. It returns the
// writer's first error.
func (mk *Mask) WriteSummary(w io.Writer, path string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "layer\tneurons\tparams\n")
	for _, lc := range mk.Layers {
		fmt.Fprintf(tw, "%s\t%d/%d\t%d\n", lc.Layer, len(lc.Chosen)+len(lc.Partial), lc.Channels, lc.Params)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%s: %d of %d parameters (%.2f%%, budget %.2f%%) → %s\n",
		mk.Strategy, mk.Selected, mk.Total, 100*float64(mk.Selected)/float64(mk.Total), 100*mk.Budget, path)
	return err
}
