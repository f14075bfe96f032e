package main

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/internal/outfile"
)

// outs checks every command's outputs against its inputs before any work
// (outputChecks); its Config is this run's --config file (globalArgs
// takes it out of the arguments).
var outs = &outputChecks{InputFlags: []string{"model", "oracle", "forget", "exclude", "mask"},
	Bundled: data.Bundled}

// outputChecks checks a command's output paths against everything it reads,
// before any work (outfile.Check): never an input, a file inside the
// --data folder, another output, a link, a device, a folder, or in a
// missing or read-only folder. Two flags naming one file is a mistake on
// the command line: a usage error (exit 2); the other refusals exit 1.
type outputChecks struct {
	// InputFlags are the flags, across commands, that name files the
	// command reads; --data is added as a folder tree.
	InputFlags []string
	// Config is the run's --config file (an input no output may overwrite).
	Config string
	// Bundled returns the dataset read when --data is not given ("" when
	// there is none).
	Bundled func() string
}

// inputs lists every file or folder c reads: the input flags that are
// set, the dataset (--data, or the bundled data it defaults to) as a tree
// no output may enter, the --config file, the positional arguments
// (compare's models), and the external data file a model would have under
// the default name.
func (o *outputChecks) inputs(c *cli.Context) []outfile.Input {
	var ins []outfile.Input
	for _, f := range o.InputFlags {
		if p := c.String(f); p != "" {
			in := outfile.Input{Setting: f, Path: p}
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
		if p == "" && o.Bundled != nil {
			p = o.Bundled() // a missing bundle fails later, when the data is opened
		}
		if p != "" {
			ins = append(ins, outfile.Input{Setting: "data", Path: p, Tree: true})
		}
	}
	if o.Config != "" {
		ins = append(ins, outfile.Input{Setting: "config", Path: o.Config})
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
		outs = append(outs, outfile.Output{Setting: f, Path: c.String(f)})
	}
	return outs
}

// modelData is the external data file written beside a model output that
// is over protobuf's 2 GB limit (onnxio.Save's default location).
func modelData(flag, model string) outfile.Output {
	return outfile.Output{Setting: flag, Path: model + ".data",
		Note: "the external data file of --" + flag + ", for a model over 2 GB"}
}

// checkOutputs runs outfile.Check; a collision is a usage error.
func checkOutputs(outs []outfile.Output, ins []outfile.Input) error {
	err := outfile.Check(outs, ins)
	if errors.Is(err, outfile.ErrCollision) {
		return usageError{err}
	}
	return err
}

// checkFlags checks the output flags of c (those set and not "-",
// stdout) against every input of c and each other.
func (o *outputChecks) checkFlags(c *cli.Context, flags ...string) error {
	return checkOutputs(flagOutputs(c, flags...), o.inputs(c))
}

// checkRun checks the main command's outputs: the model (and the external
// data file it gets when over 2 GB), the metrics and the report, saying
// which paths are defaults derived from others (outDefault,
// metricsDefault: the flag was not given).
func (o *outputChecks) checkRun(c *cli.Context, out, metrics, report string, outDefault, metricsDefault bool) error {
	mo := outfile.Output{Setting: "out", Path: out}
	if outDefault {
		mo.Note = "default: beside --model"
	}
	m := outfile.Output{Setting: "metrics", Path: metrics}
	if metricsDefault {
		m.Note = "default: beside --out"
	}
	return checkOutputs([]outfile.Output{mo, modelData("out", out), m, {Setting: "report", Path: report}}, o.inputs(c))
}

// checkResults checks a resumable results folder (the flag dir, with the
// entries subs it creates) and the files written beside its results. A
// gather run (score's --gather) only reads the folder
// (outfile.CheckResultsSource): a finished audit on read-only storage is
// gathered with --json and --html elsewhere, which are checked as outputs.
func (o *outputChecks) checkResults(c *cli.Context, dir string, gather bool, subs []string,
	files ...outfile.Output) error {
	ins := o.inputs(c)
	d := c.String(dir)
	checkDir := outfile.CheckResultsDir
	if gather {
		checkDir = outfile.CheckResultsSource
	}
	err := checkDir(outfile.Output{Setting: dir, Path: d}, ins, subs...)
	if err == nil {
		// A file in a results folder that does not exist yet can meet no
		// input or link: the run creates the folder.
		var check []outfile.Output
		for _, f := range files {
			if _, serr := os.Stat(d); serr == nil || filepath.Clean(filepath.Dir(f.Path)) != filepath.Clean(d) {
				check = append(check, f)
			}
		}
		return checkOutputs(check, ins)
	}
	if errors.Is(err, outfile.ErrCollision) {
		return usageError{err}
	}
	return err
}

// checkDir checks an output folder written as a whole (artifacts' --out):
// its parent exists and is writable, and it is absent or an empty folder,
// not a link, and not an input.
func (o *outputChecks) checkDir(c *cli.Context, flag string) error {
	err := outfile.CheckDir(outfile.Output{Setting: flag, Path: c.String(flag)}, o.inputs(c))
	if errors.Is(err, outfile.ErrCollision) {
		return usageError{err}
	}
	return err
}
