package main

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/internal/safetensors"
	"github.com/unlearn-tool/unlearn/onnxio"
)

// safetensorsDType maps ONNX element types to safetensors dtypes.
var safetensorsDType = map[graph.DType]string{
	graph.Float: "F32", graph.Double: "F64", graph.Float16: "F16", graph.BFloat16: "BF16",
	graph.Int64: "I64", graph.Int32: "I32", graph.Int16: "I16", graph.Int8: "I8",
	graph.Uint8: "U8", graph.Uint16: "U16", graph.Uint32: "U32", graph.Uint64: "U64", graph.Bool: "BOOL",
}

// generatedName reports names that PyTorch's exporter makes up for
// constants and folded tensors ("onnx::Conv_123", "/layer1/Constant_output_0"):
// they are no state_dict key.
func generatedName(name string) bool {
	return strings.Contains(name, "::") || strings.HasPrefix(name, "/") || name == ""
}

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write a model's weights under their PyTorch state_dict names (safetensors)",
		ArgsUsage: " ",
		Description: "Writes every initializer whose name is a PyTorch state_dict key (exports made with\n" +
			"training=TrainingMode.TRAINING keep the names; tensors shared behind Identity nodes are written\n" +
			"under each of their names) as a safetensors file, so that PyTorch picks up the unlearned weights:\n" +
			"  model.load_state_dict(safetensors.torch.load_file(\"U.safetensors\"), strict=False)\n" +
			"Exporter-made names (onnx::…, /…) are left out unless --all is given.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Required: true, Usage: "ONNX model"},
			&cli.StringFlag{Name: "format", Value: "safetensors", Usage: "output format (safetensors)"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "file to write"},
			&cli.BoolFlag{Name: "all", Usage: "also write initializers with exporter-made names"},
		},
		Action: runExport,
	}
}

func runExport(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("unexpected arguments %v", c.Args().Slice())
	}
	if f := c.String("format"); f != "safetensors" {
		return usagef("--format %q: unknown; the one format is safetensors", f)
	}
	path, out := c.String("model"), c.String("out")
	if err := checkOutputs(c, "out"); err != nil {
		return err
	}
	m, err := onnxio.Load(path)
	if err != nil {
		return err
	}
	// Untying gives every name behind an Identity its own initializer,
	// which is how state_dict lists tied weights.
	if _, err := graph.UntieIdentityInitializers(m.Graph); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var ts []safetensors.Tensor
	var skipped []string
	params := map[string]bool{}
	for _, p := range graph.Parameters(m.Graph) {
		params[p.Value.Name] = true
	}
	generatedParams := 0
	for _, v := range m.Graph.Initializers {
		t := v.Init
		if generatedName(v.Name) && !c.Bool("all") {
			skipped = append(skipped, v.Name)
			if params[v.Name] {
				generatedParams++
			}
			continue
		}
		dt, ok := safetensorsDType[t.DType]
		if !ok {
			skipped = append(skipped, v.Name)
			continue
		}
		if int64(len(t.Raw)) != t.Len()*int64(t.DType.Size()) {
			return fmt.Errorf("%s: initializer %q: %d bytes for %v of %s", path, v.Name, len(t.Raw), t.Shape, t.DType)
		}
		ts = append(ts, safetensors.Tensor{Name: v.Name, DType: dt, Shape: t.Shape, Data: t.Raw})
	}
	if generatedParams > 0 {
		return fmt.Errorf("%s: %d of %d trainable parameters have exporter-made names (e.g. %s), so PyTorch could not "+
			"load them by name: the export folded BatchNormalization into the convolutions and dropped the state_dict "+
			"names; re-export with training=torch.onnx.TrainingMode.TRAINING, or pass --all to write the tensors under "+
			"these names anyway", path, generatedParams, len(params), firstSorted(skipped))
	}
	if len(ts) == 0 {
		return fmt.Errorf("%s: no initializer to export", path)
	}
	var buf bytes.Buffer
	if err := safetensors.Write(&buf, ts, map[string]string{"format": "pt"}); err != nil {
		return err
	}
	if err := outfile.WriteFile(out, buf.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "wrote %s: %d tensors (%d trainable parameters)\n", out, len(ts), len(params))
	return nil
}

func firstSorted(s []string) string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	if len(c) == 0 {
		return ""
	}
	return c[0]
}
