package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// helpFlagLine is a flag's line in --help: the flag column (names and
// placeholders) up to the gap before its usage text.
var helpFlagLine = regexp.MustCompile(`^\s+(-{1,2}[^\s,].*?)(?:\s{2,}|$)`)

// TestHelpPlaceholders runs --help for the main command and every
// subcommand and fails on a flag whose placeholder has a space: urfave/cli
// turns the first back-quoted text of a Usage string into the placeholder,
// so "(e.g. `unlearn train --exclude`)" printed "--oracle unlearn train
// --exclude".
func TestHelpPlaceholders(t *testing.T) {
	cmds := [][]string{{"--help"}}
	var walk func(prefix []string, cs []*cli.Command)
	walk = func(prefix []string, cs []*cli.Command) {
		for _, c := range cs {
			path := append(append([]string(nil), prefix...), c.Name)
			cmds = append(cmds, append(append([]string(nil), path...), "--help"))
			walk(path, c.Subcommands)
		}
	}
	walk(nil, newApp().Commands)
	for _, args := range cmds {
		r := runCLI(t, args...)
		if r.code != 0 {
			t.Fatalf("unlearn %s: exit code %d; stderr: %s", strings.Join(args, " "), r.code, r.stderr)
		}
		flags, options := 0, false
		for _, line := range strings.Split(r.stdout, "\n") {
			// Flags are listed under "OPTIONS:" (and "GLOBAL OPTIONS:");
			// the description above may start a line with "--".
			if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(line, " ") {
				options = strings.HasSuffix(t, "OPTIONS:")
				continue
			}
			m := helpFlagLine.FindStringSubmatch(line)
			if !options || m == nil {
				continue
			}
			if m == nil {
				continue
			}
			flags++
			// "--name PLACEHOLDER, -n PLACEHOLDER": each alias is a
			// name and at most one placeholder word.
			for _, alias := range strings.Split(m[1], ", ") {
				if f := strings.Fields(alias); len(f) > 2 {
					t.Errorf("unlearn %s: flag %s has the placeholder %q (back-quoted text in its Usage?)",
						strings.Join(args, " "), f[0], strings.Join(f[1:], " "))
				}
			}
		}
		if flags == 0 {
			t.Errorf("unlearn %s: no flag lines found in the help text:\n%s", strings.Join(args, " "), r.stdout)
		}
	}
}

// TestHelpOwnDefaults checks every command's flags as --help prints them: a
// usage that states its own default ("(default 0.9, ...)") must not get the
// formatter's "(default: 0)" after it, and the others keep theirs.
func TestHelpOwnDefaults(t *testing.T) {
	own, other := 0, 0
	var walk func(name string, flags []cli.Flag, cs []*cli.Command)
	walk = func(name string, flags []cli.Flag, cs []*cli.Command) {
		for _, f := range flags {
			df, ok := f.(cli.DocGenerationFlag)
			if !ok || !df.TakesValue() {
				continue
			}
			line, appended := cli.FlagStringer(f), " (default: "+df.GetDefaultText()+")"
			if strings.Contains(df.GetUsage(), "(default") {
				own++
				if strings.HasSuffix(line, appended) {
					t.Errorf("%s --%s: the usage states its default, and the help adds %q: %s", name, df.Names()[0], appended, line)
				}
			} else if df.GetDefaultText() != "" {
				other++
				if !strings.HasSuffix(line, appended) {
					t.Errorf("%s --%s: the help dropped the default %q: %s", name, df.Names()[0], appended, line)
				}
			}
		}
		for _, c := range cs {
			walk(name+" "+c.Name, c.Flags, c.Subcommands)
		}
	}
	app := newApp()
	walk("unlearn", app.Flags, app.Commands)
	if own < 5 || other < 5 {
		t.Fatalf("checked %d flags that state their own default and %d that do not; want at least 5 of each", own, other)
	}
}
