// Package settingfile reads a settings file: a YAML mapping of setting
// names to values (the command line's --config), each value as the text a
// setting takes, lists joined with commas. It checks the keys against the
// settings a command takes and names the config setting in its errors
// (internal/setting), which the command words as flags.
package settingfile

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/unlearn-tool/unlearn/internal/fsread"
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/internal/yamlerr"
)

// UsageError marks a refusal that is the user's mistake in naming the
// file or in its keys and values; a file that is not a YAML mapping is not
// one.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Value is one setting of the file.
type Value struct{ Name, Text string }

// Read reads the file at path (at most 1 MB, a regular file) and returns
// its values sorted by name. known says whether a name (or an alias) is a
// setting of the command; listed are the names an error about an unknown
// key shows.
func Read(path string, known func(string) bool, listed []string) ([]Value, error) {
	b, err := fsread.File(path, "config file", 1<<20)
	if err != nil { // missing, a FIFO, a device, over 1 MB
		return nil, UsageError{setting.Wrap("config", err)}
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, setting.Textf("%s: not a YAML mapping of flag names to values: %s",
			setting.Use("config", path), yamlerr.Message(err))
	}
	bad := func(format string, a ...any) error {
		return UsageError{setting.Textf("%s"+format, append([]any{setting.Use("config", path)}, a...)...)}
	}
	var vals []Value
	for _, k := range slices.Sorted(maps.Keys(doc)) {
		if !known(k) {
			return nil, bad(": unknown key %s for this command (keys are its flag names: %s)",
				yamlerr.Key(k), strings.Join(slices.Sorted(slices.Values(listed)), ", "))
		}
		var s string
		switch v := doc[k].(type) {
		case nil:
			return nil, bad(": key %q has no value", k)
		case []any:
			parts := make([]string, len(v))
			for i, e := range v {
				parts[i] = fmt.Sprint(e)
			}
			s = strings.Join(parts, ",")
		case map[string]any:
			return nil, bad(": key %q: a mapping is not a flag value", k)
		default:
			s = fmt.Sprint(v)
		}
		vals = append(vals, Value{k, s})
	}
	return vals, nil
}
