package textio

import (
	"fmt"
	"strings"
)

// JoinAnd joins a list as English does: "a", "a and b", "a, b and c".
func JoinAnd(l []string) string {
	if len(l) < 2 {
		return strings.Join(l, "")
	}
	return strings.Join(l[:len(l)-1], ", ") + " and " + l[len(l)-1]
}

// Plural is word for one and word+"s" for any other count: "seed", "seeds".
func Plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// Count is n with its word: "1 epoch", "2 epochs".
func Count(n int, word string) string { return fmt.Sprintf("%d %s", n, Plural(n, word)) }

// Wrap breaks s at spaces into lines of at most width bytes where it can
// (a longer word keeps a line of its own), each line after the first
// starting with indent: a long message keeps its first line short and its
// detail on the indented lines below.
func Wrap(s string, width int, indent string) string {
	var b strings.Builder
	line := 0
	for i, w := range strings.Fields(s) {
		switch {
		case i == 0:
		case line+1+len(w) > width:
			b.WriteString("\n" + indent)
			line = len(indent)
		default:
			b.WriteByte(' ')
			line++
		}
		b.WriteString(w)
		line += len(w)
	}
	return b.String()
}
