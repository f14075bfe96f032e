package main

import (
	"errors"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/inspect"
)

type inspectOptions struct {
	model, json, classifier string
	channels                bool
	cmdTable
}

func inspectCommand() *cli.Command {
	o := &inspectOptions{}
	o.rows = []row{
		required(field("model", "", &o.model, "", "ONNX classifier")),
		field("json", "", &o.json, "", "also write the summary as JSON to `FILE` (- for stdout, instead of the table)"),
		field("classifier", "", &o.classifier, "", "name of the classifier layer (weight initializer or node "+
			"name) when the default (the layer that produces the logits) is wrong"),
		field("channels", "", &o.channels, false, "list every layer (default: at most 60 rows, the rest summarized)"),
	}
	return &cli.Command{
		Name: "inspect",
		Usage: "summarize a model: opset, inputs and outputs, ops, parameters, neurons per layer, " +
			"classifier, unsupported ops",
		ArgsUsage: " ",
		Description: "inspect reads the model only (ONNX Runtime is not needed). Layers are the groups " +
			"of parameters\n" +
			"that share output channels (a Conv/Gemm/MatMul weight with its bias and a directly following\n" +
			"BatchNormalization or LayerNormalization); each channel is one neuron for the " +
			"localization strategies.\n" +
			"Member names are the model's initializer names, which are PyTorch's state_dict keys when the model\n" +
			"was exported with its BatchNormalization kept (TrainingMode.PRESERVE, " +
			"do_constant_folding=False; README \"Exporting from PyTorch\").",
		Flags:  flagsOf(o.rows),
		Action: action(o),
	}
}

func (o *inspectOptions) run(c *cli.Context) error {
	if err := checkFlags(c, "json"); err != nil {
		return err
	}
	rep, err := inspect.File(o.model, inspect.Options{Classifier: o.classifier, Terms: terms})
	var ce *inspect.ClassifierError
	if errors.As(err, &ce) {
		return usagef("--classifier %q: %v", ce.Name, ce.Err)
	}
	if err != nil {
		return err
	}
	if o.json != "" {
		if err := writeJSON(c, o.json, rep); err != nil {
			return err
		}
		if o.json == "-" {
			return nil
		}
	}
	// A failed write to the terminal is not a failure of the command.
	_ = inspect.WriteText(c.App.Writer, rep, o.channels, terms)
	return nil
}
