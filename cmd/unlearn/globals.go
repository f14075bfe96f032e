package main

import "strings"

// globals are the options for unattended use that every command takes
// anywhere on its command line: --config FILE, --log-format text|json and
// --quiet (-q). A config file may also give log-format and quiet; the
// command line wins.
type globals struct {
	Config      string // the --config file; "" without one
	Format      string // "text" unless --log-format gave another value
	FormatGiven bool   // --log-format was on the command line
	Quiet       bool
	QuietGiven  bool // --quiet was on the command line
}

// splitGlobals takes the global options out of args (args[0] is the
// program) and returns the rest in order. keepConfig leaves --config in
// args, for a command whose own flag it is. A --config or --log-format at
// the end without its value is a usage error.
func splitGlobals(args []string, keepConfig bool) ([]string, globals, error) {
	g := globals{Format: "text"}
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if i == 0 || !strings.HasPrefix(a, "-") || a == "-" || a == "--" || (name == "config" && keepConfig) {
			out = append(out, a)
			continue
		}
		switch name {
		case "config", "log-format":
			if !hasVal {
				if i+1 >= len(args) {
					return nil, g, usagef("--%s needs a value", name)
				}
				i++
				val = args[i]
			}
			if name == "config" {
				g.Config = val
			} else {
				g.Format, g.FormatGiven = val, true
			}
		case "quiet", "q":
			g.Quiet, g.QuietGiven = !hasVal || val == "true" || val == "1", true
		default:
			out = append(out, a)
		}
	}
	return out, g, nil
}

// fromConfig takes log-format and quiet out of a config file's arguments
// (configArgs' --name=value), applying them unless the command line gave
// them, and returns the other arguments.
func (g *globals) fromConfig(args []string) []string {
	var kept []string
	for _, a := range args {
		name, val, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		switch name {
		case "log-format":
			if !g.FormatGiven {
				g.Format = val
			}
		case "quiet":
			if !g.QuietGiven {
				g.Quiet = val == "true" || val == "1"
			}
		default:
			kept = append(kept, a)
		}
	}
	return kept
}
