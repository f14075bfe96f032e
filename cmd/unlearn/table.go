package main

import (
	"sync"

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

// fieldRows are the rows of every table by field path, which terms words
// as their flags.
var fieldRows = sync.OnceValue(func() map[string]row {
	m := map[string]row{}
	for _, r := range (&methodOpts{}).table() {
		if r.field != "" {
			m[r.field] = r
		}
	}
	return m
})

// terms words the settings that library messages name as the command's
// flags: a setting named by its field path as the flag of its row.
var terms setting.Terms = tableTerms{}

type tableTerms struct{}

func (tableTerms) Setting(ref setting.Ref) string {
	r, ok := fieldRows()[ref.Field]
	if ref.Field == "" || !ok {
		return flagtext.Terms.Setting(ref)
	}
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

// render is err's message with its settings as flags.
func render(err error) string { return setting.Render(err, terms) }
