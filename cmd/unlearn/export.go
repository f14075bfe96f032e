package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/onnxio"
)

type exportOptions struct {
	model, format, out string
	all                bool
	cmdTable
}

func exportCommand() *cli.Command {
	o := &exportOptions{}
	o.rows = []row{
		required(field("model", "", &o.model, "", "ONNX model")),
		field("format", "", &o.format, "safetensors", "output format (safetensors)"),
		required(field("out", "", &o.out, "", "file to write")),
		field("all", "", &o.all, false, "also write initializers with exporter-made names"),
	}
	return &cli.Command{
		Name:      "export",
		Usage:     "write a model's weights under their PyTorch state_dict names (safetensors)",
		ArgsUsage: " ",
		Description: "Writes every initializer whose name is a PyTorch state_dict key (exports made with\n" +
			"training=TrainingMode.PRESERVE, do_constant_folding=False keep the names; tensors shared " +
			"behind Identity nodes are written\n" +
			"under each of their names) as a safetensors file, so that PyTorch picks up the unlearned weights:\n" +
			"  model.load_state_dict(safetensors.torch.load_file(\"U.safetensors\"), strict=False)\n" +
			"Exporter-made names (onnx::…, /…) are left out unless --all is given.",
		Flags:  flagsOf(o.rows),
		Action: action(o),
	}
}

func (o *exportOptions) validate() error {
	if o.format != "safetensors" {
		return usagef("--format %q: unknown; the one format is safetensors", o.format)
	}
	return nil
}

func (o *exportOptions) run(c *cli.Context) error {
	path, out := o.model, o.out
	if err := checkFlags(c, "out"); err != nil {
		return err
	}
	m, err := onnxio.Load(path)
	if err != nil {
		return err
	}
	f, err := onnxio.Safetensors(m, onnxio.SafetensorsOptions{All: o.all})
	var ge *onnxio.GeneratedParamsError
	switch {
	case errors.As(err, &ge):
		return fmt.Errorf("%s: %w, or pass --all to write the tensors under these names anyway", path, err)
	case err != nil:
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := outfile.WriteFile(out, f.Data); err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "wrote %s: %d tensors (%d trainable parameters)\n", out, f.Tensors, f.Params)
	return nil
}
