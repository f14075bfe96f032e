package main

import (
	"errors"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/internal/outfile"
)

// A command's outputs are checked against everything it reads before any
// work (outfile.Check): never an input, a file inside the --data folder,
// another output, a link, a device, a folder, or in a missing or read-only
// folder.

// inputFlags are the flags, across commands, that name files a command
// reads; --data is added as a folder tree.
var inputFlags = []string{"model", "oracle", "forget", "exclude", "mask"}

// inputs lists every file or folder c reads: the input flags that are
// set, the dataset (--data, or the bundled data it defaults to) as a tree
// no output may enter, the --config file (runIO puts it in the app's
// metadata), the positional arguments (compare's models), and the external
// data file a model would have under the default name.
func inputs(c *cli.Context) []outfile.Input {
	var ins []outfile.Input
	for _, f := range inputFlags {
		if p := c.String(f); p != "" {
			in := outfile.Input{Setting: f, Path: p}
			if f == "model" {
				in.Name = "input model (--model)" // the words of the check this one replaced
			}
			ins = append(ins, in)
		}
	}
	for _, f := range []string{"model", "oracle"} {
		if p := c.String(f) + ".data"; p != ".data" {
			if _, err := os.Stat(p); err == nil {
				ins = append(ins, outfile.Input{Name: "external data file of --" + f, Path: p})
			}
		}
	}
	for _, fl := range c.Command.Flags {
		if p := c.String("data"); fl.Names()[0] == "data" {
			if p == "" {
				p = data.Bundled() // a missing bundle fails later, when the data is opened
			}
			if p != "" {
				ins = append(ins, outfile.Input{Setting: "data", Path: p, Tree: true})
			}
		}
	}
	if p, _ := c.App.Metadata["config"].(string); p != "" {
		ins = append(ins, outfile.Input{Setting: "config", Path: p})
	}
	for _, a := range c.Args().Slice() {
		ins = append(ins, outfile.Input{Name: "model argument " + a, Path: a})
	}
	return ins
}

// checked is an output check's error: two flags naming one file is a
// mistake on the command line, a usage error (exit 2); the other refusals
// exit 1.
func checked(err error) error {
	if errors.Is(err, outfile.ErrCollision) {
		return usageError{err}
	}
	return err
}

// checkFlags checks the output flags of c (those set and not "-",
// stdout) against every input of c and each other.
func checkFlags(c *cli.Context, flags ...string) error {
	outs := make([]outfile.Output, 0, len(flags))
	for _, f := range flags {
		outs = append(outs, outfile.Output{Setting: f, Path: c.String(f)})
	}
	return checked(outfile.Check(outs, inputs(c)))
}

// modelData is the external data file written beside a model output that
// is over protobuf's 2 GB limit (onnxio.Save's default location).
func modelData(flag, model string) outfile.Output {
	return outfile.Output{Setting: flag, Path: model + ".data",
		Note: "the external data file of --" + flag + ", for a model over 2 GB"}
}

// checkRun checks the main command's outputs: the model (and the external
// data file it gets when over 2 GB), the metrics and the report, saying
// which paths are defaults derived from others (outDefault,
// metricsDefault: the flag was not given).
func checkRun(c *cli.Context, out, metrics, report string, outDefault, metricsDefault bool) error {
	mo := outfile.Output{Setting: "out", Path: out}
	if outDefault {
		mo.Note = "default: beside --model"
	}
	m := outfile.Output{Setting: "metrics", Path: metrics}
	if metricsDefault {
		m.Note = "default: beside --out"
	}
	return checked(outfile.Check([]outfile.Output{mo, modelData("out", out), m, {Setting: "report", Path: report}},
		inputs(c)))
}

// checkResults checks a resumable results folder (the flag dir) and the
// files written beside its results (outfile.CheckResults). A gather run
// (score's --gather) only reads the folder: a finished audit on read-only
// storage is gathered with --json and --html elsewhere.
func checkResults(c *cli.Context, dir string, gather bool, subs []string, files ...outfile.Output) error {
	return checked(outfile.CheckResults(outfile.Output{Setting: dir, Path: c.String(dir)}, inputs(c), gather, subs,
		files...))
}
