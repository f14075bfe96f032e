package clilog

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/internal/outfile"
)

// Outputs checks a command's output paths against everything it reads,
// before any work (outfile.Check): never an input, a file inside the
// --data folder, another output, a link, a device, a folder, or in a
// missing or read-only folder. Two flags naming one file is a mistake on
// the command line: an ErrUsage (exit 2); the other refusals exit 1.
type Outputs struct {
	// InputFlags are the flags, across commands, that name files the
	// command reads; --data is added as a folder tree.
	InputFlags []string
	// Config is the run's --config file (an input no output may overwrite).
	Config string
	// Bundled returns the dataset read when --data is not given ("" when
	// there is none).
	Bundled func() string
}

// usageWrap is an ErrUsage that keeps the error it wraps.
type usageWrap struct{ err error }

func (u usageWrap) Error() string        { return u.err.Error() }
func (u usageWrap) Unwrap() error        { return u.err }
func (u usageWrap) Is(target error) bool { return target == ErrUsage }

// Inputs lists every file or folder c reads: the input flags that are
// set, the dataset (--data, or the bundled data it defaults to) as a tree
// no output may enter, the --config file, the positional arguments
// (compare's models), and the external data file a model would have under
// the default name.
func (o *Outputs) Inputs(c *cli.Context) []outfile.Input {
	var ins []outfile.Input
	for _, f := range o.InputFlags {
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
		if p == "" && o.Bundled != nil {
			p = o.Bundled() // a missing bundle fails later, when the data is opened
		}
		if p != "" {
			ins = append(ins, outfile.Input{Flag: "data", Path: p, Tree: true})
		}
	}
	if o.Config != "" {
		ins = append(ins, outfile.Input{Flag: "config", Path: o.Config})
	}
	for _, a := range c.Args().Slice() {
		ins = append(ins, outfile.Input{Name: "model argument " + a, Path: a})
	}
	return ins
}

// FlagOutputs are the outputs named by the given flags of c.
func FlagOutputs(c *cli.Context, flags ...string) []outfile.Output {
	outs := make([]outfile.Output, 0, len(flags))
	for _, f := range flags {
		outs = append(outs, outfile.Output{Flag: f, Path: c.String(f)})
	}
	return outs
}

// ModelData is the external data file written beside a model output that
// is over protobuf's 2 GB limit (onnxio.Save's default location).
func ModelData(flag, model string) outfile.Output {
	return outfile.Output{Flag: flag, Path: model + ".data", Note: "the external data file of --" + flag + ", for a model over 2 GB"}
}

// Check runs outfile.Check; a collision is an ErrUsage.
func Check(outs []outfile.Output, ins []outfile.Input) error {
	err := outfile.Check(outs, ins)
	if errors.Is(err, outfile.ErrCollision) {
		return usageWrap{err}
	}
	return err
}

// CheckFlags checks the output flags of c (those set and not "-",
// stdout) against every input of c and each other.
func (o *Outputs) CheckFlags(c *cli.Context, flags ...string) error {
	return Check(FlagOutputs(c, flags...), o.Inputs(c))
}

// CheckRun checks the main command's outputs: the model (and the external
// data file it gets when over 2 GB), the metrics and the report, saying
// which paths are defaults derived from others.
func (o *Outputs) CheckRun(c *cli.Context, out, metrics, report string) error {
	mo := outfile.Output{Flag: "out", Path: out}
	if c.String("out") == "" {
		mo.Note = "default: beside --model"
	}
	m := outfile.Output{Flag: "metrics", Path: metrics}
	if c.String("metrics") == "" {
		m.Note = "default: beside --out"
	}
	return Check([]outfile.Output{mo, ModelData("out", out), m, {Flag: "report", Path: report}}, o.Inputs(c))
}

// CheckResults checks a resumable results folder (the flag dir, with the
// entries subs it creates) and the files written beside its results. A
// --gather run only reads the folder (outfile.CheckResultsSource): a
// finished audit on read-only storage is gathered with --json and --html
// elsewhere, which are checked as outputs.
func (o *Outputs) CheckResults(c *cli.Context, dir string, subs []string, files ...outfile.Output) error {
	ins := o.Inputs(c)
	d := c.String(dir)
	checkDir := outfile.CheckResultsDir
	if c.Bool("gather") {
		checkDir = outfile.CheckResultsSource
	}
	err := checkDir(outfile.Output{Flag: dir, Path: d}, ins, subs...)
	if err == nil {
		// A file in a results folder that does not exist yet can meet no
		// input or link: the run creates the folder.
		var check []outfile.Output
		for _, f := range files {
			if _, serr := os.Stat(d); serr == nil || filepath.Clean(filepath.Dir(f.Path)) != filepath.Clean(d) {
				check = append(check, f)
			}
		}
		return Check(check, ins)
	}
	if errors.Is(err, outfile.ErrCollision) {
		return usageWrap{err}
	}
	return err
}

// CheckDir checks an output folder written as a whole (artifacts' --out):
// its parent exists and is writable, and it is absent or an empty folder,
// not a link, and not an input.
func (o *Outputs) CheckDir(c *cli.Context, flag string) error {
	err := outfile.CheckDir(outfile.Output{Flag: flag, Path: c.String(flag)}, o.Inputs(c))
	if errors.Is(err, outfile.ErrCollision) {
		return usageWrap{err}
	}
	return err
}
