package onnxio

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/safetensors"
)

// safetensorsDType maps ONNX element types to safetensors dtypes; other
// types (strings, complex, 4-bit) have none and are skipped.
var safetensorsDType = map[graph.DType]string{
	graph.Float: "F32", graph.Double: "F64", graph.Float16: "F16", graph.BFloat16: "BF16",
	graph.Int64: "I64", graph.Int32: "I32", graph.Int16: "I16", graph.Int8: "I8",
	graph.Uint8: "U8", graph.Uint16: "U16", graph.Uint32: "U32", graph.Uint64: "U64", graph.Bool: "BOOL",
}

// GeneratedName reports names that PyTorch's exporter makes up for
// constants and folded tensors ("onnx::Conv_123",
// "/layer1/Constant_output_0"), and the empty name: none is a state_dict
// key.
func GeneratedName(name string) bool {
	return strings.Contains(name, "::") || strings.HasPrefix(name, "/") || name == ""
}

// SafetensorsOptions adjust Safetensors.
type SafetensorsOptions struct {
	// All also writes initializers with exporter-made names
	// (GeneratedName), and accepts trainable parameters under such names.
	All bool
}

// SafetensorsFile is a model's weights as a safetensors file.
type SafetensorsFile struct {
	Data    []byte   // the file, metadata {"format": "pt"}
	Tensors int      // tensors in Data
	Params  int      // the model's trainable parameters (graph.Parameters), written or not
	Skipped []string // initializers left out: exporter-made names, dtypes safetensors lacks
}

// GeneratedParamsError is Safetensors refusing a model whose trainable
// parameters have exporter-made names: PyTorch could not load them by
// name. SafetensorsOptions.All writes them anyway.
type GeneratedParamsError struct {
	Generated int    // trainable parameters with exporter-made names
	Params    int    // all trainable parameters
	Example   string // the first skipped name in sorted order
}

func (e *GeneratedParamsError) Error() string {
	return fmt.Sprintf("%d of %d trainable parameters have exporter-made names (e.g. %s), so PyTorch could not "+
		"load them by name: the export folded BatchNormalization into the convolutions and dropped the state_dict "+
		"names; re-export with training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False",
		e.Generated, e.Params, e.Example)
}

// Safetensors renders m's initializers as a safetensors file under their
// names, which are PyTorch's state_dict keys for an export that kept them
// (torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False), so that
// model.load_state_dict(safetensors.torch.load_file(f), strict=False) picks
// them up. It unties m first (graph.UntieIdentityInitializers: tensors the
// exporter shared behind Identity nodes are written under each of their
// names, as state_dict lists tied weights), which changes m: pass a copy
// (Clone) to keep it. Exporter-made names are skipped unless opts.All; a
// trainable parameter among them is a *GeneratedParamsError. A model with
// nothing to write is an error.
func Safetensors(m *graph.Model, opts SafetensorsOptions) (*SafetensorsFile, error) {
	if _, err := graph.UntieIdentityInitializers(m.Graph); err != nil {
		return nil, err
	}
	params := map[string]bool{}
	for _, p := range graph.Parameters(m.Graph) {
		params[p.Value.Name] = true
	}
	out := &SafetensorsFile{Params: len(params)}
	var ts []safetensors.Tensor
	generatedParams := 0
	for _, v := range m.Graph.Initializers {
		t := v.Init
		if GeneratedName(v.Name) && !opts.All {
			out.Skipped = append(out.Skipped, v.Name)
			if params[v.Name] {
				generatedParams++
			}
			continue
		}
		dt, ok := safetensorsDType[t.DType]
		if !ok {
			out.Skipped = append(out.Skipped, v.Name)
			continue
		}
		if int64(len(t.Raw)) != t.Len()*int64(t.DType.Size()) {
			return nil, fmt.Errorf("initializer %q: %d bytes for %v of %s", v.Name, len(t.Raw), t.Shape, t.DType)
		}
		ts = append(ts, safetensors.Tensor{Name: v.Name, DType: dt, Shape: t.Shape, Data: t.Raw})
	}
	if generatedParams > 0 {
		return nil, &GeneratedParamsError{Generated: generatedParams, Params: len(params), Example: firstSorted(out.Skipped)}
	}
	if len(ts) == 0 {
		return nil, fmt.Errorf("no initializer to export")
	}
	var buf bytes.Buffer
	if err := safetensors.Write(&buf, ts, map[string]string{"format": "pt"}); err != nil {
		return nil, err
	}
	out.Data, out.Tensors = buf.Bytes(), len(ts)
	return out, nil
}

// firstSorted is the smallest string of s ("" for none), without sorting s.
func firstSorted(s []string) string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	if len(c) == 0 {
		return ""
	}
	return c[0]
}
