package main

import (
	"errors"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/cmd/unlearn/flagtext"
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// row is one line of a command's table of settings: a flag, with its
// default and help, bound to the field of the library's job it sets, named
// by its path there ("Recipe.MaxEpochs"; "" for the command's own flags).
// From the table come the flag definitions (flagsOf), the fields that
// record whether a flag was given (given), and the flag that an error
// naming a field shows (terms).
type row struct {
	flag  cli.Flag
	field string
	// mark, when set, records whether the flag was given (an Opt's Set) or
	// sets the field from the flag (a negated flag).
	mark func(given bool)
	// negated: the flag sets the field to its negation (--proxies=false
	// sets Recipe.NoProxies).
	negated bool
}

// field is the row of flag name, bound to dst, the field at path, with
// default def and help usage.
func field[T any](name, path string, dst *T, def T, usage string) row {
	return row{flag: newFlag(name, dst, def, usage), field: path}
}

// optional is the row of an Opt field: the flag sets its value, and Set
// says whether it was given.
func optional[T any](name, path string, dst *unlearn.Opt[T], def T, usage string) row {
	r := field(name, path, &dst.V, def, usage)
	r.mark = func(given bool) { dst.Set = given }
	return r
}

// negated is the row of a flag that defaults to true and sets the bool
// field at path to its negation.
func negated(name, path string, dst *bool, usage string) row {
	v := new(bool)
	r := field(name, path, v, true, usage)
	r.mark, r.negated = func(bool) { *dst = !*v }, true
	return r
}

// cmdTable is a command's rows; a command's options embed it (tabled).
type cmdTable struct{ rows []row }

func (t *cmdTable) tableRows() []row { return t.rows }

// shared are the rows of flags defined elsewhere (shared by several
// commands), each bound to the field at paths[its name] (none if absent).
func shared(paths map[string]string, flags ...cli.Flag) []row {
	rows := make([]row, len(flags))
	for i, f := range flags {
		rows[i] = withPath(paths[f.Names()[0]], f)
	}
	return rows
}

// required marks r's flag, a string flag, as one the command needs.
func required(r row) row {
	r.flag.(*cli.StringFlag).Required = true
	return r
}

// withPath is the row of a flag defined elsewhere (shared by several
// commands), bound to the field at path.
func withPath(path string, f cli.Flag) row { return row{flag: f, field: path} }

// newFlag defines flag name of dst's type.
func newFlag[T any](name string, dst *T, def T, usage string) cli.Flag {
	switch d := any(dst).(type) {
	case *string:
		return &cli.StringFlag{Name: name, Destination: d, Value: any(def).(string), Usage: usage}
	case *float64:
		return &cli.Float64Flag{Name: name, Destination: d, Value: any(def).(float64), Usage: usage}
	case *int:
		return &cli.IntFlag{Name: name, Destination: d, Value: any(def).(int), Usage: usage}
	case *uint64:
		return &cli.Uint64Flag{Name: name, Destination: d, Value: any(def).(uint64), Usage: usage}
	case *bool:
		return &cli.BoolFlag{Name: name, Destination: d, Value: any(def).(bool), Usage: usage}
	}
	panic("cmd/unlearn: no flag type for " + name) // a table's mistake, met by every test
}

// flagsOf is the table's flags, in order.
func flagsOf(rows []row) []cli.Flag {
	out := make([]cli.Flag, len(rows))
	for i, r := range rows {
		out[i] = r.flag
	}
	return out
}

// given records, for each row that tracks it, whether its flag was given.
func given(c *cli.Context, rows []row) {
	for _, r := range rows {
		if r.mark != nil {
			r.mark(c.IsSet(r.flag.Names()[0]))
		}
	}
}

// asUsage marks err, a bad setting, as a usage error.
func asUsage(err error) error {
	if err == nil {
		return nil
	}
	return usageError{err}
}

// inTable marks an error of a command whose table words the field paths
// it names (action adds it).
type inTable struct {
	error
	rows []row
}

func (e inTable) Unwrap() error { return e.error }

// tableTerms words the settings that library messages name as flags: by
// name (flagtext), or a field path as the flag of its row in rows, the
// running command's table.
type tableTerms struct{ rows []row }

// terms are the command line's terms outside a command's table: library
// notes name settings by name.
var terms setting.Terms = tableTerms{}

func (t tableTerms) Setting(ref setting.Ref) string {
	i := slices.IndexFunc(t.rows, func(r row) bool { return r.field == ref.Field })
	if ref.Field == "" || i < 0 {
		return flagtext.Terms.Setting(ref)
	}
	r := t.rows[i]
	name := r.flag.Names()[0]
	if r.negated && ref.Value == "true" {
		return flagtext.Flag(name) + "=false"
	}
	if r.negated {
		return flagtext.Flag(name)
	}
	return flagtext.Terms.Setting(setting.Ref{Name: name, Value: ref.Value})
}

func (tableTerms) Command(c setting.Cmd) string { return flagtext.Terms.Command(c) }

// render is err's message with its settings as flags, a field path as the
// flag of the command's table that err met (inTable).
func render(err error) string {
	var t inTable
	errors.As(err, &t)
	return setting.Render(err, tableTerms{t.rows})
}
