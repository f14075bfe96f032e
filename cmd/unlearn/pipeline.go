package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"
	"gopkg.in/yaml.v3"

	"github.com/unlearn-tool/unlearn/internal/fsread"
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

// logger writes status, progress, results and errors to stderr, as text or
// as JSON lines ({"time", "level", "event", ...}).
type logger struct {
	mu    sync.Mutex
	w     io.Writer
	json  bool
	quiet bool
}

var logs = &logger{w: os.Stderr}

func (l *logger) emit(level, event string, fields []any) {
	m := map[string]any{"time": time.Now().UTC().Format(time.RFC3339Nano), "level": level, "event": event}
	for i := 0; i+1 < len(fields); i += 2 {
		m[fmt.Sprint(fields[i])] = fields[i+1]
	}
	b, err := json.Marshal(m)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"level": level, "event": event, "msg": fmt.Sprint(fields...)})
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.Write(append(b, '\n'))
}

// info reports a step: text as a line, or an event with fields (pairs of
// key, value) and the text as "msg".
func (l *logger) info(event, text string, fields ...any) {
	if l.quiet {
		return
	}
	if l.json {
		l.emit("info", event, append([]any{"msg", text}, fields...))
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintln(l.w, text)
}

// result reports a command's outcome as a JSON event (text output has its
// tables on stdout instead). --quiet does not silence it.
func (l *logger) result(event string, fields ...any) {
	if l.json {
		l.emit("info", event, fields)
	}
}

// fail reports the error that ends the run.
func (l *logger) fail(msg string, code int) {
	if l.json {
		l.emit("error", "error", []any{"msg", msg, "exit_code", code})
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "unlearn: error: %s\n", msg)
}

// tableBesideJSON is where a table goes when stdout carries JSON: stderr,
// unless stderr carries JSON lines too (--log-format json), where a table
// would break the stream; the table is then left out, since the JSON on
// stdout holds the same numbers.
func tableBesideJSON(c *cli.Context) io.Writer {
	if logs.json {
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
			logs.quiet = !hasVal || val == "true" || val == "1"
			quietGiven = true
		default:
			out = append(out, a)
		}
	}
	setFormat := func() error {
		switch format {
		case "text":
		case "json":
			logs.json = true
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
				logs.quiet = val == "true" || val == "1"
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

// configArgs reads a YAML mapping of flag names to values and returns them
// as --name=value arguments (lists joined with commas).
func configArgs(path string, flags []cli.Flag) ([]string, error) {
	b, err := fsread.File(path, "config file", 1<<20)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("--config %s: not a YAML mapping of flag names to values: %v", path, strings.ReplaceAll(err.Error(), "\n", " "))
	}
	known := map[string]bool{}
	var names []string
	for _, f := range flags {
		for _, n := range f.Names() {
			known[n] = true
		}
		names = append(names, f.Names()[0])
	}
	// A config file cannot name another config file or ask for help;
	// log-format and quiet are taken (globalArgs applies them).
	names = slices.DeleteFunc(names, func(n string) bool { return n == "config" || n == "help" })
	for _, n := range []string{"config", "q", "help", "h"} {
		delete(known, n)
	}
	keys := make([]string, 0, len(doc))
	for k := range doc {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var args []string
	for _, k := range keys {
		if !known[k] {
			sort.Strings(names)
			return nil, usagef("--config %s: unknown key %q for this command (keys are its flag names: %s)", path, k, strings.Join(names, ", "))
		}
		var s string
		switch v := doc[k].(type) {
		case nil:
			return nil, usagef("--config %s: key %q has no value", path, k)
		case []any:
			parts := make([]string, len(v))
			for i, e := range v {
				parts[i] = fmt.Sprint(e)
			}
			s = strings.Join(parts, ",")
		case map[string]any:
			return nil, usagef("--config %s: key %q: a mapping is not a flag value", path, k)
		default:
			s = fmt.Sprint(v)
		}
		args = append(args, "--"+k+"="+s)
	}
	return args, nil
}
