package setting

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Ref is a setting that a message names, with the value it suggests for
// it, if any: "raise budget", "pass mean 0.5 and std 0.5". A message that
// asks for several settings holds one Ref each.
type Ref struct {
	// Name is the setting's name in kebab case ("max-epochs"): the command
	// line's flag and the experiment file's key are both spelled from it.
	Name string
	// Field, set instead of Name, names the setting by its path in a
	// library job ("Recipe.MaxEpochs"); each reader maps the path onto its
	// own spelling (the command through its table of flags).
	Field string
	// Value is the value the message suggests ("0.3", "retrain", or a
	// placeholder such as "N"); empty when the message only names the
	// setting.
	Value string
}

// Of returns the Ref that names setting name without a value.
func Of(name string) Ref { return Ref{Name: name} }

// Use returns the Ref that suggests value for setting name, formatted as
// %v formats it (a float64 0.1 is "0.1").
func Use(name string, value any) Ref { return Ref{Name: name, Value: fmt.Sprint(value)} }

// Field returns the Ref that names the field at path of a library job
// without a value.
func Field(path string) Ref { return Ref{Field: path} }

// FieldUse returns the Ref that gives value for the field at path, formatted
// as %v formats it.
func FieldUse(path string, value any) Ref { return Ref{Field: path, Value: fmt.Sprint(value)} }

// Key is r's name in kebab case: Name, or for a Field the kebab case of the
// path's last element ("Recipe.MaxEpochs" is "max-epochs", "LR" is "lr").
func (r Ref) Key() string {
	if r.Field == "" {
		return r.Name
	}
	last := r.Field[strings.LastIndexByte(r.Field, '.')+1:]
	var b strings.Builder
	for i, c := range last {
		upper := c >= 'A' && c <= 'Z'
		// A hyphen before an upper-case letter that starts a word: one after
		// a lower-case letter, or before a lower-case one (an acronym's end).
		if upper && i > 0 && (isLower(last[i-1]) || (i+1 < len(last) && isLower(last[i+1]) && !isLower(last[i-1]))) {
			b.WriteByte('-')
		}
		if upper {
			c += 'a' - 'A'
		}
		b.WriteRune(c)
	}
	return b.String()
}

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }

// Cmd is a command of the tool that a message names, with the settings it
// is given: "unlearn train --exclude FORGET --from-scratch" on the command
// line.
type Cmd struct {
	Name     string // the command ("train"); empty for the main command
	Settings []Ref
}

// Command returns the Cmd for command name given settings.
func Command(name string, settings ...Ref) Cmd { return Cmd{Name: name, Settings: settings} }

// Part is one piece of a message: prose (Text), a setting (Setting) or a
// command (Command); exactly one is set.
type Part struct {
	Text    string
	Setting *Ref
	Command *Cmd
}

// Message is prose that names settings and commands as values, so that
// each reader words them in its own terms (Terms): the command line as
// flags, the HTML report in words, an experiment file as its keys.
type Message []Part

// Msgf formats a Message as fmt.Sprintf formats a string, except that an
// argument that is a Ref, a Cmd, a Message or an *Error becomes parts of
// its own, whatever its verb (%s or %v): the settings stay values.
func Msgf(format string, args ...any) Message {
	s, parts := substitute(args)
	return split(fmt.Sprintf(format, s...), parts)
}

// substitute returns args with every Ref, Cmd, Message and *Error replaced
// by a marker ("\x00i\x00", which no other argument's text holds), and
// the parts each marker stands for.
func substitute(args []any) ([]any, map[string]Message) {
	parts := map[string]Message{}
	out := make([]any, len(args))
	for i, a := range args {
		var m Message
		switch x := a.(type) {
		case Ref:
			m = Message{{Setting: &x}}
		case Cmd:
			m = Message{{Command: &x}}
		case Message:
			m = x
		case Note:
			m = x.Message
		case *Error:
			m = x.message()
		default:
			out[i] = a
			continue
		}
		k := "\x00" + strconv.Itoa(i) + "\x00"
		parts[k], out[i] = m, k
	}
	return out, parts
}

// split cuts s at the markers of parts into a Message.
func split(s string, parts map[string]Message) Message {
	var m Message
	text := func(t string) {
		if t != "" {
			m = append(m, Part{Text: t})
		}
	}
	for len(parts) > 0 {
		i := strings.IndexByte(s, 0)
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i+1:], 0)
		if j < 0 {
			break
		}
		p, ok := parts[s[i:i+j+2]]
		if !ok { // a NUL of an argument's own text
			text(s[:i+1])
			s = s[i+1:]
			continue
		}
		text(s[:i])
		m = append(m, p...)
		s = s[i+j+2:]
	}
	text(s)
	return m
}

