// Package setting lets the library name a setting without naming how the
// user gives it: as a flag on the command line (--epoch-fraction), as a key
// in an experiment file (epoch_fraction), or in words in the HTML report.
// Errors (*Error), notes and advice (Note) are Messages whose settings are
// values (Ref, Cmd); each reader renders them in its terms (Terms). The
// library holds no flag text: the command supplies the Terms that spell
// flags, and Render gives an error's message in them or, for an error
// marked InFile (the experiment runner marks its steps' errors), in the
// file's keys.
package setting

import (
	"errors"
	"strings"
)

// Error is a bad setting. Its message is the setting Name followed by Msg
// (" 0.01 of the …", or ": …"), or Msg alone when Name is empty (Textf);
// Msg may name other settings as Refs ("pass no-mia for accuracy only").
// Flag marks a setting that is a flag of every command that meets it, the
// experiment command too (device).
type Error struct {
	Name string
	// Field, set instead of Name, is the path of the field at fault in a
	// library job ("Recipe.MaxEpochs"), which a job's Validate names: the
	// caller maps it onto its own spelling (a flag, a key).
	Field string
	Msg   Message
	Flag  bool
	Err   error // wrapped, when the message ends with another error's
}

// Errorf returns the *Error for setting name with Msg formatted by Msgf.
func Errorf(name, format string, a ...any) error {
	return &Error{Name: name, Msg: Msgf(format, a...)}
}

// FieldErrorf returns the *Error for the field at path of a library job,
// with Msg formatted by Msgf: FieldErrorf("Recipe.MaxEpochs", " %d: must be
// ≥ 0", -2) reads "Recipe.MaxEpochs -2: must be ≥ 0" to a Go caller and
// "--max-epochs -2: must be ≥ 0" on the command line.
func FieldErrorf(path, format string, a ...any) error {
	return &Error{Field: path, Msg: Msgf(format, a...)}
}

// FieldWrap returns the *Error "path: err" for the field at path, which
// wraps err.
func FieldWrap(path string, err error) error {
	return &Error{Field: path, Msg: Msgf(": %s", asMessage(err)), Err: err}
}

// AsField returns err, when it is an *Error for a setting by name, as the
// *Error for the field at path of a library job with the same message (a
// job's Validate naming its field for an error of a function that names
// the setting); any other err as it is.
func AsField(err error, path string) error {
	if e, ok := err.(*Error); ok && e.Name != "" {
		f := *e
		f.Name, f.Field = "", path
		return &f
	}
	return err
}

// Wrap returns the *Error "name: err", which wraps err. The settings err
// names as an *Error stay settings in the message.
func Wrap(name string, err error) error {
	return &Error{Name: name, Msg: Msgf(": %s", asMessage(err)), Err: err}
}

// asMessage is err's message, with its settings when err is an *Error.
func asMessage(err error) any {
	if e, ok := err.(*Error); ok {
		return e
	}
	return err.Error()
}

// Textf returns an *Error whose message is format's alone, formatted by
// Msgf, naming the settings it mentions as Refs ("…; or pass %s",
// Of("allow-chance")). A %w in format is wrapped, so errors.Is sees the
// sentinel.
func Textf(format string, a ...any) error {
	msg, wrapped := errorf(format, a...)
	return &Error{Msg: msg, Err: wrapped}
}

// FlagTextf is Textf for a message whose settings are always flags
// (Error.Flag): device, ort-lib, shards.
func FlagTextf(format string, a ...any) error {
	e := Textf(format, a...).(*Error)
	e.Flag = true
	return e
}

// FlagErrorf is Errorf for a setting that is always a flag (Error.Flag).
func FlagErrorf(name, format string, a ...any) error {
	return &Error{Name: name, Msg: Msgf(format, a...), Flag: true}
}

// Error names the settings plainly (Plain).
func (e *Error) Error() string { return e.message().Render(Plain) }

func (e *Error) Unwrap() error { return e.Err }

// message is e's whole message, its Name as a setting.
func (e *Error) message() Message {
	if e.Name == "" && e.Field == "" {
		return e.Msg
	}
	return append(Message{{Setting: &Ref{Name: e.Name, Field: e.Field}}}, e.Msg...)
}

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

// Render returns err's message with every setting it names in flags'
// terms (the command line's, which the command supplies), or the file's
// (Keys) when err is marked InFile; a Flag setting stays a flag.
func Render(err error, flags Terms) string {
	msg := err.Error()
	var f inFile
	file := errors.As(err, &f)
	for _, e := range all(err) {
		t := flags
		if file && !e.Flag {
			t = inFileTerms{flags}
		}
		msg = strings.Replace(msg, e.Error(), e.message().Render(t), 1)
	}
	return msg
}

// inFileTerms words settings as an experiment file's keys, and commands,
// which are the command line's, in flags.
type inFileTerms struct{ flags Terms }

func (t inFileTerms) Setting(r Ref) string { return Keys.Setting(r) }
func (t inFileTerms) Command(c Cmd) string { return t.flags.Command(c) }

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
