package main

import (
	"errors"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/internal/clilog"
)

// Options for unattended use, valid with every command and anywhere on the
// command line: they are taken out of the arguments before parsing
// (globalArgs).
func pipelineFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "config", Usage: "YAML `FILE` of flag values: keys are flag names without --; flags on the command line win"},
		&cli.StringFlag{Name: "log-format", Value: "text", Usage: "text, or json: one JSON object per line on stderr for progress, results and errors"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print nothing but errors (files are still written)"},
	}
}

// logs is the command's logger: status and progress on stderr, as text or
// JSON lines (--log-format json), errors as one "unlearn: error:" line or
// one JSON error event.
var logs = &clilog.Logger{W: os.Stderr, Prefix: "unlearn: error: "}

// tableBesideJSON is where a table goes when stdout carries JSON: stderr,
// unless stderr carries JSON lines too (--log-format json), where a table
// would break the stream; the table is then left out, since the JSON on
// stdout holds the same numbers.
func tableBesideJSON(c *cli.Context) io.Writer {
	if logs.JSON {
		return io.Discard
	}
	return c.App.ErrWriter
}

// globalArgs takes --config, --log-format and --quiet out of args, sets up
// the logger, and splices the config file's values in as flags right after
// the command name, where later (command-line) values override them.
func globalArgs(app *cli.App, args []string) ([]string, error) {
	var out []string
	config, format := "", "text"
	formatGiven, quietGiven := false, false
	configPath = "" // set below when this run has a --config
	// experiment's own --config is its experiment file.
	ownConfig := len(args) > 1 && args[1] == "experiment"
	for i := 0; i < len(args); i++ {
		a := args[i]
		if i == 0 {
			out = append(out, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
			out = append(out, a)
			continue
		}
		if name == "config" && ownConfig {
			out = append(out, a)
			continue
		}
		switch name {
		case "config", "log-format":
			if !hasVal {
				if i+1 >= len(args) {
					return nil, usagef("--%s needs a value", name)
				}
				i++
				val = args[i]
			}
			if name == "config" {
				config, configPath = val, val
			} else {
				format, formatGiven = val, true
			}
		case "quiet", "q":
			logs.Quiet = !hasVal || val == "true" || val == "1"
			quietGiven = true
		default:
			out = append(out, a)
		}
	}
	setFormat := func() error {
		switch format {
		case "text":
		case "json":
			logs.JSON = true
		default:
			return usagef("--log-format %q: must be text or json", format)
		}
		return nil
	}
	if config == "" {
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
	injected, err := configArgs(config, flags)
	if err != nil {
		setFormat()
		return nil, err
	}
	// log-format and quiet from the file apply unless the command line
	// gave them; they are not flags of the parsed command.
	var kept []string
	for _, a := range injected {
		name, val, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		switch name {
		case "log-format":
			if !formatGiven {
				format = val
			}
		case "quiet":
			if !quietGiven {
				logs.Quiet = val == "true" || val == "1"
			}
		default:
			kept = append(kept, a)
		}
	}
	if err := setFormat(); err != nil {
		return nil, err
	}
	res := append(append(append([]string{}, out[:pos]...), kept...), out[pos:]...)
	return res, nil
}

// configArgs reads the config file for a command with flags: its keys are
// the flags' names (log-format and quiet included, which globalArgs
// applies; not config or help).
func configArgs(path string, flags []cli.Flag) ([]string, error) {
	known := map[string]bool{}
	var listed []string
	for _, f := range flags {
		for _, n := range f.Names() {
			known[n] = true
		}
		if n := f.Names()[0]; n != "config" && n != "help" {
			listed = append(listed, n)
		}
	}
	for _, n := range []string{"config", "q", "help", "h"} {
		delete(known, n)
	}
	args, err := clilog.ConfigArgs(path, known, listed)
	if errors.Is(err, clilog.ErrUsage) {
		return nil, usageError{err}
	}
	return args, err
}
