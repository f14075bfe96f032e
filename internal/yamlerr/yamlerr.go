// Package yamlerr turns the errors of decoding a YAML file
// (gopkg.in/yaml.v3) into one line that names the lines at fault and what
// was expected there, without quoting the file: a file that is not what
// the command expected (`--config /etc/shadow`) must not reach the
// terminal or a log through its error. Only a key that looks like a key
// name (Key) is quoted.
package yamlerr

import (
	"errors"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Message returns err, from decoding a YAML file, as one line: each
// problem as "line N: what was given, what was expected", joined with
// "; ". Values are never quoted; unknown keys only as Key quotes them.
func Message(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		parts := make([]string, 0, len(te.Errors))
		for _, e := range te.Errors {
			parts = append(parts, entry(e))
		}
		return strings.Join(parts, "; ")
	}
	m := syntaxRE.FindStringSubmatch(err.Error())
	if m == nil {
		return "not valid YAML"
	}
	// The parser's own words ("did not find expected ',' or ']'") quote
	// only YAML's syntax characters; anything with a backquote or a
	// longer text is not passed on.
	if len(m[2]) > 80 || strings.ContainsAny(m[2], "`\"") {
		return "line " + m[1] + ": not valid YAML"
	}
	return "line " + m[1] + ": not valid YAML (" + m[2] + ")"
}

var (
	syntaxRE  = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
	lineRE    = regexp.MustCompile(`^line (\d+): (.*)$`)
	unknownRE = regexp.MustCompile(`^field (.*) not found in type \S+$`)
	typeRE    = regexp.MustCompile("^cannot unmarshal (!!\\w+)(?: `.*`)? into (\\S+)$")
	keyRE     = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,39}$`)
)

// entry rewrites one of a yaml.TypeError's lines.
func entry(e string) string {
	m := lineRE.FindStringSubmatch(e)
	if m == nil {
		return "a value of the wrong kind"
	}
	at := "line " + m[1] + ": "
	if k := unknownRE.FindStringSubmatch(m[2]); k != nil {
		return at + "unknown key " + Key(k[1])
	}
	if t := typeRE.FindStringSubmatch(m[2]); t != nil {
		return at + given(t[1]) + " where " + expected(t[2]) + " was expected"
	}
	return at + "a value of the wrong kind"
}

// Key quotes a key that looks like a key name (letters, digits, _ and -,
// at most 40); any other is "(not a key name)", so that a line of a file
// that is no config is not printed as a key.
func Key(k string) string {
	if keyRE.MatchString(k) {
		return strconv.Quote(k)
	}
	return "(not a key name)"
}

// given names the kind of a YAML node by its tag.
func given(tag string) string {
	switch tag {
	case "!!str":
		return "text"
	case "!!int":
		return "an integer"
	case "!!float":
		return "a number"
	case "!!bool":
		return "true or false"
	case "!!seq":
		return "a list"
	case "!!map":
		return "a mapping"
	case "!!null":
		return "no value"
	}
	return "a value"
}

// expected names a Go type in words.
func expected(t string) string {
	if rest, ok := strings.CutPrefix(t, "[]"); ok {
		return "a list of " + plural(expected(rest))
	}
	if strings.HasPrefix(t, "map[") {
		return "a mapping"
	}
	switch strings.TrimPrefix(t, "*") {
	case "string":
		return "text"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	case "bool":
		return "true or false"
	}
	return "a mapping" // a struct: a section of the file
}

func plural(s string) string {
	switch s {
	case "text":
		return "texts"
	case "true or false":
		return "true or false values"
	}
	s = strings.TrimPrefix(strings.TrimPrefix(s, "an "), "a ")
	if strings.HasPrefix(s, "list of ") {
		return "lists of " + strings.TrimPrefix(s, "list of ")
	}
	return s + "s"
}
