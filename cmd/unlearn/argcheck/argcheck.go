// Package argcheck checks a command line as typed, before urfave/cli
// parses it, for what parsing loses: a single-valued flag given twice,
// of which the parser silently keeps the last.
package argcheck

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// Repeated returns an error naming both values when the command line args
// (args[0] the program; a command's name, when args[1] is one of
// commands, selects its flags instead of app's) gives a single-valued
// flag twice with different values (`--results a --results b`). Flags
// that take a list may repeat; the scan stops at "--". The arguments a
// --config file adds are not in args: the command line overrides them on
// purpose.
func Repeated(flags []cli.Flag, commands []*cli.Command, args []string) error {
	rest := args[min(1, len(args)):]
	if len(rest) > 0 {
		for _, cmd := range commands {
			if cmd.Name == rest[0] {
				flags, rest = cmd.Flags, rest[1:]
				break
			}
		}
	}
	byName := map[string]cli.Flag{}
	for _, f := range flags {
		for _, n := range f.Names() {
			byName[n] = f
		}
	}
	type given struct{ as, value string }
	seen := map[cli.Flag]given{}
	for i := 0; i < len(rest) && rest[i] != "--"; i++ {
		if !strings.HasPrefix(rest[i], "-") {
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(rest[i], "-"), "=")
		f, ok := byName[name]
		if !ok || isList(f) {
			continue
		}
		if !hasValue {
			if _, isBool := f.(*cli.BoolFlag); isBool {
				value = "true"
			} else if i+1 < len(rest) {
				i++
				value = rest[i]
			}
		}
		if prev, ok := seen[f]; ok && prev.value != value {
			return fmt.Errorf("--%s is given twice, as %s %s and --%s %s: give it once (the parser would keep the last)",
				f.Names()[0], prev.as, prev.value, name, value)
		}
		seen[f] = given{"--" + name, value}
	}
	return nil
}

// isList reports whether f takes a list, given by repeating it.
func isList(f cli.Flag) bool {
	switch f.(type) {
	case *cli.StringSliceFlag, *cli.IntSliceFlag, *cli.Int64SliceFlag, *cli.Float64SliceFlag,
		*cli.UintSliceFlag, *cli.Uint64SliceFlag:
		return true
	}
	return false
}
