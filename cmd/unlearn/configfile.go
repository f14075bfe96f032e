package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/unlearn-tool/unlearn/internal/fsread"
	"github.com/unlearn-tool/unlearn/internal/yamlerr"
)

// readConfigArgs reads a YAML mapping of flag names to values (at most 1 MB,
// a regular file) and returns them as --name=value arguments, sorted by
// name, lists joined with commas; an unknown key or a value no flag can
// take is a usage error. names are the flags the command takes,
// each with its aliases; listed are the names an error shows (the first
// name of each flag a config file may set).
func readConfigArgs(path string, names map[string]bool, listed []string) ([]string, error) {
	b, err := fsread.File(path, "config file", 1<<20)
	if err != nil { // missing, a FIFO, a device, over 1 MB: a wrong --config (exit 2)
		return nil, usageError{fmt.Errorf("--config: %w", err)}
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("--config %s: not a YAML mapping of flag names to values: %s",
			path, yamlerr.Message(err))
	}
	var args []string
	for _, k := range slices.Sorted(maps.Keys(doc)) {
		if !names[k] {
			listed = slices.Sorted(slices.Values(listed))
			return nil, usagef("--config %s: unknown key %s for this command (keys are its flag names: %s)",
				path, yamlerr.Key(k), strings.Join(listed, ", "))
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
