package main

import (
	"errors"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/internal/outfile"
)

// configPath is the --config file of this run (globalArgs takes it out of
// the arguments): an input that no output may overwrite.
var configPath string

// inputFlags are the flags, across commands, that name files the command
// reads; --data is added as a folder tree (cmdInputs).
var inputFlags = []string{"model", "oracle", "forget", "exclude", "mask"}

// cmdInputs lists every file or folder c reads: the input flags that are
// set, the dataset (--data, or the bundled demo data it defaults to) as a
// tree no output may enter, the --config file, the positional arguments
// (compare's models), and the external data file a model would have under
// the default name.
func cmdInputs(c *cli.Context) []outfile.Input {
	var ins []outfile.Input
	for _, f := range inputFlags {
		if p := c.String(f); p != "" {
			in := outfile.Input{Flag: f, Path: p}
			if f == "model" {
				in.Name = "input model (--model)" // the words of the check this one replaced
			}
			ins = append(ins, in)
		}
	}
	for _, f := range []string{"model", "oracle"} {
		if p := c.String(f); p != "" {
			if _, err := os.Stat(p + ".data"); err == nil {
				ins = append(ins, outfile.Input{Name: "external data file of --" + f, Path: p + ".data"})
			}
		}
	}
	for _, fl := range c.Command.Flags {
		if fl.Names()[0] != "data" {
			continue
		}
		p := c.String("data")
		if p == "" {
			p, _ = bundledData() // a missing bundle fails later, when the data is opened
		}
		if p != "" {
			ins = append(ins, outfile.Input{Flag: "data", Path: p, Tree: true})
		}
	}
	if configPath != "" {
		ins = append(ins, outfile.Input{Flag: "config", Path: configPath})
	}
	for _, a := range c.Args().Slice() {
		ins = append(ins, outfile.Input{Name: "model argument " + a, Path: a})
	}
	return ins
}

// flagOutputs are the outputs named by the given flags of c.
func flagOutputs(c *cli.Context, flags ...string) []outfile.Output {
	outs := make([]outfile.Output, 0, len(flags))
	for _, f := range flags {
		outs = append(outs, outfile.Output{Flag: f, Path: c.String(f)})
	}
	return outs
}

// modelData is the external data file written beside a model output that
// is over protobuf's 2 GB limit (onnxio.Save's default location).
func modelData(flag, model string) outfile.Output {
	return outfile.Output{Flag: flag, Path: model + ".data", Note: "the external data file of --" + flag + ", for a model over 2 GB"}
}

// checkOuts runs outfile.Check before any work. Two flags naming one file
// is a mistake on the command line: a usage error (exit 2); the other
// refusals (a link, a device, a missing folder) exit 1.
func checkOuts(outs []outfile.Output, ins []outfile.Input) error {
	err := outfile.Check(outs, ins)
	if errors.Is(err, outfile.ErrCollision) {
		return usageError{err}
	}
	return err
}

// checkOutputs checks the output flags of c (those set and not "-",
// stdout) against every input of c and each other: never an input, a
// file inside the --data folder, another output, a link, a device, a
// folder, or in a missing or read-only folder.
func checkOutputs(c *cli.Context, flags ...string) error {
	return checkOuts(flagOutputs(c, flags...), cmdInputs(c))
}

// checkRunOutputs checks the main command's outputs: the model (and the
// external data file it gets when over 2 GB), the metrics and the report,
// saying which paths are defaults derived from others.
func checkRunOutputs(c *cli.Context, out, metrics, report string) error {
	o := outfile.Output{Flag: "out", Path: out}
	if c.String("out") == "" {
		o.Note = "default: beside --model"
	}
	m := outfile.Output{Flag: "metrics", Path: metrics}
	if c.String("metrics") == "" {
		m.Note = "default: beside --out"
	}
	return checkOuts([]outfile.Output{o, modelData("out", out), m, {Flag: "report", Path: report}}, cmdInputs(c))
}

// checkOutDir checks an output folder written as a whole (artifacts'
// --out): its parent exists and is writable, and it is absent or an empty
// folder, not a link, and not an input.
func checkOutDir(c *cli.Context, flag string) error {
	err := outfile.CheckDir(outfile.Output{Flag: flag, Path: c.String(flag)}, cmdInputs(c))
	if errors.Is(err, outfile.ErrCollision) {
		return usageError{err}
	}
	return err
}
