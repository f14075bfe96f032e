// Package flagtext is the command line's terms for the settings the
// library names (internal/setting): a setting is its flag ("--budget 0.3"),
// a command its invocation ("unlearn train --exclude FORGET"). It is the
// one place that spells a flag from a setting's name; the library's
// messages hold settings as values and cmd/unlearn renders them here.
// Library tests that check a message as the command prints it use it too.
package flagtext

import (
	"strings"

	"github.com/unlearn-tool/unlearn/internal/setting"
)

// Terms renders settings as flags.
var Terms setting.Terms = terms{}

type terms struct{}

// Setting is "--name" or "--name value"; a setting named by a field path
// is spelled from the path's last element (setting.Ref.Key), which the
// command's tables override where a flag is named otherwise.
func (terms) Setting(r setting.Ref) string {
	if r.Value == "" {
		return Flag(r.Key())
	}
	return Flag(r.Key()) + " " + r.Value
}

// Command is "unlearn NAME --flag value …".
func (t terms) Command(c setting.Cmd) string {
	parts := []string{"unlearn"}
	if c.Name != "" {
		parts = append(parts, c.Name)
	}
	for _, r := range c.Settings {
		parts = append(parts, t.Setting(r))
	}
	return strings.Join(parts, " ")
}

// Flag is setting name's flag.
func Flag(name string) string { return "--" + name }

// Render is setting.Render in the command line's terms.
func Render(err error) string { return setting.Render(err, Terms) }

// Note is n as the command prints it and metrics.json records it.
func Note(n setting.Note) string { return n.Render(Terms) }
