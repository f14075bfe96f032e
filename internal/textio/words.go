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
