package main

import (
	"cmp"
	"errors"
	"io"
	"os"
	"slices"

	"github.com/unlearn-tool/unlearn/cmd/unlearn/argcheck"
	"github.com/unlearn-tool/unlearn/internal/eventlog"
	"github.com/unlearn-tool/unlearn/internal/settingfile"
	"github.com/urfave/cli/v2"
)

// Options for unattended use, valid with every command and anywhere on the
// command line: they are taken out of the arguments before parsing
// (globalArgs).
func pipelineFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "config", Usage: "YAML `FILE` of flag values: keys are flag names without " +
			"--; flags on the command line win"},
		&cli.StringFlag{Name: "log-format", Value: "text", Usage: "text, or json: one JSON object per line " +
			"on stderr for progress, results and errors"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print nothing but errors (files " +
			"are still written)"},
	}
}

// logs is the command's logger: status and progress on stderr, as text or
// JSON lines (--log-format json), errors as one "unlearn: error:" line or
// one JSON error event.
var logs = &eventlog.Logger{W: os.Stderr, Prefix: "unlearn: error: "}

// tableBesideJSON is where a table goes when stdout carries JSON: stderr,
// unless stderr carries JSON lines too (--log-format json), where a table
// would break the stream, or --quiet; the table is then left out, since
// the JSON on stdout holds the same numbers.
func tableBesideJSON(c *cli.Context) io.Writer {
	if logs.JSON || logs.Quiet {
		return io.Discard
	}
	return c.App.ErrWriter
}

// stdoutOf is where output the user asked for on stdout goes (a JSON file
// named "-"): the process's stdout, even under --quiet.
func stdoutOf(c *cli.Context) io.Writer {
	if w, ok := c.App.Metadata["stdout"].(io.Writer); ok {
		return w
	}
	return c.App.Writer
}

// globalArgs takes --config, --log-format and --quiet out of args
// (splitGlobals), sets up the logger, and splices the config file's
// values in as flags right after the command name, where later
// (command-line) values override them.
func globalArgs(app *cli.App, args []string) ([]string, error) {
	// experiment's own --config is its experiment file.
	out, g, err := splitGlobals(args, len(args) > 1 && args[1] == "experiment")
	if err = cmp.Or(err, argcheck.Repeated(app.Flags, app.Commands, args)); err != nil {
		return nil, usageError{err}
	}
	app.Metadata["config"], logs.Quiet = g.Config, g.Quiet
	setFormat := func() error {
		switch g.Format {
		case "text":
		case "json":
			logs.JSON = true
		default:
			return usagef("--log-format %q: must be text or json", g.Format)
		}
		return nil
	}
	if g.Config == "" {
		return out, setFormat()
	}
	// The command: the first argument when it names one, else the main
	// command.
	pos, flags := 1, app.Flags
	if len(out) > 1 {
		for _, cmd := range app.Commands {
			if cmd.Name == out[1] {
				pos, flags = 2, cmd.Flags
			}
		}
	}
	injected, err := configArgs(g.Config, flags)
	if err != nil {
		setFormat()
		return nil, err
	}
	// log-format and quiet from the file apply unless the command line
	// gave them; they are not flags of the parsed command.
	kept := g.fromConfig(injected)
	logs.Quiet = g.Quiet
	if err := setFormat(); err != nil {
		return nil, err
	}
	return append(append(append([]string{}, out[:pos]...), kept...), out[pos:]...), nil
}

// configArgs reads the config file for a command with flags
// (settingfile.Read) as --name=value arguments: its keys are the flags'
// names (log-format and quiet included, which globalArgs applies; not
// config or help).
func configArgs(path string, flags []cli.Flag) ([]string, error) {
	known := map[string]bool{}
	var listed []string
	for _, f := range flags {
		for _, n := range f.Names() {
			known[n] = !slices.Contains([]string{"config", "q", "help", "h"}, n)
		}
		if n := f.Names()[0]; n != "config" && n != "help" {
			listed = append(listed, n)
		}
	}
	vals, err := settingfile.Read(path, func(n string) bool { return known[n] }, listed)
	if errors.As(err, new(settingfile.UsageError)) {
		return nil, usageError{err}
	}
	args := make([]string, len(vals))
	for i, v := range vals {
		args[i] = "--" + v.Name + "=" + v.Text
	}
	return args, err
}
