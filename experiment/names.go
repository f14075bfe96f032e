package experiment

import (
	"fmt"
	"strings"
)

// maxNameLen bounds the names of forget sets and methods: they become
// parts of file and folder names, which most file systems cap at 255
// bytes.
const maxNameLen = 100

// FileName is name as one element of a file or folder name: lower-case
// ASCII letters and digits, every other run of characters as one '-', no
// '-' at either end. It holds no path separator and is never "." or "..",
// so a name joined to a folder stays inside it. Every name from a config
// or a record that becomes part of a path goes through it.
func FileName(name string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(name) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// checkForgetSetName refuses a forget set name that is not its own
// FileName: the name is used as is in file and folder names
// (runs/forget-<name>-seed<s>.txt, score/<name>-seed<s>/, the plots).
func checkForgetSetName(i int, name string) error {
	if name != "" && name == FileName(name) && len(name) <= maxNameLen {
		return nil
	}
	hint := ""
	if s := FileName(name); s != "" && len(s) <= maxNameLen {
		hint = fmt.Sprintf(" (e.g. %q)", s)
	}
	return fmt.Errorf("%w: forget_sets[%d]: name %q: a forget set's name is part of file and folder names under out; "+
		"use 1 to %d lower-case letters, digits and single '-'%s",
		ErrConfig, i, clip(name), maxNameLen, hint)
}

// checkMethodName refuses a method name without a letter or digit (its
// FileName, which names the row's score folders, would be empty) or
// longer than maxNameLen.
func checkMethodName(i int, name string) error {
	if FileName(name) != "" && len(name) <= maxNameLen {
		return nil
	}
	return fmt.Errorf("%w: methods[%d]: name %q: a method's name needs a letter or digit and at most %d bytes (it names "+
		"the row's folders under out)",
		ErrConfig, i, clip(name), maxNameLen)
}

// clip shortens s for a message.
func clip(s string) string {
	if len(s) > 2*maxNameLen {
		return s[:2*maxNameLen] + "…"
	}
	return s
}
