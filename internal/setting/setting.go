// Package setting lets the library name a bad setting without naming how
// the user gave it: as a flag on the command line (--epoch-fraction), or
// as a key in an experiment file (epoch_fraction). The library returns an
// *Error; Render gives the message in the command line's terms, or, for an
// error marked InFile (the experiment runner marks its steps' errors), in
// the file's.
package setting

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Error is a bad setting. Its message is Name followed by Msg (" 0.01 of
// the …", or ": …"), or Msg alone when Name is empty (Textf); Msg may name
// other settings as {name} ("pass {no-mia} for accuracy only"). Flag marks a setting that is a flag of
// every command that meets it, the experiment command too (device).
type Error struct {
	Name string
	Msg  string
	Flag bool
	Err  error // wrapped, when the message ends with another error's
}

// Errorf returns the *Error for setting name with Msg formatted.
func Errorf(name, format string, a ...any) error {
	return &Error{Name: name, Msg: fmt.Sprintf(format, a...)}
}

// Wrap returns the *Error "name: err", which wraps err. The settings err
// names as an *Error stay settings in the message.
func Wrap(name string, err error) error {
	msg := err.Error()
	if e, ok := err.(*Error); ok {
		msg = e.template()
	}
	return &Error{Name: name, Msg: ": " + msg, Err: err}
}

// Textf returns an *Error whose message is format's alone, naming the
// settings it mentions as {name} ("…; or pass {allow-chance}"). A leading
// %w in format is wrapped, so errors.Is sees the sentinel.
func Textf(format string, a ...any) error {
	err := fmt.Errorf(format, a...)
	return &Error{Msg: err.Error(), Err: errors.Unwrap(err)}
}

// FlagTextf is Textf for a message whose settings are always flags
// (Error.Flag): --ort-lib, --device, --shards.
func FlagTextf(format string, a ...any) error {
	e := Textf(format, a...).(*Error)
	e.Flag = true
	return e
}

// FlagErrorf is Errorf for a setting that is always a flag (Error.Flag).
func FlagErrorf(name, format string, a ...any) error {
	return &Error{Name: name, Msg: fmt.Sprintf(format, a...), Flag: true}
}

// Error names the settings plainly (name).
func (e *Error) Error() string { return e.render(func(n string) string { return n }) }

func (e *Error) Unwrap() error { return e.Err }

func (e *Error) render(name func(string) string) string {
	msg := placeholder.ReplaceAllStringFunc(e.Msg, func(p string) string { return name(p[1 : len(p)-1]) })
	if e.Name == "" {
		return msg
	}
	return name(e.Name) + msg
}

// template is e's message with every setting as {name}.
func (e *Error) template() string {
	if e.Name == "" {
		return e.Msg
	}
	return "{" + e.Name + "}" + e.Msg
}

// placeholder is a setting named inside a message: {batch-size}.
var placeholder = regexp.MustCompile(`\{[a-z][a-z0-9-]*\}`)

// AsFlag is a setting's name on the command line.
func AsFlag(name string) string { return "--" + name }

// AsKey is a setting's key in an experiment file.
func AsKey(name string) string { return strings.ReplaceAll(name, "-", "_") }

type inFile struct{ error }

func (f inFile) Unwrap() error { return f.error }

// InFile marks err as met while running an experiment file: Render names
// its settings as the file's keys.
func InFile(err error) error {
	if err == nil {
		return nil
	}
	return inFile{err}
}

// Render returns err's message with every setting it names in the
// command line's terms (--name), or the file's (name_with_underscores)
// when err is marked InFile; a Flag setting stays a flag.
func Render(err error) string {
	msg := err.Error()
	var f inFile
	file := errors.As(err, &f)
	for _, e := range all(err) {
		name := AsFlag
		if file && !e.Flag {
			name = AsKey
		}
		msg = strings.Replace(msg, e.Error(), e.render(name), 1)
	}
	return msg
}

// all returns the *Errors in err's tree, outermost first.
func all(err error) []*Error {
	var out []*Error
	var walk func(error)
	walk = func(err error) {
		for err != nil {
			if e, ok := err.(*Error); ok {
				out = append(out, e)
			}
			if m, ok := err.(interface{ Unwrap() []error }); ok {
				for _, x := range m.Unwrap() {
					walk(x)
				}
				return
			}
			err = errors.Unwrap(err)
		}
	}
	walk(err)
	return out
}
