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
	var f inFile
	return render(err, flags, errors.As(err, &f), "")
}

// render is Render for the errors below a job's field prefix (Under).
func render(err error, flags Terms, file bool, prefix string) string {
	msg := err.Error()
	for _, x := range all(err) {
		t := flags
		if file && !x.e.Flag {
			t = inFileTerms{flags}
		}
		// As err's text holds it (with the prefixes of the Under calls
		// inside err), and as t words it under prefix too.
		was := x.e.messageUnder(x.prefix).Render(Plain)
		msg = strings.Replace(msg, was, x.e.messageUnder(prefix+x.prefix).Render(t), 1)
	}
	return msg
}

type under struct {
	prefix string
	err    error
}

// Under returns err with the field paths its *Errors name re-rooted under
// prefix, a field of the caller's job that holds the job whose error err
// is: scoring.Job reports its Oracle's "Epochs" as "Oracle.Epochs".
func Under(prefix string, err error) error {
	if err == nil {
		return nil
	}
	return under{prefix + ".", err}
}

func (u under) Error() string { return render(u.err, Plain, false, u.prefix) }

func (u under) Unwrap() error { return u.err }

// messageUnder is e's message with its field paths under prefix.
func (e *Error) messageUnder(prefix string) Message {
	m := e.message()
	if prefix == "" {
		return m
	}
	out := make(Message, len(m))
	for i, p := range m {
		if p.Setting != nil && p.Setting.Field != "" {
			r := *p.Setting
			r.Field = prefix + r.Field
			p.Setting = &r
		}
		out[i] = p
	}
	return out
}

// inFileTerms words settings as an experiment file's keys, and commands,
// which are the command line's, in flags.
type inFileTerms struct{ flags Terms }

func (t inFileTerms) Setting(r Ref) string { return Keys.Setting(r) }
func (t inFileTerms) Command(c Cmd) string { return t.flags.Command(c) }

// named is an *Error in an error's tree, with the prefix of the Under
// calls above it.
type named struct {
	e      *Error
	prefix string
}

// all returns the *Errors in err's tree, outermost first.
func all(err error) []named {
	var out []named
	var walk func(error, string)
	walk = func(err error, prefix string) {
		for err != nil {
			switch x := err.(type) {
			case *Error:
				out = append(out, named{x, prefix})
			case under:
				prefix += x.prefix
			}
			if m, ok := err.(interface{ Unwrap() []error }); ok {
				for _, x := range m.Unwrap() {
					walk(x, prefix)
				}
				return
			}
			err = errors.Unwrap(err)
		}
	}
	walk(err, "")
	return out
}