// errorf is fmt.Errorf for a Message: the Message of its text, and what
// it wraps: the error of its one %w, or, with several, fmt's error, whose
// Unwrap gives them all.
func errorf(format string, args ...any) (Message, error) {
	s, parts := substitute(args)
	err := fmt.Errorf(format, s...)
	wrapped := errors.Unwrap(err)
	if _, ok := err.(interface{ Unwrap() []error }); ok {
		wrapped = err
	}
	return split(err.Error(), parts), wrapped
}

// Render words m in t's terms.
func (m Message) Render(t Terms) string {
	var b strings.Builder
	for _, p := range m {
		switch {
		case p.Setting != nil:
			b.WriteString(t.Setting(*p.Setting))
		case p.Command != nil:
			b.WriteString(t.Command(*p.Command))
		default:
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// String is m in Plain terms.
func (m Message) String() string { return m.Render(Plain) }

// Settings returns the settings m names, in order, those given to the
// commands it names included.
func (m Message) Settings() []Ref {
	var out []Ref
	for _, p := range m {
		switch {
		case p.Setting != nil:
			out = append(out, *p.Setting)
		case p.Command != nil:
			out = append(out, p.Command.Settings...)
		}
	}
	return out
}

// Kind is what a Note is to its reader.
type Kind string

const (
	// KindNote reports what a run did or adjusted.
	KindNote Kind = "note"
	// KindWarning is about the run's own result; it reads "warning: …".
	KindWarning Kind = "warning"
	// KindAdvice suggests another way to run: a setting and its value
	// ("method retrain"), or a fix to the input ("mean and std").
	KindAdvice Kind = "advice"
)

// Note is a message to the user about a run: what it did, a warning about
// its result, or advice, naming the settings it refers to as Refs.
type Note struct {
	Kind Kind
	Message
}

// Notef returns the Note of kind whose message Msgf formats.
func Notef(kind Kind, format string, args ...any) Note {
	return Note{Kind: kind, Message: Msgf(format, args...)}
}

// Render words n in t's terms: a warning starts "warning: ".
func (n Note) Render(t Terms) string {
	if n.Kind == KindWarning {
		return "warning: " + n.Message.Render(t)
	}
	return n.Message.Render(t)
}

// String is n in Plain terms.
func (n Note) String() string { return n.Render(Plain) }

// Terms words the settings and commands a message names for one reader.
// The command line's terms (flags) are the command's own: the library
// words settings by name only.
type Terms interface {
	Setting(Ref) string
	Command(Cmd) string
}

// Plain names a setting by its name, followed by the value it suggests
// ("budget 0.3"), and a command by its name with its settings
// ("train exclude FORGET from-scratch"): how errors read to a Go caller.
var Plain Terms = plain{}

// Words names settings for a reader of the HTML report: the name with
// spaces for hyphens ("max epochs", "method retrain"), and a command as
// "the train command with exclude FORGET and from scratch".
var Words Terms = words{}

// Keys names a setting by its key in an experiment file ("batch_size 8").
var Keys Terms = keys{}

type plain struct{}

// A Field is named by its path, as a Go caller spells it.
func (plain) Setting(r Ref) string {
	if r.Field != "" {
		return withValue(r.Field, r.Value)
	}
	return withValue(r.Name, r.Value)
}

func (p plain) Command(c Cmd) string {
	parts := []string{c.Name}
	for _, r := range c.Settings {
		parts = append(parts, p.Setting(r))
	}
	return strings.TrimSpace(strings.Join(parts, " "))
}

type words struct{}

func (words) Setting(r Ref) string { return withValue(strings.ReplaceAll(r.Key(), "-", " "), r.Value) }

func (w words) Command(c Cmd) string {
	s := "the main command"
	if c.Name != "" {
		s = "the " + c.Name + " command"
	}
	for i, r := range c.Settings {
		switch {
		case i == 0:
			s += " with "
		case i == len(c.Settings)-1:
			s += " and "
		default:
			s += ", "
		}
		s += w.Setting(r)
	}
	return s
}

type keys struct{}

func (keys) Setting(r Ref) string { return withValue(AsKey(r.Key()), r.Value) }

func (keys) Command(c Cmd) string { return Plain.Command(c) }

func withValue(name, value string) string {
	if value == "" {
		return name
	}
	return name + " " + value
}
